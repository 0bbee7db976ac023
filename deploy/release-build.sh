#!/usr/bin/env bash
# The shipped build of gyrogate: release, the Swift runtime linked in statically, one section per
# function, unused sections dropped, symbols stripped. install.sh and build-pi.sh build through this script; so does the benchmark
# (docs/benchmarks.md).
#
# Usage: bash deploy/release-build.sh [--symbols] [SWIFT BUILD ARGUMENTS...]
#   --symbols     keep the symbol table (profiles, perf)
#   Other arguments go to `swift build` as they are: --scratch-path DIR, --swift-sdk NAME,
#   --show-bin-path, ...
#
# Why each flag (docs/benchmarks.md, "Memory", has the figures):
# - -function-sections and --gc-sections (lld): code that nothing calls is dropped. The code is
#   not laid out by a profile: that bought about 5.5 MB of peak RSS, all of it clean file-backed
#   text pages that the kernel drops under memory pressure, at the price of a generated linker
#   script that every rename broke (docs/benchmarks.md, "Memory").
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
symbols=0
args=()
for argument in "$@"; do
    case "$argument" in
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
