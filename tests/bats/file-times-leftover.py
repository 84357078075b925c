#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a timensd killed in the middle of a file-times "now" leaves behind:
a call whose times pointer was rewritten to explicit times (the
namespace's now) in a slot of the process's wait page, a private
read-only mapping of a memfd named "timens-wait" whose first 16 bytes are
its magic, and never let run. The successor must run it as the "now" it
was (a non-owner may set "now", not explicit times).

  file-times-leftover.py PATH HOW AGE

HOW: utimensat ({t, t}, was NULL), utimensat-a ({t, UTIME_OMIT}, was
touch -a), utimes (timevals, was NULL), plain (the same {t, t} in the
program's own memory: its own explicit times). AGE: seconds before the
program's time.time() the times say. Prints "ok ATIME_DELTA MTIME_DELTA"
(the file's times minus time.time() after the call) or "errno N".
"""
import ctypes
import os
import struct
import sys
import time

SYS_utimes, SYS_utimensat = 235, 280
AT_FDCWD = -100
UTIME_OMIT = (1 << 30) - 2
PROT_READ, MAP_PRIVATE = 1, 2
PAGE = 16 * 4096  # lib/supervisor/supervisor-internal.h, TNS_WAIT_PAGE_SIZE
SLOT = 5 * 32

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]


def main():
    path, how, age = sys.argv[1], sys.argv[2], float(sys.argv[3])
    t = time.time_ns() - int(age * 1e9)
    s, ns = divmod(t, 1_000_000_000)
    if how == "utimensat":
        times = struct.pack("qqqq", s, ns, s, ns)
    elif how == "utimensat-a":
        times = struct.pack("qqqq", s, ns, 0, UTIME_OMIT)
    elif how == "utimes":
        times = struct.pack("qqqq", s, ns // 1000, s, ns // 1000)
    elif how == "plain":
        times = struct.pack("qqqq", s, ns, s, ns)
    else:
        sys.exit(f"unknown HOW {how}")
    if how == "plain":
        buf = ctypes.create_string_buffer(times, 64)
        addr = (ctypes.addressof(buf) + 31) // 32 * 32
        ctypes.memmove(addr, times, 32)
    else:
        fd = os.memfd_create("timens-wait", os.MFD_CLOEXEC)
        os.ftruncate(fd, PAGE)
        os.pwrite(fd, b"timens-wait-pg1\0", 0)
        os.pwrite(fd, times, SLOT)
        base = libc.mmap(None, PAGE, PROT_READ, MAP_PRIVATE, fd, 0)
        if base in (None, ctypes.c_void_p(-1).value):
            sys.exit("mmap failed")
        os.close(fd)
        addr = base + SLOT
    st0 = os.stat(path)
    if how == "utimes":
        r = libc.syscall(ctypes.c_long(SYS_utimes), ctypes.c_char_p(path.encode()), ctypes.c_void_p(addr))
    else:
        r = libc.syscall(ctypes.c_long(SYS_utimensat), ctypes.c_long(AT_FDCWD), ctypes.c_char_p(path.encode()),
                         ctypes.c_void_p(addr), ctypes.c_long(0))
    if r != 0:
        print(f"errno {ctypes.get_errno()}")
        return
    now = time.time()
    st = os.stat(path)
    m = st.st_mtime - now if st.st_mtime_ns != st0.st_mtime_ns else "kept"
    print(f"ok {st.st_atime - now:.3f} {m if isinstance(m, str) else f'{m:.3f}'}")


main()
