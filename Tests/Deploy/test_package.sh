#!/usr/bin/env bash
# Tests the Debian packages of deploy/package.sh: builds the amd64 and the arm64 package, checks
# their contents, Depends and conffiles and runs lintian on them; installs an older arm64
# package, then the new one over it, into a Debian trixie arm64 root (maintainer scripts under
# qemu-aarch64-static, Tests/Deploy/arm64-namespace.sh), runs the installed binary's
# check-config and doctor, streams from two emulated boards through it under qemu-user to a
# real mosquitto (every sample exactly once: Tests/Benchmarks/E2E/e2e_bench.py --check --exact),
# removes and purges it; then installs the amd64 package on this machine, runs the same stream
# check and systemd-analyze verify on its unit, and purges it.
#
# Usage: bash Tests/Deploy/test_package.sh [--cold]   (as root)
#   --cold   also when the arm64 toolchain is not cached yet (see below)
# The arm64 toolchain and roots are cached in $GYROGATE_PACKAGE_CACHE (default
# /var/cache/gyrogate-package). Making them from nothing downloads Debian's Swift for two
# architectures and builds from scratch (about 20 minutes; docs/benchmarks.md, "The Debian
# packages"); Tests/Deploy/arm64-prebuild.sh makes the package and the root at once, in the
# background beside the amd64 build, or waited for here when Tests/run-tests.sh started it early
# ($GYROGATE_ARM64_PREBUILD). Under CI=true the arm64 part always runs (from nothing when not
# cached) and anything that keeps it from running fails. Elsewhere, without that cache and
# without --cold (or GYROGATE_PACKAGE_COLD=1) the arm64 part is skipped, saying so, and the amd64
# part runs; missing root, mmdebstrap, qemu or a kernel without user-namespace binfmt_misc also
# skip, saying why.
# Last line: "N passed, N failed"; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
repo=$PWD
cold=${GYROGATE_PACKAGE_COLD:-0}
case "${1:-}" in
    --cold) cold=1 ;;
    "") ;;
    *) echo "usage: bash Tests/Deploy/test_package.sh [--cold]" >&2; exit 2 ;;
esac
cache=${GYROGATE_PACKAGE_CACHE:-/var/cache/gyrogate-package}
export GYROGATE_PACKAGE_CACHE=$cache

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | tail -n 40 | sed 's/^/    /'; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
skip() { echo "SKIP: $1"; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit; }
seconds_since() { echo $(( $(date +%s) - $1 )); }

if [ "$(id -u)" != 0 ]; then
    skip "the package tests need root (dpkg -i on this machine, chroots): run as root"
    finish
fi
for tool in dpkg-deb lintian readelf; do
    command -v "$tool" >/dev/null || { fail "$tool is missing (Tests/run-tests.sh installs it)"; finish; }
done

work=$(mktemp -d)
host_installed=0
cleanup() {
    [ "$host_installed" = 0 ] || dpkg --purge gyrogate >/dev/null 2>&1
    [ -z "$(jobs -p)" ] || kill $(jobs -p) 2>/dev/null
    rm -rf -- "$work"
}
trap cleanup EXIT
dist=$work/dist
python=$repo/.venv/bin/python

# deb_field DEB FIELD
deb_field() { dpkg-deb -f "$1" "$2"; }
# lintian_clean DEB: no error (E:) from lintian.
lintian_clean() {
    lintian --tag-display-limit 0 "$1" >"$work/lintian" 2>&1
    ! grep -q '^E: ' "$work/lintian"
}
# stream_check NAME GATEWAY: two emulated boards through GATEWAY to a real mosquitto, every
# sample exactly once.
stream_check() {
    local what=$1 gateway=$2 t0
    t0=$(date +%s)
    if "$python" Tests/Benchmarks/E2E/e2e_bench.py --sensors 2 --seconds "${GYROGATE_PACKAGE_STREAM_SECONDS:-20}" \
        --skip-reference --check --exact --startup-timeout 240 --gateway "$gateway" >"$work/stream" 2>&1; then
        pass "$what: two boards stream, every sample exactly once ($(seconds_since "$t0") s)"
    else
        fail "$what: stream check" "$(cat "$work/stream")"
    fi
    sed -n -e '/^ *samples\/s/p' -e '/^ *delivered/p' -e '/^ *CPU (%/p' -e '/^ *CPU-us per/p' -e '/^ *peak RSS/p' -e '/^ *idle RSS/p' -e '/^ *time to all/p' \
        -e '/^exact:/p' "$work/stream" | sed 's/^/    /'
}

