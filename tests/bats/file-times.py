#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sets file times in DIR every way a program can, and prints one line
per way: "NAME ok ATIME_DELTA MTIME_DELTA", the file's times minus the
program's own realtime (time.time()) at the call, in seconds, or
"NAME errno N" for a call that failed. Raw syscalls by number (x86-64),
so that libc's choice of call does not hide one:

  utimensat-null   utimensat(AT_FDCWD, path, NULL, 0)     (os.utime(path))
  futimens-null    utimensat(fd, NULL, NULL, 0)           (os.utime(fd))
  utimensat-now    {UTIME_NOW, UTIME_NOW}
  utimensat-a-now  {UTIME_NOW, UTIME_OMIT}: atime only (touch -a)
  utimensat-expl   {1000 s, 2000 s}: explicit times stay as given
  utimes-null      utimes(path, NULL)
  futimesat-null   futimesat(AT_FDCWD, path, NULL)
  utime-null       utime(path, NULL)                      (seconds)
  bad-pointer      utimensat(.., times = 1, ..): EFAULT
  bad-nsec         {0, 2e9}: EINVAL
  bad-path         a path that does not exist: ENOENT
  bad-fd           utimensat(-7, NULL, NULL, 0): EBADF
"""
import ctypes
import os
import sys
import time

SYS_utime, SYS_utimes, SYS_futimesat, SYS_utimensat = 132, 235, 261, 280
AT_FDCWD = -100
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def sys_call(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return 0 if r == 0 else ctypes.get_errno()


def main():
    d = sys.argv[1]
    path = os.path.join(d, "f")
    bpath = path.encode()
    with open(path, "w"):
        pass
    fd = os.open(path, os.O_RDONLY)
    both_now = (Timespec * 2)(Timespec(0, UTIME_NOW), Timespec(0, UTIME_NOW))
    a_now = (Timespec * 2)(Timespec(0, UTIME_NOW), Timespec(0, UTIME_OMIT))
    expl = (Timespec * 2)(Timespec(1000, 0), Timespec(2000, 0))
    bad_nsec = (Timespec * 2)(Timespec(0, 0), Timespec(0, 2 * 10**9))
    ways = [
        ("utimensat-null", lambda: sys_call(SYS_utimensat, AT_FDCWD, bpath, None, 0)),
        ("futimens-null", lambda: sys_call(SYS_utimensat, fd, None, None, 0)),
        ("utimensat-now", lambda: sys_call(SYS_utimensat, AT_FDCWD, bpath, both_now, 0)),
        ("utimensat-a-now", lambda: sys_call(SYS_utimensat, AT_FDCWD, bpath, a_now, 0)),
        ("utimensat-expl", lambda: sys_call(SYS_utimensat, AT_FDCWD, bpath, expl, 0)),
        ("utimes-null", lambda: sys_call(SYS_utimes, bpath, None)),
        ("futimesat-null", lambda: sys_call(SYS_futimesat, AT_FDCWD, bpath, None)),
        ("utime-null", lambda: sys_call(SYS_utime, bpath, None)),
        ("bad-pointer", lambda: sys_call(SYS_utimensat, AT_FDCWD, bpath, 1, 0)),
        ("bad-nsec", lambda: sys_call(SYS_utimensat, AT_FDCWD, bpath, bad_nsec, 0)),
        ("bad-path", lambda: sys_call(SYS_utimensat, AT_FDCWD, bpath + b".none", None, 0)),
        ("bad-fd", lambda: sys_call(SYS_utimensat, -7, None, None, 0)),
    ]
    for name, call in ways:
        # Old times first, so that a call that set nothing shows.
        os.utime(path, ns=(10**9, 10**9))
        now = time.time()
        err = call()
        if err:
            print(f"{name} errno {err}")
            continue
        st = os.stat(path)
        print(f"{name} ok {st.st_atime - now:.3f} {st.st_mtime - now:.3f}")
    os.close(fd)


main()
