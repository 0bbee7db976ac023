#!/usr/bin/env bash
# Installs gyrogate as a systemd service on this machine, or into a folder (--root), and removes
# it again (--uninstall, --purge). Running it twice gives the same result: an existing
# /etc/gyrogate/config.json is never overwritten, and the service restarts only when the binary
# or the unit changed.
#
# Usage: sudo bash deploy/install.sh [--binary PATH] [--prefix DIR] [--root DIR]
#        sudo bash deploy/install.sh --uninstall [--purge] [--prefix DIR] [--root DIR]
#
#   --binary PATH  install this gyrogate (e.g. one from deploy/build-pi.sh) instead of building
#                  one here with deploy/release-build.sh
#   --prefix DIR   where the binary and its documentation go (default /usr/local):
#                  DIR/bin/gyrogate, DIR/share/doc/gyrogate/
#   --root DIR     install into DIR as if it were / (an image, a test): every path is prefixed
#                  with DIR; no apt-get, no systemctl, no user created (files are not chowned);
#                  the service is enabled by its multi-user.target.wants symlink
#   --uninstall    stop and disable the service; remove the binary, the unit, its enablement
#                  symlinks and the documentation; keep /etc/gyrogate and /var/lib/gyrogate
#   --purge        with --uninstall: also remove /etc/gyrogate, /var/lib/gyrogate (the store!),
#                  the unit's drop-ins and the system user and group gyrogate
#
# A plain `sudo bash deploy/install.sh` on the machine: installs the runtime libraries (and the
# -dev packages the build needs) with apt-get, builds gyrogate, creates the system user gyrogate,
# writes /etc/gyrogate/config.json from config.json (dataDirectory /var/lib/gyrogate, the admin
# socket in /run/gyrogate, transport hci:0), checks it with `gyrogate check-config`, installs
# deploy/gyrogate.service and enables and starts it. systemctl is skipped when systemd is not
# running (a container, a chroot): the unit is then enabled by its symlink only.
set -euo pipefail

me="deploy/install.sh"
die() { echo "$me: error: $*" >&2; exit 1; }
note() { echo "== $*"; }
# Any other failing command names itself.
trap 'echo "$me: error: command failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

usage() { sed -n '/^# Usage:/,/^#   --purge/p' "$0" | sed 's/^# \{0,1\}//'; }

binary="" prefix="/usr/local" root="" uninstall=0 purge=0
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) [ $# -ge 2 ] || die "--binary needs a PATH"; binary=$2; shift 2 ;;
        --binary=*) binary=${1#*=}; shift ;;
        --prefix) [ $# -ge 2 ] || die "--prefix needs a DIR"; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#*=}; shift ;;
        --root) [ $# -ge 2 ] || die "--root needs a DIR"; root=$2; shift 2 ;;
        --root=*) root=${1#*=}; shift ;;
        --uninstall) uninstall=1; shift ;;
        --purge) purge=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ "$purge" = 0 ] || [ "$uninstall" = 1 ] || die "--purge goes with --uninstall (--uninstall --purge)"