# ---------------------------------------------------------------------------------------------
arm64=1
warm=0
[ -f "$cache/toolchain-sid/.gyrogate-recipe" ] && warm=1
# Under CI=true every part runs or fails: the arm64 package is made from nothing when not cached,
# and a missing tool fails it. Elsewhere a missing cache or tool skips it, saying so.
ci=0
[ "${CI:-}" = true ] && { ci=1; cold=1; }
# arm64_unavailable WHY: the arm64 part cannot run here; a failure under CI=true, else a skip.
arm64_unavailable() {
    if [ "$ci" = 1 ]; then fail "the arm64 package (CI=true, so it may not be skipped): $1"; else skip "the arm64 package: $1"; fi
    arm64=0
}
# Started by Tests/run-tests.sh in the background (deploy/package.sh --arch arm64 into
# $GYROGATE_ARM64_PREBUILD/dist, its status in .../rc): waited for here instead of building again.
prebuild=${GYROGATE_ARM64_PREBUILD:-}
[ -n "$prebuild" ] && [ -f "$prebuild/started" ] || prebuild=""
prebuild_external=0
[ -z "$prebuild" ] || prebuild_external=1
if [ "$warm" = 0 ] && [ "$cold" != 1 ] && [ -z "$prebuild" ]; then
    skip "the arm64 package: no cached toolchain in $cache (making it from nothing takes about 20 minutes: run bash Tests/Deploy/test_package.sh --cold once, or bash deploy/package.sh --arch arm64; CI=true makes it)"
    arm64=0
fi
for tool in mmdebstrap qemu-aarch64-static arch-test; do
    if [ "$arm64" = 1 ] && ! command -v "$tool" >/dev/null; then
        arm64_unavailable "$tool is missing (apt-get install mmdebstrap qemu-user-static arch-test)"
    fi
done
if [ "$arm64" = 1 ] && ! bash Tests/Deploy/arm64-namespace.sh true 2>"$work/ns"; then
    arm64_unavailable "$(cat "$work/ns")"
fi

root_tar=$cache/trixie-arm64-root.tar

# The arm64 build runs in the background beside the amd64 one (its downloads and dpkg runs
# overlap the amd64 compile), unless Tests/run-tests.sh started it already.
if [ "$arm64" = 1 ] && [ -z "$prebuild" ]; then
    prebuild=$work/arm64-build
    echo "== deploy/package.sh --arch arm64, in the background ($([ "$warm" = 1 ] && echo "cached toolchain" || echo "cold: making the toolchain"))"
    bash Tests/Deploy/arm64-prebuild.sh "$prebuild" >/dev/null 2>&1 &
fi

