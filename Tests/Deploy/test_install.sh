#!/usr/bin/env bash
# Tests deploy/: install.sh into a throwaway root (install, install again, --uninstall,
# --uninstall --purge, --prefix, bad arguments), deploy/gyrogate.service with
# `systemd-analyze verify` against that root, the example mosquitto configs on a real mosquitto
# (persistence across a restart; the bridge forwarding to a TLS "central" broker), and
# build-pi.sh's refusals. Needs no network (apt-get only when systemd-analyze is missing).
#
# Usage: bash Tests/Deploy/test_install.sh [--binary PATH]
#   --binary PATH  the gyrogate to install (default: swift build -c release --product gyrogate)
# Last line: "N passed, N failed"; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
repo=$PWD

binary=""
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary=${2:?--binary needs a PATH}; shift 2 ;;
        --binary=*) binary=${1#*=}; shift ;;
        *) echo "usage: bash Tests/Deploy/test_install.sh [--binary PATH]" >&2; exit 2 ;;
    esac
done
if [ -z "$binary" ]; then
    echo "== swift build -c release --product gyrogate"
    swift build -c release --product gyrogate 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]'
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "swift build failed"; echo "0 passed, 1 failed"; exit 1; }
    binary="$(swift build -c release --show-bin-path)/gyrogate"
fi
[ -x "$binary" ] || { echo "no gyrogate binary at $binary"; echo "0 passed, 1 failed"; exit 1; }
binary=$(cd "$(dirname "$binary")" && pwd -P)/$(basename "$binary")

work=$(mktemp -d)
pids=()
# stop PID: SIGTERM, then SIGKILL after 3 s (mosquitto 2.0.11 with a failing TLS bridge was seen
# spinning and ignoring SIGTERM).
stop() {
    kill "$1" 2>/dev/null || return 0
    for _ in $(seq 30); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    return 0
}
cleanup() {
    for pid in "${pids[@]}"; do stop "$pid"; done
    rm -rf "$work"
}
trap cleanup EXIT

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /'; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
skip() { echo "SKIP: $1"; }

