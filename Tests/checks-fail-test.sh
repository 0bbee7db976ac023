#!/usr/bin/env bash
# The suite's checks that need a tool fail without it under CI=true, and skip (saying so, exit 0)
# outside CI: the live view's browser test without chromium, the VM without qemu and its other
# tools. Each is run here with a PATH that holds only bash and Python, so that what they look for
# is missing whatever this machine has installed. A few seconds; Tests/run-tests.sh runs it first.
#
# Usage: bash Tests/checks-fail-test.sh     (from anywhere; uses the repository's .venv)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
python=$PWD/.venv/bin/python
[ -x "$python" ] || { echo "no $python: create the venv first (Tests/run-tests.sh does)"; exit 2; }
bare=$(mktemp -d)
trap 'rm -rf "$bare"' EXIT
ln -s "$(command -v bash)" "$bare/bash"
ln -s "$python" "$bare/python3"
failures=0

# expect NAME WANTED_EXIT WANTED_LINE ENV... -- COMMAND...: runs COMMAND with the bare PATH and
# ENV, and checks its exit status and that a line of its output starts with WANTED_LINE.
expect() {
    local name=$1 wanted=$2 line=$3; shift 3
    local env=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done; shift
    local out status
    out=$(env -i HOME="$HOME" PATH="$bare" "${env[@]}" "$@" 2>&1); status=$?
    if [ "$status" = "$wanted" ] && grep -q "^$line" <<<"$out"; then
        # Not the line itself: a log searched for skipped parts should not find this test's.
        echo "PASS $name: exit $status, and its line says ${line%%:*}" | sed 's/SKIPPED/it skips/'

    else
        echo "FAIL $name: exit $status (wanted $wanted with a line starting \"$line\"); its output:"
        tail -5 <<<"$out" | sed 's/^/    /'
        failures=$((failures + 1))
    fi
}

gateway=$PWD/.build/debug/gyrogate
expect "the browser test without chromium, CI=true" 77 "FAILED:" CI=true -- \
    "$python" Tests/Browser/liveview_test.py --gateway "$gateway"
expect "the browser test without chromium, outside CI" 0 "SKIPPED:" -- \
    "$python" Tests/Browser/liveview_test.py --gateway "$gateway"
if [ "$(id -u)" = 0 ]; then
    expect "the VM without qemu, CI=true" 1 "FAILED: the VM cannot be built" CI=true -- \
        "$python" Tests/VM/hcivm.py --quick --gateway "$gateway"
    expect "the VM without qemu, outside CI" 0 "SKIPPED: the VM cannot be built" -- \
        "$python" Tests/VM/hcivm.py --quick --gateway "$gateway"
else
    # Not root is what the VM truly lacks then; hcivm.py says SKIPPED for it under CI too.
    expect "the VM as a user (a lacking capability, counted)" 0 "SKIPPED: not root" CI=true -- \
        "$python" Tests/VM/hcivm.py --quick --gateway "$gateway"
fi
echo "$failures failed"
[ "$failures" = 0 ]
