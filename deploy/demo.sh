#!/usr/bin/env bash
# Sets up and runs gyrogate's main job on this machine with the shipped config.json:
# installs the system packages, starts a local mosquitto on 127.0.0.1:1883 when none is
# listening and, when there is no radio (nothing on the config's tcp:127.0.0.1:7001), the
# emulated MetaWear (bumble, in a venv), builds the gateway and runs it in the foreground.
# Ctrl-C stops it gracefully. Watch it with:
#   mosquitto_sub -h 127.0.0.1 -t 'records/+' -t 'realtime_data/+' -t 'TitanUpUsers/#' -v
#   .build/release/gyrogate status --config config.json
# Usage: bash deploy/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libsqlite3-dev libbluetooth-dev libmosquitto-dev mosquitto mosquitto-clients)
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

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

if ! (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null; then
    echo "== starting a local mosquitto on 127.0.0.1:1883"
    /usr/sbin/mosquitto -p 1883 >/dev/null 2>&1 &
    pids+=($!)
fi

if ! (exec 3<>/dev/tcp/127.0.0.1/7001) 2>/dev/null; then
    echo "== no controller on 127.0.0.1:7001: starting the emulated MetaWear (bumble peer)"
    [ -x .venv/bin/python ] || { python3 -m venv .venv && .venv/bin/pip install -q -r Tests/Peers/requirements.txt; }
    (cd Tests/Peers && exec ../../.venv/bin/python metawear_peer.py --hci-port 7001 --control-port 0 --sensors 1) &
    pids+=($!)
fi

swift build -c release --product gyrogate
.build/release/gyrogate check-config config.json
echo "== gyrogate run --config config.json (store in ./data; try: .build/release/gyrogate status --config config.json)"
.build/release/gyrogate run --config config.json
