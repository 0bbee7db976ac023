#!/usr/bin/env bash
# Runs the libFuzzer targets of Tests/Fuzz (building them first with build.sh).
#
#   Tests/Fuzz/run.sh                    brief CI run: 20000 executions per target
#   Tests/Fuzz/run.sh --runs 2000000     long run: millions of executions per target
#   Tests/Fuzz/run.sh --seconds 60 h4    one target for a minute
#   Tests/Fuzz/run.sh --no-build ...     use the binaries already in $GYROGATE_FUZZ_BUILD/bin
#
# Each target starts from a fresh copy of its committed corpus (Tests/Fuzz/Corpus/<target>, never
# modified) in $BUILD/work/<target>; inputs that crash or break a property are saved in
# $BUILD/artifacts/<target>/ (reproduce: $BUILD/bin/fuzz-<target> <file>). Prints per target the
# executions and the outcome, then "N passed, N failed"; exits 1 if any target failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
FUZZ="$ROOT/Tests/Fuzz"
BUILD="${GYROGATE_FUZZ_BUILD:-$ROOT/.build-fuzz}"
ALL_TARGETS=(h4 acl att metawear config zoneinfo admin)

limit=(-runs=20000)
build=1
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) limit=(-runs="$2"); shift 2 ;;
        --seconds) limit=(-max_total_time="$2"); shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
[ ${#targets[@]} -eq 0 ] && targets=("${ALL_TARGETS[@]}")

if [ $build -eq 1 ]; then
    "$FUZZ/build.sh" "${targets[@]}" || { echo "run.sh: build failed"; echo "0 passed, ${#targets[@]} failed"; exit 1; }
fi

# Swift's backtracer would attach to a crashing fuzzer and can hang it; libFuzzer and ASan
# report crashes themselves. Leak checking is off: the Swift runtime's caches are not leaks.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:handle_abort=1:symbolize=1}"

max_len() {
    case "$1" in
        h4) echo 4096 ;;    # x8 repeats: enough for the framer to compact its buffer
        admin) echo 20480 ;; # past the production 16 KiB head limit
        *) echo 4096 ;;
    esac
}

passed=0
failed=0
for target in "${targets[@]}"; do
    binary="$BUILD/bin/fuzz-$target"
    work="$BUILD/work/$target"
    artifacts="$BUILD/artifacts/$target"
    log="$BUILD/logs/$target.log"
    rm -rf "$work"
    mkdir -p "$work" "$artifacts" "$(dirname "$log")"
    if [ ! -x "$binary" ]; then
        printf '%-9s not built (%s)\n' "$target" "$binary"
        failed=$((failed + 1))
        continue
    fi
    cp "$FUZZ/Corpus/$target/"* "$work/" 2>/dev/null
    before=$(ls "$artifacts" | wc -l)
    start=$(date +%s)
    "$binary" "${limit[@]}" -max_len="$(max_len "$target")" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "$work" < /dev/null > "$log" 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [ -z "$execs" ] && execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    coverage=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
    after=$(ls "$artifacts" | wc -l)
    if [ $status -eq 0 ] && [ "$after" -eq "$before" ]; then
        printf '%-9s %9s execs %5ss  %-10s corpus %4s  ok\n' "$target" "${execs:-?}" "$seconds" "$coverage" "$(ls "$work" | wc -l)"
        passed=$((passed + 1))
    else
        artifact=$(ls -t "$artifacts" | head -1)
        printf '%-9s %9s execs %5ss  %-10s CRASHED (exit %s): %s\n' "$target" "${execs:-?}" "$seconds" "$coverage" "$status" \
            "${artifact:+$artifacts/$artifact}"
        grep -m 3 -E 'FUZZ PROPERTY FAILED|Fatal error|ERROR: (AddressSanitizer|libFuzzer)' "$log" | sed 's/^/          /' | cut -c1-300
        echo "          log: $log"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
