# gyrogate's place on a system: the system user, its folders, the configuration made from the
# repository's config.json, and their removal. POSIX sh functions, shared by deploy/install.sh
# (which sources this file) and the Debian package (deploy/package.sh copies this file into the
# maintainer scripts), so that both set up a machine the same way.
#
# Every path is prefixed with $GYROGATE_ROOT (empty: the machine itself).

gyrogate_data=/var/lib/gyrogate
gyrogate_etc=/etc/gyrogate
gyrogate_runtime=/run/gyrogate

# gyrogate_create_user: the system user and group gyrogate, unless they exist.
gyrogate_create_user() {
    if id -u gyrogate >/dev/null 2>&1; then return 0; fi
    if getent group gyrogate >/dev/null; then set -- --gid gyrogate; else set -- --user-group; fi
    useradd --system "$@" --home-dir "$gyrogate_data" --no-create-home --shell /usr/sbin/nologin \
        --comment "gyrogate MetaWear gateway" gyrogate
}

# gyrogate_make_folders OWNED: /etc/gyrogate and /var/lib/gyrogate at 0750; with OWNED=1 the data
# folder belongs to gyrogate and the configuration folder to root:gyrogate (the service reads it,
# only root edits it).
gyrogate_make_folders() {
    install -d -m 0750 "$GYROGATE_ROOT$gyrogate_etc" "$GYROGATE_ROOT$gyrogate_data"
    if [ "$1" = 1 ]; then
        chown root:gyrogate "$GYROGATE_ROOT$gyrogate_etc"
        chown gyrogate:gyrogate "$GYROGATE_ROOT$gyrogate_data"
    fi
}

# gyrogate_system_config < config.json > OUT: the repository's demo configuration with the
# system's paths and the machine's first adapter. Fails when config.json no longer holds one of
# the demo's values (the output would silently keep it).
gyrogate_system_config() {
    gyrogate_config=$(sed -e 's#"dataDirectory": "data"#"dataDirectory": "/var/lib/gyrogate"#' \
        -e 's#"socketPath": "data/admin.sock"#"socketPath": "/run/gyrogate/admin.sock"#' \
        -e 's#"transport": "tcp:127.0.0.1:7001"#"transport": "hci:0"#') || return 1
    for expected in '"dataDirectory": "/var/lib/gyrogate"' '"socketPath": "/run/gyrogate/admin.sock"' '"transport": "hci:0"'; do
        case "$gyrogate_config" in
            *"$expected"*) ;;
            *) echo "config.json: could not set $expected (it no longer has the demo's value there)" >&2; return 1 ;;
        esac
    done
    printf '%s\n' "$gyrogate_config"
}

# gyrogate_own_config: the configuration readable by the service's group, not by others.
gyrogate_own_config() {
    chmod 0640 "$GYROGATE_ROOT$gyrogate_etc/config.json"
    chown root:gyrogate "$GYROGATE_ROOT$gyrogate_etc/config.json"
}

# gyrogate_purge_state: the configuration folder, the store (and its unpublished documents) and
# the runtime folder.
gyrogate_purge_state() {
    rm -rf -- "$GYROGATE_ROOT$gyrogate_etc" "$GYROGATE_ROOT$gyrogate_data" "$GYROGATE_ROOT$gyrogate_runtime"
}

# gyrogate_remove_user: the system user and group gyrogate, when they exist.
gyrogate_remove_user() {
    if id -u gyrogate >/dev/null 2>&1; then
        userdel gyrogate || { echo "userdel gyrogate failed (is a process of it still running?)" >&2; return 1; }
    fi
    if getent group gyrogate >/dev/null; then
        groupdel gyrogate || { echo "groupdel gyrogate failed" >&2; return 1; }
    fi
}