# Made already (or being made) in the background when Tests/run-tests.sh started its late
# builds (Tests/background-builds.sh, $GYROGATE_BACKGROUND_BUILDS): waited for, at normal priority.
background=${GYROGATE_BACKGROUND_BUILDS:-}
t0=$(date +%s)
if [ -n "$background" ] && [ -f "$background/pgid" ]; then
    echo "== deploy/package.sh --arch amd64: made in the background"
    renice -n 0 -g "$(cat "$background/pgid")" >/dev/null 2>&1 || true
    while [ ! -f "$background/amd64.rc" ] && [ $(( $(date +%s) - t0 )) -lt 3600 ]; do sleep 2; done
    renice -n 19 -g "$(cat "$background/pgid")" >/dev/null 2>&1 || true
    cp "$background/amd64.log" "$work/out" 2>/dev/null || : >"$work/out"
    if [ "$(cat "$background/amd64.rc" 2>/dev/null)" = 0 ] && mkdir -p "$dist" && cp "$background"/amd64/*.deb "$dist/" 2>>"$work/out"; then
        pass "amd64 package built in the background ($(seconds_since "$t0") s waited for)"
    else
        fail "amd64 package built in the background" "$(cat "$work/out")"
    fi
else
    echo "== deploy/package.sh --arch amd64"
    if bash deploy/package.sh --arch amd64 --output "$dist" >"$work/out" 2>&1; then
        pass "amd64 package built ($(seconds_since "$t0") s)"
    else
        fail "amd64 package built" "$(cat "$work/out")"
    fi
fi
grep -E '^(package|size|depends):' "$work/out" | sed 's/^/    /'

if [ "$arm64" = 1 ]; then
    echo "== deploy/package.sh --arch arm64: waiting for its background build"
    t0=$(date +%s)
    # From here on it is what the suite waits for: back to normal priority.
    [ "$prebuild_external" = 0 ] || [ ! -f "$prebuild/pgid" ] || renice -n 0 -g "$(cat "$prebuild/pgid")" >/dev/null 2>&1 || true
    while [ ! -f "$prebuild/rc" ] && [ $(( $(date +%s) - t0 )) -lt "${GYROGATE_ARM64_PREBUILD_WAIT:-3600}" ]; do sleep 5; done
    cp "$prebuild/log" "$work/out" 2>/dev/null || : >"$work/out"
    if [ "$(cat "$prebuild/rc" 2>/dev/null)" = 0 ] && mkdir -p "$dist" && cp "$prebuild"/dist/*.deb "$dist/" 2>>"$work/out"; then
        pass "arm64 package built ($(( $(date +%s) - $(cat "$prebuild/started") )) s since its start, $(seconds_since "$t0") s waited for)"
    elif [ ! -f "$prebuild/rc" ]; then
        fail "arm64 package built: the background build did not end within ${GYROGATE_ARM64_PREBUILD_WAIT:-3600} s" "$(cat "$work/out")"; arm64=0
    else
        fail "arm64 package built (exit $(cat "$prebuild/rc"))" "$(cat "$work/out")"; arm64=0
    fi
    grep -E '^(package|size|depends):|^== phase ' "$work/out" | sed 's/^/    /'
fi

echo "== package contents"
version=$(sed -n 's/^ *static let version = "\(.*\)"$/\1/p' Sources/gyrogate/Gyrogate.swift)
for arch in amd64 arm64; do
    deb=$dist/gyrogate_${version}_$arch.deb
    [ -f "$deb" ] || continue
    dpkg-deb -c "$deb" | awk '{print $6}' >"$work/files"
    for path in ./usr/bin/gyrogate ./usr/lib/systemd/system/gyrogate.service ./etc/gyrogate/config.json \
        ./usr/share/doc/gyrogate/copyright ./usr/share/doc/gyrogate/changelog.gz ./usr/share/doc/gyrogate/README.md \
        ./usr/share/doc/gyrogate/docs/deployment.md ./usr/share/doc/gyrogate/mosquitto/gyrogate.conf; do
        grep -qxF "$path" "$work/files" || fail "$arch: $path missing from the package"
    done
    check "$arch: conffiles is /etc/gyrogate/config.json" \
        test "$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)" = /etc/gyrogate/config.json
    check "$arch: Architecture $arch" test "$(deb_field "$deb" Architecture)" = "$arch"
    depends=$(deb_field "$deb" Depends)
    case "$arch" in
        # libgcc_s: the Swift runtime unwinds with it (libstdc++ is linked in statically).
        arm64) expected="libc6 (>= 2.38), libgcc-s1, libsqlite3-0, libmosquitto1, tzdata" ;;
        # This machine's toolchain: glibc as found; libgcc_s for the statically linked libstdc++.
        amd64) expected="$(grep -oE 'libc6 \(>= [0-9.]+\)' <<<"$depends"), libgcc-s1, libsqlite3-0, libmosquitto1, tzdata" ;;
    esac
    sorted() { tr ',' '\n' | sed 's/^ *//' | sort; }
    if [ "$(sorted <<<"$depends")" = "$(sorted <<<"$expected")" ]; then pass "$arch: Depends: $depends"
    else fail "$arch: Depends is '$depends', expected '$expected'"; fi
    if lintian_clean "$deb"; then pass "$arch: lintian reports no error ($(grep -c '^W: ' "$work/lintian") warnings)"
    else fail "$arch: lintian errors" "$(grep '^E: ' "$work/lintian")"; fi
done

