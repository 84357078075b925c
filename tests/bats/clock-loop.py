#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""One long-running process that reads a clock each time a clock name
arrives on stdin, and prints the value in nanoseconds: through the raw
syscall (clock_gettime, x86-64 number 228: never the vDSO) for
"realtime", "monotonic", "boottime"; through libc, i.e. the vDSO, for
"vdso-realtime" and "vdso-monotonic". The daemon tests change a
namespace's offsets while it runs and read them through it."""
import ctypes
import sys
import time

CLOCKS = {"realtime": 0, "monotonic": 1, "boottime": 7}


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


libc = ctypes.CDLL(None, use_errno=True)
for line in sys.stdin:
    name = line.strip()
    if name.startswith("vdso-"):
        print(time.clock_gettime_ns(CLOCKS[name[5:]]), flush=True)
        continue
    ts = Timespec()
    if libc.syscall(228, CLOCKS[name], ctypes.byref(ts)) != 0:
        print("error", ctypes.get_errno(), flush=True)
    else:
        print(ts.tv_sec * 1000000000 + ts.tv_nsec, flush=True)
