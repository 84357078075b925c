#!/bin/bash
# make demo: real programs under shifted clocks, with no daemon set up:
# through the vDSO (date, python's time.time()) and through raw syscalls.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
T=$B/timensctl

# python3 reading the clocks through raw syscalls (ctypes), as any program
# does on the syscall path.
read -r -d '' PY <<'PYEOF' || true
import ctypes, datetime
libc = ctypes.CDLL(None, use_errno=True)
class TS(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
def clock(c):
    ts = TS()
    assert libc.syscall(228, c, ctypes.byref(ts)) == 0   # SYS_clock_gettime
    return ts.s + ts.ns / 1e9
real = clock(0)
print("  date      :", datetime.datetime.fromtimestamp(real, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))
print("  monotonic : %.3f s" % clock(1))
print("  boottime  : %.3f s" % clock(7))
PYEOF

echo "== date, on the host and under timensctl run --realtime +3650d (through the vDSO)"
date
"$T" run --realtime +3650d -- date
echo
echo "== python3 time.time() under timensctl run --realtime 2030-01-01T00:00:00Z"
"$T" run --realtime 2030-01-01T00:00:00Z -- python3 -c 'import time; print("  ", time.ctime())'
echo
echo "== the host, through raw syscalls"
python3 -c "$PY"
echo
echo "== timensctl run --realtime +3650d --monotonic 1d --boottime 2d -- python3"
"$T" run --realtime +3650d --monotonic 1d --boottime 2d -- python3 -c "$PY"
echo
echo "== timensctl run --realtime 2030-01-01T00:00:00Z -- python3"
"$T" run --realtime 2030-01-01T00:00:00Z -- python3 -c "$PY"
echo
if unshare -T --monotonic 86400 --boottime 172800 true 2>/dev/null; then
        echo "== the kernel's own time namespace: unshare -T --monotonic 86400 --boottime 172800 -- python3"
        unshare -T --monotonic 86400 --boottime 172800 python3 -c "$PY"
        echo "   (monotonic and boottime above match timensctl's; the kernel has no realtime offset)"
else
        echo "(this kernel has no time namespaces to compare with: unshare -T failed)"
fi