install_sh() { bash "$repo/deploy/install.sh" "$@" >"$work/out" 2>&1; }
# run_ok DESCRIPTION ARGS...: install.sh ARGS must exit 0.
run_ok() {
    local what=$1; shift
    if install_sh "$@"; then pass "$what"; else fail "$what (exit $?)" "$(cat "$work/out")"; fi
}
# run_fails DESCRIPTION PATTERN ARGS...: install.sh ARGS must fail, saying PATTERN.
run_fails() {
    local what=$1 pattern=$2; shift 2
    if install_sh "$@"; then fail "$what: exited 0" "$(cat "$work/out")"
    elif grep -qF -- "$pattern" "$work/out"; then pass "$what"
    else fail "$what: no '$pattern' in the message" "$(cat "$work/out")"; fi
}
# The tree under a root: path, type, mode, size, link target, content hash; no times.
snapshot() {
    (cd "$1" && find . -printf '%p %y %m %s %l\n' | sort && find . -type f -print0 | sort -z | xargs -0 -r md5sum)
}
json() { python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

root="$work/root"
unit=etc/systemd/system/gyrogate.service
wants=etc/systemd/system/multi-user.target.wants/gyrogate.service

echo "== install.sh --root --binary"
run_ok "install into a throwaway root" --root "$root" --binary "$binary"
check "binary installed as usr/local/bin/gyrogate" cmp -s "$binary" "$root/usr/local/bin/gyrogate"
check "binary mode 755" test "$(stat -c %a "$root/usr/local/bin/gyrogate")" = 755
check "unit installed as deploy/gyrogate.service" cmp -s deploy/gyrogate.service "$root/$unit"
check "unit enabled: multi-user.target.wants symlink" test "$(readlink "$root/$wants")" = /etc/systemd/system/gyrogate.service
config="$root/etc/gyrogate/config.json"
check "config written" test -f "$config"
check "config: dataDirectory /var/lib/gyrogate" test "$(json "$config" 'c["dataDirectory"]')" = /var/lib/gyrogate
check "config: admin.socketPath /run/gyrogate/admin.sock" test "$(json "$config" 'c["admin"]["socketPath"]')" = /run/gyrogate/admin.sock
check "config: the live view listens on loopback only" test "$(json "$config" 'c["web"]["listen"].split(":")[0]')" = 127.0.0.1
check "config: bluetooth.transport hci:0" test "$(json "$config" 'c["bluetooth"]["transport"]')" = hci:0
same_otherwise() {
    python3 - "$config" config.json <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for c in (a, b):
    c.pop("dataDirectory"); c["admin"].pop("socketPath"); c["bluetooth"].pop("transport")
sys.exit(a != b)
EOF
}
check "config: otherwise config.json" same_otherwise
check "config mode 640, folders 750" test "$(stat -c %a "$config" "$root/etc/gyrogate" "$root/var/lib/gyrogate" | tr '\n' ' ')" = "640 750 750 "
check "installed config passes check-config" "$root/usr/local/bin/gyrogate" check-config "$config"
check "README installed as usr/local/share/doc/gyrogate/README.md" cmp -s README.md "$root/usr/local/share/doc/gyrogate/README.md"
check "mosquitto examples installed with the documentation" test -f "$root/usr/local/share/doc/gyrogate/mosquitto/bridge.conf"
documentation_exists() {
    local line url n=0
    line=$(sed -n 's/^Documentation=//p' "$root/$unit")
    for url in $line; do
        case "$url" in file://*) [ -f "$root${url#file://}" ] || { echo "    missing: $url"; return 1; }; n=$((n + 1)) ;; esac
    done
    [ "$n" -gt 0 ]
}
check "every file:// Documentation= of the unit is installed" documentation_exists
check "no passwd or group entries written under --root" test ! -e "$root/etc/passwd" -a ! -e "$root/etc/group"

echo "== systemd-analyze verify"
if ! command -v systemd-analyze >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "   (installing systemd for systemd-analyze)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >/dev/null 2>&1 || true
fi
if command -v systemd-analyze >/dev/null && [ -d /usr/lib/systemd/system ]; then
    # Verify against the installed root (its ExecStart binary), with the host's system units
    # (multi-user.target, sysinit.target, ...) copied in; removed again before the next steps.
    verify() {
        local r=$1
        mkdir -p "$r/usr/lib/systemd" && cp -a /usr/lib/systemd/system "$r/usr/lib/systemd/" \
            && systemd-analyze verify --root="$r" gyrogate.service >"$work/verify" 2>&1
        local status=$?
        rm -rf "$r/usr/lib/systemd"
        [ "$status" = 0 ] && [ ! -s "$work/verify" ]
    }
    if verify "$root"; then pass "systemd-analyze verify gyrogate.service: no complaints"
    else fail "systemd-analyze verify gyrogate.service" "$(cat "$work/verify")"; fi
    # The check has teeth: a unit whose binary is missing fails it.
    mv "$root/usr/local/bin/gyrogate" "$work/moved"
    if verify "$root"; then fail "systemd-analyze verify catches a missing ExecStart binary"
    else pass "systemd-analyze verify catches a missing ExecStart binary"; fi
    mv "$work/moved" "$root/usr/local/bin/gyrogate"
else
    skip "systemd-analyze verify (no systemd-analyze, and apt-get install systemd did not provide it)"
fi

echo "== install.sh again: idempotent"
snapshot "$root" >"$work/before"
run_ok "second install exits 0" --root "$root" --binary "$binary"
snapshot "$root" >"$work/after"
if diff -u "$work/before" "$work/after" >"$work/diff"; then pass "second install: same files, modes and contents"
else fail "second install changed the tree" "$(cat "$work/diff")"; fi
sed -i 's/"gatewayId": "[^"]*"/"gatewayId": "edited-by-operator"/' "$config"
run_ok "third install (after editing the config) exits 0" --root "$root" --binary "$binary"
check "an existing config is kept" test "$(json "$config" 'c["gatewayId"]')" = edited-by-operator

echo "== install.sh --prefix"
root2="$work/root-prefix"
run_ok "install with --prefix /opt/gyrogate" --root "$root2" --binary "$binary" --prefix /opt/gyrogate
check "binary in /opt/gyrogate/bin" test -x "$root2/opt/gyrogate/bin/gyrogate"
check "unit's ExecStart follows the prefix" grep -qx 'ExecStart=/opt/gyrogate/bin/gyrogate run --config /etc/gyrogate/config.json' "$root2/$unit"
check "unit's Documentation= follows the prefix" grep -q '^Documentation=file:///opt/gyrogate/share/doc/gyrogate/README.md' "$root2/$unit"
check "nothing under /usr/local with --prefix" test ! -e "$root2/usr/local"
run_ok "uninstall --purge with --prefix" --root "$root2" --prefix /opt/gyrogate --uninstall --purge
check "--prefix uninstall removed the binary" test ! -e "$root2/opt/gyrogate/bin/gyrogate"

echo "== bad arguments"
run_fails "--purge without --uninstall" "--purge goes with --uninstall" --root "$work/r3" --purge
run_fails "--binary that does not exist" "$work/nonexistent: no such file" --root "$work/r3" --binary "$work/nonexistent"
run_fails "an unknown option" "unknown argument: --frobnicate" --frobnicate
run_fails "a relative --prefix" "--prefix must be an absolute path" --root "$work/r3" --prefix usr

echo "== install.sh --uninstall"
mkdir -p "$root/var/lib/gyrogate" && echo data >"$root/var/lib/gyrogate/store.sqlite"
run_ok "uninstall exits 0" --root "$root" --uninstall
check "binary removed" test ! -e "$root/usr/local/bin/gyrogate"
check "unit removed" test ! -e "$root/$unit"
check "enablement symlink removed" test ! -L "$root/$wants"
check "documentation removed" test ! -e "$root/usr/local/share/doc/gyrogate"
check "config kept" test "$(json "$config" 'c["gatewayId"]')" = edited-by-operator
check "data kept" test "$(cat "$root/var/lib/gyrogate/store.sqlite")" = data
run_ok "uninstall again exits 0" --root "$root" --uninstall

echo "== install.sh --uninstall --purge"
run_ok "purge exits 0" --root "$root" --uninstall --purge
check "/etc/gyrogate removed" test ! -e "$root/etc/gyrogate"
check "/var/lib/gyrogate removed" test ! -e "$root/var/lib/gyrogate"
left=$(cd "$root" && find . ! -type d)
if [ -z "$left" ]; then pass "nothing but empty folders left in the root"; else fail "files left after purge" "$left"; fi

echo "== mosquitto example configs"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
# adjust FILE OUT 'from|to'...: copy FILE with each line-start FROM replaced by TO; each must match.
adjust() {
    local file=$1 out=$2 pair from to
    cp "$file" "$out"; shift 2
    for pair in "$@"; do
        from=${pair%%|*} to=${pair#*|}
        grep -q "^$from" "$out" || { echo "    $file has no line starting with '$from'"; return 1; }
        sed -i "s|^$from|$to|" "$out"
    done
}
if [ -x /usr/sbin/mosquitto ] && command -v mosquitto_pub >/dev/null && command -v mosquitto_sub >/dev/null; then
    mq="$work/mq" && mkdir -p "$mq/data" "$mq/conf.d"
    port=$(free_port)
    if adjust deploy/mosquitto/gyrogate.conf "$mq/gyrogate.conf" \
        "pid_file .*|pid_file $mq/mosquitto.pid" "persistence_location .*|persistence_location $mq/data/" \
        "listener 1883 127.0.0.1|listener $port 127.0.0.1" "log_dest file .*|log_dest file $mq/mosquitto.log" \
        "include_dir .*|include_dir $mq/conf.d"; then
        echo "user $(id -un)" >>"$mq/gyrogate.conf"
        /usr/sbin/mosquitto -c "$mq/gyrogate.conf" >"$mq/stderr" 2>&1 &
        broker=$!; pids+=("$broker")
        if wait_port "$port"; then
            pass "mosquitto starts with gyrogate.conf"
            mosquitto_pub -p "$port" -q 1 -r -t records/test-user___1 -m '{"persisted":true}'
            stop "$broker"
            check "persistence: mosquitto.db written at shutdown" test -s "$mq/data/mosquitto.db"
            /usr/sbin/mosquitto -c "$mq/gyrogate.conf" >>"$mq/stderr" 2>&1 &
            broker=$!; pids+=("$broker")
            wait_port "$port"
            got=$(mosquitto_sub -p "$port" -t 'records/#' -C 1 -W 5 2>&1)
            check "persistence: a retained document survives a restart" test "$got" = '{"persisted":true}'
            stop "$broker"
        else
            fail "mosquitto starts with gyrogate.conf" "$(cat "$mq/stderr" "$mq/mosquitto.log" 2>/dev/null)"
        fi
    else
        fail "gyrogate.conf has the lines the test adjusts"
    fi

    # A "central" broker with a TLS listener (a test CA) and a plain one for the subscriber; the
    # gateway's broker with gyrogate.conf and bridge.conf in its conf.d.
    tls="$work/tls" && mkdir -p "$tls"
    if openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca -keyout "$tls/ca.key" -out "$tls/ca.crt" >/dev/null 2>&1 \
        && openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$tls/server.key" -out "$tls/server.csr" >/dev/null 2>&1 \
        && printf 'subjectAltName=IP:127.0.0.1\n' >"$tls/ext" \
        && openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 1 \
            -extfile "$tls/ext" -out "$tls/server.crt" >/dev/null 2>&1; then
        central_tls=$(free_port) central_plain=$(free_port)
        cat >"$work/central.conf" <<EOF
per_listener_settings true
listener $central_tls 127.0.0.1
cafile $tls/ca.crt
certfile $tls/server.crt
keyfile $tls/server.key
allow_anonymous true
listener $central_plain 127.0.0.1
allow_anonymous true
user $(id -un)
EOF
        /usr/sbin/mosquitto -c "$work/central.conf" >"$work/central.log" 2>&1 &
        central=$!; pids+=("$central")
        rm -rf "$mq/data"/* && : >"$mq/mosquitto.log"
        if ! wait_port "$central_plain"; then
            fail "central test broker starts" "$(cat "$work/central.log")"
        elif adjust deploy/mosquitto/bridge.conf "$mq/conf.d/bridge.conf" \
            "connection gyrogate-GATEWAY_ID|connection gyrogate-test-gw" \
            "address central.example.net:8883|address 127.0.0.1:$central_tls" \
            "remote_clientid gyrogate-bridge-GATEWAY_ID|remote_clientid gyrogate-bridge-test-gw" \
            "notification_topic gyrogate/GATEWAY_ID/bridge|notification_topic gyrogate/test-gw/bridge" \
            "bridge_cafile .*|bridge_cafile $tls/ca.crt"; then
            /usr/sbin/mosquitto -c "$mq/gyrogate.conf" >"$mq/stderr" 2>&1 &
            broker=$!; pids+=("$broker")
            if wait_port "$port"; then
                pass "mosquitto starts with gyrogate.conf and bridge.conf"
                for topic in records/test-user___1 realtime_data/chunk-1 TitanUpUsers/test-user/DailySessions/1 gyrogate/test-gw/status; do
                    mosquitto_pub -p "$port" -q 1 -r -t "$topic" -m "doc:$topic"
                done
                got=$(mosquitto_sub -p "$central_plain" -v -C 4 -W 10 -t 'records/#' -t 'realtime_data/#' -t 'TitanUpUsers/#' -t gyrogate/test-gw/status 2>&1 | sort)
                expected=$(printf '%s\n' "TitanUpUsers/test-user/DailySessions/1 doc:TitanUpUsers/test-user/DailySessions/1" \
                    "gyrogate/test-gw/status doc:gyrogate/test-gw/status" "realtime_data/chunk-1 doc:realtime_data/chunk-1" \
                    "records/test-user___1 doc:records/test-user___1" | sort)
                if [ "$got" = "$expected" ]; then pass "bridge over TLS forwards the four topic trees to the central broker"
                else fail "bridge over TLS forwards the four topic trees to the central broker" "got: $got
$(cat "$mq/mosquitto.log")"; fi
                got=$(mosquitto_sub -p "$central_plain" -t gyrogate/test-gw/bridge -C 1 -W 5 2>&1)
                check "bridge state published on the central broker" test "$got" = 1
                stop "$broker"
            else
                fail "mosquitto starts with gyrogate.conf and bridge.conf" "$(cat "$mq/stderr" "$mq/mosquitto.log" 2>/dev/null)"
            fi
        else
            fail "bridge.conf has the lines the test adjusts"
        fi
        stop "$central"
    else
        fail "openssl made the test CA and server certificate"
    fi
else
    skip "mosquitto example configs (no /usr/sbin/mosquitto or mosquitto-clients)"
fi

echo "== build-pi.sh refusals"
if command -v swift >/dev/null; then
    if bash deploy/build-pi.sh --cross no-such-sdk-for-test >"$work/out" 2>&1; then fail "--cross with an SDK that is not installed: exited 0"
    elif grep -q "no Swift SDK named 'no-such-sdk-for-test' is installed" "$work/out"; then pass "--cross refuses an SDK that swift sdk list lacks"
    else fail "--cross refuses an SDK that swift sdk list lacks" "$(cat "$work/out")"; fi
    if [ "$(uname -m)" != aarch64 ]; then
        if bash deploy/build-pi.sh --no-deps >"$work/out" 2>&1; then fail "a native build off a Pi: exited 0"
        elif grep -q "not aarch64: run this script on the Pi" "$work/out"; then pass "a native build off an aarch64 machine is refused"
        else fail "a native build off an aarch64 machine is refused" "$(cat "$work/out")"; fi
    fi
else
    skip "build-pi.sh refusals (no swift)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
