#!/usr/bin/env bash
# Sets up and runs gyrogate's main job on this machine with the shipped config.json (two
# emulated sensors): installs the system packages, starts a local mosquitto on the config's
# broker address when none is listening there and, when there is no radio (nothing on the
# config's tcp: transport), the emulated MetaWear boards (bumble, in a venv), builds the gateway
# and runs it in the foreground. Ctrl-C stops it gracefully. Watch it with:
#   mosquitto_sub -h 127.0.0.1 -t 'records/+' -t 'realtime_data/+' -t 'TitanUpUsers/#' -v
#   .build/release/gyrogate status --config config.json
# Usage: bash deploy/demo.sh
# Environment (for tests and other set-ups): GYROGATE_CONFIG (default config.json),
# GYROGATE_BINARY (a gyrogate to run instead of building the release one).
set -euo pipefail
cd "$(dirname "$0")/.."
config=${GYROGATE_CONFIG:-config.json}

packages=(libsqlite3-dev libbluetooth-dev libmosquitto-dev mosquitto mosquitto-clients python3-venv)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    as_root=""
    [ "$(id -u)" = 0 ] || as_root="sudo"
    $as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The broker and the controller the config names.
read -r mqtt_host mqtt_port transport sensors < <(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
m = c.get("mqtt", {})
print(m.get("host", "127.0.0.1"), m.get("port", 1883), c["bluetooth"]["transport"], max(1, len(c.get("sensors", []))))
' "$config")

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

if [ "$mqtt_host" = 127.0.0.1 ] || [ "$mqtt_host" = localhost ]; then
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$mqtt_port") 2>/dev/null; then
        echo "== starting a local mosquitto on 127.0.0.1:$mqtt_port"
        # In a session of its own, like the boards below: Ctrl-C reaches the gateway, which
        # publishes its last documents, before this script stops the broker.
        setsid /usr/sbin/mosquitto -p "$mqtt_port" >/dev/null 2>&1 &
        pids+=($!)
    fi
fi

if [[ "$transport" == tcp:127.0.0.1:* ]]; then
    hci_port=${transport##*:}
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$hci_port") 2>/dev/null; then
        echo "== no controller on 127.0.0.1:$hci_port: starting $sensors emulated MetaWear boards (bumble peer)"
        [ -x .venv/bin/python ] || { python3 -m venv .venv && .venv/bin/pip install -q -r Tests/Peers/requirements.txt; }
        ready=$(mktemp -u)
        mkfifo "$ready"
        setsid .venv/bin/python Tests/Peers/metawear_peer.py --hci-port "$hci_port" --control-port 0 --sensors "$sensors" \
            --exit-with-parent >"$ready" 2>/dev/null &
        pids+=($!)
        read -r line <"$ready"  # the peer prints one line, "READY hci=… control=…", once it listens
        rm -f "$ready"
        echo "== emulated boards: $line"
    fi
fi

binary=${GYROGATE_BINARY:-}
if [ -z "$binary" ]; then
    swift build -c release --product gyrogate
    binary=.build/release/gyrogate
fi
"$binary" check-config "$config"
web=$(python3 -c 'import json, sys; w = json.load(open(sys.argv[1])).get("web"); print(w["listen"] if w else "")' "$config" 2>/dev/null || true)
echo "== gyrogate run --config $config (try: $binary status --config $config${web:+; the live view: http://$web/})"
"$binary" run --config "$config" &
gateway=$!
pids+=("$gateway")
# Ctrl-C or SIGTERM stops the gateway gracefully (it closes sessions and publishes them) first.
trap 'kill -TERM "$gateway" 2>/dev/null; wait "$gateway"; cleanup; exit 0' INT TERM
wait "$gateway"
