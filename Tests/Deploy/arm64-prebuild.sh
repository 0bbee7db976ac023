#!/usr/bin/env bash
# Makes what the arm64 part of Tests/Deploy/test_package.sh needs, its two long steps at once:
# the arm64 package (deploy/package.sh --arch arm64, into DIR/dist; from nothing when the
# toolchain is not cached) and the trixie arm64 root it is installed into
# ($GYROGATE_PACKAGE_CACHE/trixie-arm64-root.tar, mmdebstrap --mode=chrootless minbase, when not
# cached). Started in the background: by Tests/run-tests.sh right after the
# system packages are installed (at the lowest CPU priority, so that it fills the suite's idle
# time), or by test_package.sh itself beside the amd64 build. test_package.sh waits for DIR/rc.
#
# Usage: bash Tests/Deploy/arm64-prebuild.sh DIR   (as root)
#   DIR/started  its start (seconds since the epoch)    DIR/pgid  its process group
#   DIR/log      the output of both steps, with "== phase NAME: N s" lines
#   DIR/rc       written at the end: 0 when both were made
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
dir=${1:?usage: bash Tests/Deploy/arm64-prebuild.sh DIR}
cache=${GYROGATE_PACKAGE_CACHE:-/var/cache/gyrogate-package}
export GYROGATE_PACKAGE_CACHE=$cache
mkdir -p -- "$dir" "$cache" || exit 2
rm -f -- "$dir/rc"
date +%s >"$dir/started"
ps -o pgid= $$ | tr -d ' ' >"$dir/pgid"

root_tar=$cache/trixie-arm64-root.tar
root_pid=""
if [ ! -f "$root_tar" ]; then
    (
        t0=$(date +%s)
        # chrootless: the packages' maintainer scripts run with this machine's dpkg and shell
        # (DPKG_ROOT), not under qemu: 18 s of CPU instead of about 9 minutes.
        if mmdebstrap --quiet --mode=chrootless --variant=minbase --architectures=arm64 \
            --include=libsqlite3-0,libmosquitto1,tzdata,init-system-helpers --format=tar trixie "$root_tar.tmp" \
            "${GYROGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"; then
            mv -- "$root_tar.tmp" "$root_tar"
            echo "== phase trixie arm64 root (mmdebstrap --mode=chrootless minbase): $(( $(date +%s) - t0 )) s"
        else
            rm -f -- "$root_tar.tmp"
            echo "== the trixie arm64 root: mmdebstrap failed (above)"
            exit 1
        fi
    ) >"$dir/root.log" 2>&1 &
    root_pid=$!
fi
t0=$(date +%s)
bash deploy/package.sh --arch arm64 --output "$dir/dist" >"$dir/package.log" 2>&1
status=$?
echo "== phase deploy/package.sh --arch arm64 in all: $(( $(date +%s) - t0 )) s (exit $status)" >>"$dir/package.log"
if [ -n "$root_pid" ]; then wait "$root_pid" || status=1; fi
cat -- "$dir/package.log" "$dir/root.log" >"$dir/log" 2>/dev/null
echo "$status" >"$dir/rc"
exit "$status"
