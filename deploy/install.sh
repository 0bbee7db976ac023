#!/usr/bin/env bash
# Builds gyrogate in release mode and installs it as a systemd service on this machine.
# Usage: sudo bash deploy/install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root (sudo bash deploy/install.sh)" >&2; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-0 libmosquitto1 >/dev/null
swift build -c release --static-swift-stdlib --product gyrogate
install -m 0755 .build/release/gyrogate /usr/local/bin/gyrogate
id gyrogate >/dev/null 2>&1 || useradd --system --home /var/lib/gyrogate --shell /usr/sbin/nologin gyrogate
install -d -m 0750 -o gyrogate -g gyrogate /etc/gyrogate /var/lib/gyrogate
if [ ! -f /etc/gyrogate/config.json ]; then
    sed -e 's#"dataDirectory": "data"#"dataDirectory": "/var/lib/gyrogate"#' \
        -e 's#"socketPath": "data/admin.sock"#"socketPath": "/run/gyrogate/admin.sock"#' \
        -e 's#"transport": "tcp:127.0.0.1:7001"#"transport": "hci:0"#' config.json > /etc/gyrogate/config.json
fi
gyrogate check-config /etc/gyrogate/config.json
install -m 0644 deploy/gyrogate.service /etc/systemd/system/gyrogate.service
systemctl daemon-reload
systemctl enable --now gyrogate
echo "installed; logs: journalctl -u gyrogate -f"
