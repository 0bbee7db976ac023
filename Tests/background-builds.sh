#!/usr/bin/env bash
# The suite's last three builds, made early: Tests/run-tests.sh starts this in the background at
# the lowest CPU priority right after the debug build, so that they fill the CPU the
# wait-bound steps leave idle (the VM, the reliability suite, the fleet: most of their time is
# waiting on sockets and timers), and the steps that need them wait for what is not done yet:
#   amd64    deploy/package.sh --arch amd64            Tests/Deploy/test_package.sh
#   fuzz     Tests/Fuzz/build.sh                       the fuzzing step (run.sh --no-build)
#   tsan     swift build --build-tests --sanitize=thread --scratch-path .build-tsan
# One after another, in the order they are needed; each in a build folder of its own.
#
# Usage: bash Tests/background-builds.sh DIR
#   DIR/pgid        the process group (a waiting step raises its priority)
#   DIR/NAME.log    a build's output      DIR/NAME.rc   its exit status, written when it ends
#   DIR/amd64/      the amd64 package
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dir=${1:?usage: bash Tests/background-builds.sh DIR}
mkdir -p -- "$dir" || exit 2
ps -o pgid= $$ | tr -d ' ' >"$dir/pgid"

# build NAME COMMAND...: runs COMMAND into DIR/NAME.log, its status (and time) into DIR/NAME.rc.
build() {
    local name=$1 t0 status=0; shift
    t0=$(date +%s)
    "$@" >"$dir/$name.log" 2>&1 || status=$?
    echo "== $name: $(( $(date +%s) - t0 )) s, exit $status" >>"$dir/$name.log"
    echo "$status" >"$dir/$name.rc"
}

build amd64 bash deploy/package.sh --arch amd64 --output "$dir/amd64"
build fuzz bash Tests/Fuzz/build.sh
build tsan swift build --build-tests --sanitize=thread --scratch-path .build-tsan