# ---------------------------------------------------------------------------------------------
if [ "$arm64" = 1 ]; then
    echo "== arm64: install, upgrade, run, stream, remove, purge in a trixie arm64 root"
    new_deb=$dist/gyrogate_${version}_arm64.deb
    # An older package of the same binary, to upgrade over.
    dpkg-deb -x "$new_deb" "$work/extracted"
    bash deploy/package.sh --arch arm64 --binary "$work/extracted/usr/bin/gyrogate" --version 0.0.1 \
        --output "$work/old" >"$work/out" 2>&1 || fail "older arm64 package (0.0.1) built" "$(cat "$work/out")"
fi
if [ "$arm64" = 1 ] && [ ! -f "$root_tar" ]; then
    fail "trixie arm64 root made with mmdebstrap (Tests/Deploy/arm64-prebuild.sh)" "$(cat "$prebuild/log" 2>/dev/null)"
fi
if [ "$arm64" = 1 ] && [ -f "$root_tar" ]; then
    root=$work/arm64-root
    mkdir -p "$root" && tar -x -C "$root" --numeric-owner -f "$root_tar"
    cp "$work/old/gyrogate_0.0.1_arm64.deb" "$new_deb" "$root/tmp/"
    snapshot() {
        (cd "$root" && find . \( -path ./tmp -o -path ./var/lib/dpkg -o -path ./var/log -o -path ./var/cache \
            -o -name '*-' \) -prune -o -printf '%p %y %m %U:%G %l\n' | sort && md5sum etc/passwd etc/group etc/shadow etc/gshadow)
    }
    snapshot >"$work/before"
    # COMMAND in the root, with /proc (the Swift runtime reads it) and /dev, mounted in the
    # namespace only; bounded, as a crash under qemu-user may leave it hanging.
    in_root() {
        timeout 300 bash Tests/Deploy/arm64-namespace.sh sh -c \
            'mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && exec chroot "$0" "$@"' "$root" "$@"
    }
    if in_root dpkg -i /tmp/gyrogate_0.0.1_arm64.deb >"$work/out" 2>&1; then pass "arm64: dpkg -i of 0.0.1 (maintainer scripts under qemu)"
    else fail "arm64: dpkg -i of 0.0.1" "$(cat "$work/out")"; fi
    check "arm64: system user gyrogate created" grep -q '^gyrogate:x:[0-9]*:[0-9]*:.*:/var/lib/gyrogate:/usr/sbin/nologin$' "$root/etc/passwd"
    uid=$(awk -F: '$1 == "gyrogate" {print $3}' "$root/etc/passwd")
    gid=$(awk -F: '$1 == "gyrogate" {print $3}' "$root/etc/group")
    check "arm64: /var/lib/gyrogate 750 gyrogate:gyrogate" test "$(stat -c '%a %u:%g' "$root/var/lib/gyrogate")" = "750 $uid:$gid"
    check "arm64: /etc/gyrogate/config.json 640 root:gyrogate" test "$(stat -c '%a %u:%g' "$root/etc/gyrogate/config.json")" = "640 0:$gid"
    check "arm64: service enabled (multi-user.target.wants symlink)" \
        grep -qE "^(/usr)?/lib/systemd/system/gyrogate.service$" <(readlink "$root/etc/systemd/system/multi-user.target.wants/gyrogate.service")
    sed -i 's/"gatewayId": "[^"]*"/"gatewayId": "edited-by-operator"/' "$root/etc/gyrogate/config.json"
    echo store >"$root/var/lib/gyrogate/kept.txt"
    if in_root dpkg -i /tmp/"$(basename "$new_deb")" >"$work/out" 2>&1; then pass "arm64: upgrade to $version over 0.0.1"
    else fail "arm64: upgrade to $version" "$(cat "$work/out")"; fi
    check "arm64: installed version is $version" test "$(in_root dpkg-query -W -f='${Version}' gyrogate)" = "$version"
    check "arm64: the edited config survived the upgrade" grep -q '"gatewayId": "edited-by-operator"' "$root/etc/gyrogate/config.json"
    if in_root /usr/bin/gyrogate check-config /etc/gyrogate/config.json >"$work/out" 2>&1; then pass "arm64: installed gyrogate check-config passes"
    else fail "arm64: installed gyrogate check-config" "$(cat "$work/out")"; fi
    # doctor: the installed config names hci:0, and this kernel may have no Bluetooth; every
    # other check must pass, and a failing transport must be reported as such.
    in_root /usr/bin/gyrogate doctor --config /etc/gyrogate/config.json >"$work/doctor" 2>&1
    doctor_status=$?
    if grep -q FAIL "$work/doctor" && grep FAIL "$work/doctor" | grep -vqiE 'transport|bluetooth|hci|broker|mqtt'; then
        fail "arm64: installed gyrogate doctor: a check other than the radio and the broker failed" "$(cat "$work/doctor")"
    elif [ "$doctor_status" -gt 1 ] || ! [ -s "$work/doctor" ]; then
        fail "arm64: installed gyrogate doctor ran (exit $doctor_status)" "$(cat "$work/doctor")"
    else
        pass "arm64: installed gyrogate doctor ran (exit $doctor_status; failing only: $(grep FAIL "$work/doctor" | cut -c1-60 | tr '\n' ';'))"
    fi
    # The stream check runs the installed binary under qemu-user, its libraries from the root.
    printf '#!/bin/sh\nexec %s -L %s %s/usr/bin/gyrogate "$@"\n' "$(command -v qemu-aarch64-static)" "$root" "$root" >"$work/gyrogate-arm64"
    chmod +x "$work/gyrogate-arm64"
    stream_check "arm64 under qemu-user" "$work/gyrogate-arm64"

    if in_root dpkg -r gyrogate >"$work/out" 2>&1; then pass "arm64: dpkg -r"; else fail "arm64: dpkg -r" "$(cat "$work/out")"; fi
    check "arm64: remove took the binary and the unit" test ! -e "$root/usr/bin/gyrogate" -a ! -e "$root/usr/lib/systemd/system/gyrogate.service"
    check "arm64: remove kept the config and the store" test -f "$root/etc/gyrogate/config.json" -a -f "$root/var/lib/gyrogate/kept.txt"
    if in_root dpkg -P gyrogate >"$work/out" 2>&1; then pass "arm64: dpkg -P"; else fail "arm64: dpkg -P" "$(cat "$work/out")"; fi
    snapshot >"$work/after"
    if diff -u "$work/before" "$work/after" >"$work/diff"; then pass "arm64: after purge the root is as before the install (files, owners, users)"
    else fail "arm64: purge left changes" "$(cat "$work/diff")"; fi
