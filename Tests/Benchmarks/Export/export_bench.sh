#!/usr/bin/env bash
# The export's time and memory against session length (docs/benchmarks.md, "Export"): one
# closed session of MINUTES at 400 Hz per store, filled by store-filler through the capture
# engine, exported by the shipped build with /usr/bin/time -v. RSS must stay flat: within 2 MB
# of the 1-minute session's export.
#
#   bash Tests/Benchmarks/Export/export_bench.sh [MINUTES...]      # default: 1 120 240
set -euo pipefail
cd "$(dirname "$0")/../../.."
minutes=("$@"); [ $# -gt 0 ] || minutes=(1 120 240)
for build in "-c release --product gyrogate" "--product store-filler"; do
    # shellcheck disable=SC2086
    swift build $build 2>&1 | { grep -E "error|Build complete" || true; }
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "swift build $build failed" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/gyrogate-export-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '| session at 400 Hz | samples | store (MB) | format | output (MB) | wall (s) | CPU user+sys (s) | max RSS (MB) |\n|---|---|---|---|---|---|---|---|\n'
for m in "${minutes[@]}"; do
    dir="$work/store-$m"
    read -r _ id samples < <(.build/debug/store-filler "$dir" "$m" 400 | grep '^SESSION')
    store_mb=$(du -sm "$dir" | cut -f1)
    for format in csv influx; do
        /usr/bin/time -v -o "$work/time.txt" .build/release/gyrogate export --data-dir "$dir" --session "$id" \
            --format "$format" > "$work/out"
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time.txt")
        cpu=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {printf "%.2f", u + s}' "$work/time.txt")
        rss=$(awk -F': ' '/Maximum resident/ {printf "%.1f", $2 / 1024}' "$work/time.txt")
        out_mb=$(( $(stat -c %s "$work/out") / 1000000 ))
        echo "| $m min | $samples | $store_mb | $format | $out_mb | $wall | $cpu | $rss |"
    done
done
