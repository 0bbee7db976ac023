#!/usr/bin/env bash
# The shipped build of gyrogate: release, the Swift runtime linked in statically, one section per
# function, the code that runs laid out first by deploy/gyrogate.ld, unused sections dropped,
# symbols stripped. install.sh and build-pi.sh build through this script; so does the benchmark
# (docs/benchmarks.md).
#
# Usage: bash deploy/release-build.sh [--unordered] [--symbols] [SWIFT BUILD ARGUMENTS...]
#   --unordered   link without deploy/gyrogate.ld (deploy/order-file.py profiles such a build)
#   --symbols     keep the symbol table (profiles, perf)
#   Other arguments go to `swift build` as they are: --scratch-path DIR, --swift-sdk NAME,
#   --show-bin-path, ...
#
# Why each flag (docs/benchmarks.md, "Memory", has the figures):
# - -function-sections, lld and the linker script deploy/gyrogate.ld: the code a running gateway
#   executes is about 2 MB of the binary's 14 MB of text. Packed together, it is all the kernel
#   maps in; scattered, every page fault maps a neighbourhood (up to a whole page-cache folio)
#   of code that never runs.
# - -no-pie: a position-dependent executable needs no run-time relocation of the Swift
#   metadata (62,000 relative relocations, 1.5 MB read and the pages they touch written at
#   every start).
# - --no-export-dynamic: Swift's static-stdlib link exports every symbol of the program
#   (1.8 MB of dynamic symbol tables) for dlsym, which nothing here uses.
# - libstdc++ linked statically (native builds, and cross builds given the target's archive): the Swift runtime needs a few of its functions;
#   the shared library brought 1 MB of its own pages into every gateway's memory. A folder
#   holding only libstdc++.a, searched first, makes the runtime's `-lstdc++` find the archive.
set -euo pipefail

cd "$(dirname -- "$0")/.."
order=1 symbols=0
args=()
for argument in "$@"; do
    case "$argument" in
        --unordered) order=0 ;;
        --symbols) symbols=1 ;;
        *) args+=("$argument") ;;
    esac
done

flags=(
    -c release --static-swift-stdlib --product gyrogate
    -Xswiftc -Xfrontend -Xswiftc -function-sections
    -Xswiftc -use-ld=lld
    -Xswiftc -Xclang-linker -Xswiftc -no-pie
    -Xlinker --gc-sections
    -Xlinker --no-export-dynamic
)
if [ "$order" = 1 ]; then
    [ -f deploy/gyrogate.ld ] || { echo "deploy/release-build.sh: error: deploy/gyrogate.ld is missing" >&2; exit 1; }
    # Sections named there that this build lacks (code changed since the profile) match
    # nothing; new code only ends up outside the packed region.
    flags+=(-Xlinker -T -Xlinker "$PWD/deploy/gyrogate.ld")
fi
[ "$symbols" = 1 ] || flags+=(-Xlinker -s)

cross=0
for argument in ${args[@]+"${args[@]}"}; do
    case "$argument" in --swift-sdk|--swift-sdk=*) cross=1 ;; esac
done
# A cross build names the target's archive in GYROGATE_STATIC_LIBSTDCXX (deploy/package.sh
# does, from its sysroot); the host's gcc knows only its own.
static_cxx=""
if [ -n "${GYROGATE_STATIC_LIBSTDCXX:-}" ]; then
    archive=$GYROGATE_STATIC_LIBSTDCXX
    [ -f "$archive" ] || { echo "deploy/release-build.sh: error: GYROGATE_STATIC_LIBSTDCXX=$archive: no such file" >&2; exit 1; }
    cross=0
else
    archive=$(${CC:-gcc} -print-file-name=libstdc++.a 2>/dev/null || true)
fi
if [ "$cross" = 0 ] && [ -f "$archive" ]; then
    static_cxx=$(mktemp -d)
    ln -s "$archive" "$static_cxx/libstdc++.a"
    flags+=(-Xlinker "-L$static_cxx")
fi
status=0
swift build "${flags[@]}" ${args[@]+"${args[@]}"} || status=$?
[ -z "$static_cxx" ] || rm -rf -- "$static_cxx"
exit "$status"