fi

# ---------------------------------------------------------------------------------------------
echo "== amd64: installed on this machine"
amd64_deb=$dist/gyrogate_${version}_amd64.deb
if [ ! -f "$amd64_deb" ]; then
    skip "amd64 on this machine (no package was built)"
elif dpkg-query -W -f='${Status}' gyrogate 2>/dev/null | grep -q installed; then
    skip "amd64 on this machine: a gyrogate package is installed here already; not touching it"
elif ! command -v apt-get >/dev/null || [ "$(dpkg --print-architecture)" != amd64 ]; then
    skip "amd64 on this machine: not an amd64 Debian"
else
    host_installed=1
    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$amd64_deb" >"$work/out" 2>&1; then
        pass "amd64: apt-get install ./gyrogate_${version}_amd64.deb"
    else
        fail "amd64: apt-get install" "$(cat "$work/out")"
    fi
    check "amd64: installed gyrogate check-config passes" /usr/bin/gyrogate check-config /etc/gyrogate/config.json
    if command -v systemd-analyze >/dev/null; then
        if systemd-analyze verify /usr/lib/systemd/system/gyrogate.service >"$work/verify" 2>&1 && [ ! -s "$work/verify" ]; then
            pass "amd64: systemd-analyze verify gyrogate.service: no complaints"
        else
            fail "amd64: systemd-analyze verify gyrogate.service" "$(cat "$work/verify")"
        fi
    else
        skip "amd64: systemd-analyze verify (no systemd-analyze)"
    fi
    stream_check "amd64 installed" /usr/bin/gyrogate
    if dpkg --purge gyrogate >"$work/out" 2>&1; then pass "amd64: dpkg --purge"; else fail "amd64: dpkg --purge" "$(cat "$work/out")"; fi
    host_installed=0
    check "amd64: purge left no /etc/gyrogate, /var/lib/gyrogate, /usr/bin/gyrogate, user gyrogate" \
        test ! -e /etc/gyrogate -a ! -e /var/lib/gyrogate -a ! -e /usr/bin/gyrogate -a -z "$(getent passwd gyrogate)"
fi

finish
