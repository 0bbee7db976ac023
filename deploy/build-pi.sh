#!/usr/bin/env bash
# Builds gyrogate for a Raspberry Pi (aarch64 Linux): the shipped release build of
# deploy/release-build.sh (Swift runtime linked in statically, unused sections dropped,
# symbols stripped). It needs at run time
# only the Pi's libc, libsqlite3-0, libmosquitto1 and tzdata; install it with
#   sudo bash deploy/install.sh --binary PATH
#
# Usage: bash deploy/build-pi.sh [--output PATH] [--no-deps] [--scratch-path DIR]
#            run ON the Pi (64-bit Raspberry Pi OS / Debian arm64 with Swift 6.3 installed):
#            installs libsqlite3-dev and libmosquitto-dev with apt-get (sudo when not root),
#            then builds natively
#        bash deploy/build-pi.sh --cross SDK_NAME [--output PATH] [--scratch-path DIR]
#            cross-builds on another machine (x86_64) with an installed Swift SDK for
#            aarch64-unknown-linux-gnu (`swift sdk list` names them; `swift sdk install BUNDLE`
#            installs one). The SDK's sysroot must hold arm64 libsqlite3-dev and libmosquitto-dev.
#        bash deploy/build-pi.sh --host [...]
#            builds the same way for this machine's own architecture (to try the script here)
#
#   --output PATH       copy the binary there (default: leave it in the build folder)
#   --no-deps           do not apt-get install anything
#   --scratch-path DIR  swift build's build folder (default .build)
#
# Prints the binary's path, size, `file` output and the shared libraries it needs.
# docs/deployment.md ("Building for the Pi") says why CI cannot build arm64 here.
set -euo pipefail

me="deploy/build-pi.sh"
die() { echo "$me: error: $*" >&2; exit 1; }
note() { echo "== $*"; }
usage() { sed -n '/^# Usage:/,/^#   --scratch-path/p' "$0" | sed 's/^# \{0,1\}//'; }

sdk="" output="" deps=1 scratch="" host=0
while [ $# -gt 0 ]; do
    case "$1" in
        --cross) [ $# -ge 2 ] || die "--cross needs an SDK_NAME (see: swift sdk list)"; sdk=$2; shift 2 ;;
        --cross=*) sdk=${1#*=}; shift ;;
        --output) [ $# -ge 2 ] || die "--output needs a PATH"; output=$2; shift 2 ;;
        --output=*) output=${1#*=}; shift ;;
        --scratch-path) [ $# -ge 2 ] || die "--scratch-path needs a DIR"; scratch=$2; shift 2 ;;
        --scratch-path=*) scratch=${1#*=}; shift ;;
        --no-deps) deps=0; shift ;;
        --host) host=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ -z "$sdk" ] || [ "$host" = 0 ] || die "--cross and --host exclude each other"
# Relative paths are the caller's.
[ -z "$output" ] || case "$output" in /*) ;; *) output="$PWD/$output" ;; esac
[ -z "$scratch" ] || case "$scratch" in /*) ;; *) scratch="$PWD/$scratch" ;; esac
cd "$(dirname -- "$0")/.."

command -v swift >/dev/null || die "swift not found: install Swift 6.3 (swift.org's aarch64 toolchain for Debian 12 on the Pi)"
version=$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9][0-9.]*\).*/\1/p' | head -n1)
# 6.3: swift.org's toolchain, what CI tests with; 6.2.3: Debian's swiftlang, which makes the
# Debian package (deploy/package.sh).
case "$version" in
    6.3|6.3.*|6.2.[3-9]|6.2.[1-9][0-9]) ;;
    "") echo "$me: warning: could not read the Swift version; gyrogate needs Swift 6.3 or 6.2.3" >&2 ;;
    *) echo "$me: warning: Swift $version: gyrogate is built and tested with Swift 6.3 and 6.2.3" >&2 ;;
esac

build=(bash deploy/release-build.sh)
[ -z "$scratch" ] || build+=(--scratch-path "$scratch")

machine=$(uname -m)
if [ -n "$sdk" ]; then
    # The SDK must be installed; `swift sdk list` prints one identifier a line.
    sdks=$(swift sdk list 2>&1) || die "swift sdk list failed: $sdks"
    if ! printf '%s\n' "$sdks" | grep -qxF -- "$sdk"; then
        die "no Swift SDK named '$sdk' is installed. \`swift sdk list\` says:
$(printf '%s\n' "$sdks" | sed 's/^/    /')
Install an SDK bundle for aarch64-unknown-linux-gnu with \`swift sdk install BUNDLE\` (built for
Swift $version, its sysroot holding arm64 libsqlite3-dev and libmosquitto-dev), or run this
script on the Pi without --cross."
    fi
    build+=(--swift-sdk "$sdk")
    note "cross-building with the Swift SDK $sdk (on $machine)"
else
    if [ "$machine" != aarch64 ] && [ "$host" = 0 ]; then
        die "this machine is $machine, not aarch64: run this script on the Pi, or cross-build with
--cross SDK_NAME (an installed Swift SDK for aarch64; \`swift sdk list\` shows none or some),
or pass --host to build for $machine anyway"
    fi
    [ "$machine" = aarch64 ] || note "building for this machine ($machine), not for a Pi (--host)"
    if [ "$deps" = 1 ]; then
        missing=()
        for package in libsqlite3-dev libmosquitto-dev file; do
            dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
        done
        if [ ${#missing[@]} -gt 0 ]; then
            as_root=()
            [ "$(id -u)" = 0 ] || as_root=(sudo)
            note "apt-get install ${missing[*]}"
            "${as_root[@]}" apt-get update -qq || die "apt-get update failed"
            DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
                || die "apt-get could not install ${missing[*]}"
        fi
    fi
fi

note "${build[*]}"
"${build[@]}" || die "swift build failed (above)"
bin_dir=$("${build[@]}" --show-bin-path) || die "swift build --show-bin-path failed"
binary="$bin_dir/gyrogate"
[ -x "$binary" ] || die "the build left no binary at $binary"
if [ -n "$output" ]; then
    mkdir -p -- "$(dirname -- "$output")"
    cp -f -- "$binary" "$output"
    binary=$output
fi

echo "binary: $binary"
echo "size:   $(stat -c %s -- "$binary") bytes ($(du -h -- "$binary" | cut -f1))"
if command -v file >/dev/null; then
    echo "file:   $(file -b -- "$binary")"
else
    echo "file:   (the file command is not installed)"
fi
if command -v readelf >/dev/null; then
    echo "needs:  $(readelf -d -- "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
fi
echo "install it: sudo bash deploy/install.sh --binary $binary"
