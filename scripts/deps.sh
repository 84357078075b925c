#!/bin/bash
# Installs the Debian packages timens needs to build and test, if missing.
#   scripts/deps.sh [--check] [GROUP...]   GROUP: build demo test lint (default: build test)
# demo is what tests/demo.sh runs besides timensctl (make demo: build demo).
# With --check, only reports what is missing (exit 1 if anything is).
set -euo pipefail

declare -A groups=(
        [build]="gcc make pkg-config libseccomp-dev libsystemd-dev libjson-c-dev clang bpftool libbpf-dev libnl-3-dev"
        [demo]="python3 util-linux"
        [test]="bats python3 util-linux clang libclang-rt-14-dev strace gdb golang-go musl-tools libfaketime runc crun podman busybox-static docker.io containerd"
        [lint]="clang-format shellcheck cppcheck"
)

check_only=0
if [ "${1:-}" = --check ]; then check_only=1; shift; fi
[ $# -gt 0 ] || set -- build test

want=()
for g in "$@"; do
        [ -n "${groups[$g]+x}" ] || { echo "deps.sh: unknown group '$g' (build, demo, test, lint)" >&2; exit 2; }
        read -r -a pk <<<"${groups[$g]}"
        want+=("${pk[@]}")
done

missing=()
for p in "${want[@]}"; do
        st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        [ "$st" = "install ok installed" ] || missing+=("$p")
done

[ ${#missing[@]} -eq 0 ] && exit 0
if [ $check_only = 1 ]; then echo "missing: ${missing[*]}"; exit 1; fi
if [ "$(id -u)" != 0 ]; then
        echo "deps.sh: missing Debian packages: ${missing[*]}; run 'make deps' as root (apt-get install)" >&2
        exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
