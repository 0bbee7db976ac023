#!/usr/bin/env bash
# Runs a command where aarch64 programs run: as root of a new user namespace (uids and gids
# 0-65535 mapped to themselves, so files keep their owners), with mount and PID namespaces of
# its own and a binfmt_misc entry that hands aarch64 ELF files to qemu-aarch64-static. The
# entry lives in the namespace's own binfmt_misc instance (Linux >= 6.7): the machine's is
# neither needed nor touched, and it is gone when the command ends.
#
# Usage: bash Tests/Deploy/arm64-namespace.sh COMMAND [ARGUMENT...]   (as root)
# Exits 3 (with a message saying what is missing) when this machine cannot do it.
set -euo pipefail
me="Tests/Deploy/arm64-namespace.sh"
[ $# -gt 0 ] || { echo "usage: $me COMMAND [ARGUMENT...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$me: needs root (it writes the namespace's uid map)" >&2; exit 3; }
qemu=$(command -v qemu-aarch64-static) || { echo "$me: qemu-aarch64-static not found (apt-get install qemu-user-static)" >&2; exit 3; }

if [ "${GYROGATE_ARM64_NAMESPACE:-}" = inside ]; then
    # In the namespace: the binfmt_misc instance of this user namespace, one entry.
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc \
        || { echo "$me: cannot mount binfmt_misc in a user namespace (Linux >= 6.7 needed, this is $(uname -r))" >&2; exit 3; }
    # ELF, 64-bit, little-endian, executable or shared object, machine 183 (AArch64). F: the
    # interpreter is opened now, so it need not exist inside a chroot.
    printf '%s' ':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$qemu"':F' \
        > /proc/sys/fs/binfmt_misc/register
    unset GYROGATE_ARM64_NAMESPACE
    exec "$@"
fi

# The child opens the FIFO for reading after unshare(2), so once the open for writing returns
# the child is in its namespace and its maps can be written; it then waits for the go.
fifo=$(mktemp -u)
mkfifo -m 0600 "$fifo"
GYROGATE_ARM64_NAMESPACE=inside unshare --user --mount --pid --fork --mount-proc --propagation private -- \
    bash -c 'read -r _ < "$0" && exec bash "$1" "${@:2}"' "$fifo" "$0" "$@" &
child=$!
exec 3>"$fifo"
rm -f "$fifo"
# unshare(1) itself moved into the new user namespace before forking.
echo '0 0 65536' > "/proc/$child/uid_map"
echo '0 0 65536' > "/proc/$child/gid_map"
echo go >&3
exec 3>&-
wait "$child"