[ "$uninstall" = 0 ] || [ -z "$binary" ] || die "--binary makes no sense with --uninstall"
case "$prefix" in /*) ;; *) die "--prefix must be an absolute path, not '$prefix'" ;; esac
prefix=${prefix%/}
[ -n "$prefix" ] || die "--prefix / is not supported (use /usr)"

# Paths given relative to the caller's folder stay relative to it.
if [ -n "$root" ]; then
    mkdir -p -- "$root" || die "cannot create the --root folder $root"
    root=$(cd -- "$root" && pwd -P)
    [ "$root" != / ] || root=""
fi
if [ -n "$binary" ]; then
    [ -f "$binary" ] || die "--binary $binary: no such file"
    [ -x "$binary" ] || die "--binary $binary: not executable"
    binary_dir=$(cd -- "$(dirname -- "$binary")" && pwd -P)
    binary="${binary_dir%/}/$(basename -- "$binary")"
fi
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)
cd "$repo"
# The user, folders and configuration are set up as the Debian package does (deploy/package.sh).
GYROGATE_ROOT=$root
. deploy/system-setup.sh

real_root=0; [ -n "$root" ] || real_root=1
if [ "$real_root" = 1 ] && [ "$(id -u)" != 0 ]; then
    die "run as root (sudo bash $me ...), or install into a folder with --root DIR"
fi
# systemctl only on the real root of a machine that runs systemd (sd_booted's test).
use_systemctl=0
if [ "$real_root" = 1 ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then use_systemctl=1; fi

bin="$prefix/bin/gyrogate"
doc="$prefix/share/doc/gyrogate"
unit=/etc/systemd/system/gyrogate.service
wants=/etc/systemd/system/multi-user.target.wants/gyrogate.service
etc=/etc/gyrogate
config=/etc/gyrogate/config.json
data=/var/lib/gyrogate
R() { printf '%s%s' "$root" "$1"; }   # a path on the target system, as seen from here

# ---------------------------------------------------------------------------------------------
if [ "$uninstall" = 1 ]; then
    if [ "$use_systemctl" = 1 ] && systemctl cat gyrogate.service >/dev/null 2>&1; then
        note "stopping and disabling gyrogate.service"
        systemctl disable --now gyrogate.service || die "systemctl disable --now gyrogate.service failed"
    fi
    note "removing $(R "$bin"), $(R "$unit"), its enablement symlinks and $(R "$doc")"
    rm -f -- "$(R "$bin")" "$(R "$unit")" "$(R "$wants")"
    # `systemctl enable` may have linked it from other .wants/.requires folders too (an
    # edited [Install] section): every symlink named gyrogate.service under /etc/systemd.
    if [ -d "$(R /etc/systemd)" ]; then
        find "$(R /etc/systemd)" -type l -name gyrogate.service -delete
    fi
    rm -rf -- "$(R "$doc")"
    if [ "$purge" = 1 ]; then
        note "purging $(R "$etc"), $(R "$data") (the store) and $(R "$unit").d"
        gyrogate_purge_state
        rm -rf -- "$(R "$unit").d"
        if [ "$real_root" = 1 ]; then
            note "removing the system user gyrogate"
            gyrogate_remove_user || die "could not remove the system user gyrogate (above)"
        fi
    fi
    [ "$use_systemctl" = 0 ] || systemctl daemon-reload
    if [ "$purge" = 1 ]; then
        echo "uninstalled and purged gyrogate"
    else
        echo "uninstalled gyrogate; kept $(R "$etc") and $(R "$data") (--uninstall --purge removes them)"
    fi
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# 1. Packages: the runtime libraries, and what the build needs when building here.
if [ "$real_root" = 1 ]; then
    packages=(libsqlite3-0 libmosquitto1 tzdata)
    [ -n "$binary" ] || packages+=(libsqlite3-dev libmosquitto-dev)
    if command -v apt-get >/dev/null; then
        missing=()
        for package in "${packages[@]}"; do
            dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
        done
        if [ ${#missing[@]} -gt 0 ]; then
            note "apt-get install ${missing[*]}"
            if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
                note "apt-get update, then again"
                apt-get update -qq || die "apt-get update failed (network? /etc/apt/sources.list?)"
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
                    || die "apt-get could not install ${missing[*]}"
            fi
        fi
    else
        echo "$me: warning: no apt-get; make sure ${packages[*]} (or your distribution's equivalents) are installed" >&2
    fi
else
    note "skipping apt-get (--root): the target needs libsqlite3-0, libmosquitto1 and tzdata"
fi

# 2. The binary: the one given, or a static-stdlib release build from this repository.
if [ -z "$binary" ]; then
    command -v swift >/dev/null || die "swift not found: install Swift 6.3, or build elsewhere (deploy/build-pi.sh) and pass --binary PATH"
    note "bash deploy/release-build.sh (swift build -c release, static Swift runtime)"
    bash deploy/release-build.sh \
        || die "swift build failed (above); it needs Swift 6.3, libsqlite3-dev and libmosquitto-dev"
    binary="$(bash deploy/release-build.sh --show-bin-path)/gyrogate"
    [ -x "$binary" ] || die "swift build left no binary at $binary"
fi
changed=0
if ! cmp -s -- "$binary" "$(R "$bin")"; then
    note "installing $binary as $(R "$bin")"
    install -D -m 0755 -- "$binary" "$(R "$bin")"
    changed=1
fi
runs=1
if ! "$(R "$bin")" --version >/dev/null 2>&1; then
    runs=0
    what=$(file -b -- "$(R "$bin")" 2>/dev/null || echo "file not installed")
    [ "$real_root" = 0 ] || die "$bin does not run on this machine ($what); missing libraries? try: ldd $bin"
    echo "$me: warning: $(R "$bin") does not run here ($what): check-config skipped" >&2
fi

# 3. Documentation (the unit's Documentation= points here) and the example broker configs.
note "installing the documentation in $(R "$doc")"
install -d -m 0755 "$(R "$doc")" "$(R "$doc")/docs" "$(R "$doc")/mosquitto"
install -m 0644 README.md "$(R "$doc")/README.md"
install -m 0644 docs/*.md "$(R "$doc")/docs/"
install -m 0644 deploy/mosquitto/*.conf "$(R "$doc")/mosquitto/"

# 4. The system user, and the configuration and data folders.
if [ "$real_root" = 1 ]; then
    id -u gyrogate >/dev/null 2>&1 || note "creating the system user gyrogate"
    gyrogate_create_user || die "useradd gyrogate failed"
else
    note "skipping the system user gyrogate (--root writes no passwd entries); create it on the target"
fi
gyrogate_make_folders "$real_root"

# 5. The configuration, from config.json, once.
if [ -f "$(R "$config")" ]; then
    note "keeping the existing $(R "$config")"
else
    note "writing $(R "$config") from config.json"
    new=$(mktemp "$(R "$etc")/.config.json.XXXXXX")
    gyrogate_system_config < config.json > "$new" || { rm -f "$new"; die "write $config by hand (above)"; }
    chmod 0640 "$new"
    [ "$real_root" = 0 ] || chown root:gyrogate "$new"
    mv -f "$new" "$(R "$config")"
fi
if [ "$runs" = 1 ]; then
    "$(R "$bin")" check-config "$(R "$config")" \
        || die "gyrogate check-config found problems in $(R "$config") (above): fix them, then run $me again"
fi

# 6. The unit, with this prefix's paths.
new_unit=$(mktemp)
sed -e "s#/usr/local/bin/gyrogate#$bin#g" -e "s#/usr/local/share/doc/gyrogate#$doc#g" deploy/gyrogate.service > "$new_unit"
grep -q "^ExecStart=$bin run " "$new_unit" || { rm -f "$new_unit"; die "deploy/gyrogate.service: no ExecStart=/usr/local/bin/gyrogate run ... line to point at $bin"; }
if ! cmp -s "$new_unit" "$(R "$unit")"; then
    note "installing $(R "$unit")"
    install -D -m 0644 "$new_unit" "$(R "$unit")"
    changed=1
fi
rm -f "$new_unit"

# 7. Enable (and start, or restart when something changed).
if [ "$use_systemctl" = 1 ]; then
    was_active=0
    systemctl is-active --quiet gyrogate.service && was_active=1
    systemctl daemon-reload
    systemctl enable --now gyrogate.service \
        || die "systemctl enable --now gyrogate.service failed: see systemctl status gyrogate, journalctl -u gyrogate"
    if [ "$was_active" = 1 ] && [ "$changed" = 1 ]; then
        note "restarting gyrogate.service (binary or unit changed)"
        systemctl restart gyrogate.service || die "systemctl restart gyrogate.service failed: see journalctl -u gyrogate"
    fi
    echo "installed; logs: journalctl -u gyrogate -f"
else
    # What `systemctl enable` does for WantedBy=multi-user.target.
    install -d -m 0755 "$(dirname "$(R "$wants")")"
    ln -sfn "$unit" "$(R "$wants")"
    if [ "$real_root" = 1 ]; then
        echo "installed and enabled; systemd is not running here, so nothing was started"
    else
        echo "installed into $root (enabled by symlink; not started)"
    fi
fi
