#!/usr/bin/env bash
# Builds (once, cached) what the kernel-stack VM boots: Debian's own kernel and an initramfs of
# busybox-static plus the modules for Bluetooth over a UART (hci_uart), 9p, virtio-net and
# overlayfs. The guest's root is the host's root shared read-only over 9p under a tmpfs overlay,
# so the gateway, mosquitto, python and btattach of this machine run inside.
#
#   bash Tests/VM/hcivm.sh     # prints the cache folder (vmlinuz, initrd.gz, kernel.txt)
#
# Needs: apt-get download (Debian's registry), dpkg-deb, depmod (kmod), cpio, gzip, busybox-static,
# qemu-system-x86, bluez (btattach).
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${GYROGATE_VM_CACHE:-$PWD/.build-vm}"

missing() {
    local lacks=()
    command -v qemu-system-x86_64 >/dev/null || lacks+=("qemu-system-x86_64 (apt: qemu-system-x86)")
    command -v btattach >/dev/null || lacks+=("btattach (apt: bluez)")
    case "$(ldd /bin/busybox 2>&1)" in *"not a dynamic"*) ;; *) lacks+=("a static /bin/busybox (apt: busybox-static)") ;; esac
    command -v cpio >/dev/null || lacks+=("cpio")
    command -v depmod >/dev/null || lacks+=("depmod (apt: kmod)")
    echo "${lacks[*]:-}"
}

lacks=$(missing)
[ -z "$lacks" ] || { echo "cannot build the VM, missing: $lacks" >&2; exit 1; }
mkdir -p "$cache"
if [ -s "$cache/vmlinuz" ] && [ -s "$cache/initrd.gz" ] && [ "$cache/initrd.gz" -nt "$0" ] \
    && [ "$cache/initrd.gz" -nt Tests/VM/guest-init.sh ]; then
    echo "$cache"; exit 0
fi

# The kernel bookworm's linux-image-amd64 points at, from Debian's registry.
package=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$package" ] || { echo "apt knows no linux-image-amd64 (apt-get update?)" >&2; exit 1; }
work="$cache/work"
rm -rf "$work"; mkdir -p "$work/deb"
(cd "$work" && apt-get download -q "$package" 2>&1 | grep -v "unsandboxed as root" >&2 || true)
dpkg-deb -x "$work"/"$package"_*.deb "$work/deb"
release=$(ls "$work/deb/lib/modules")
modules="$work/deb/lib/modules/$release"
depmod -b "$work/deb" "$release"   # the package's postinst would; modules.dep is not shipped

# The modules and their dependencies (modules.dep lists them, deepest last), loaded in order.
wanted="bluetooth hci_uart 9p 9pnet_virtio overlay virtio_net virtio_pci"
declare -A seen=()
order=()
add() {
    local name=$1 path deps dep
    path=$(awk -F: -v m="/$name.ko" 'index($1, m) > 0 && index($1, m) == length($1) - length(m) + 1 {print $1; exit}' "$modules/modules.dep" | sed 's/\.xz$//')
    [ -n "$path" ] || return 0   # built into the kernel
    path=${path%.xz}
    [ -z "${seen[$path]:-}" ] || return 0
    seen[$path]=1
    deps=$(grep -E "^$path(\.xz)?:" "$modules/modules.dep" | cut -d: -f2-)
    for dep in $deps; do add "$(basename "${dep%.xz}" .ko)"; done
    order+=("$path")
}
for name in $wanted; do add "$name"; done

root="$work/initramfs"
mkdir -p "$root"/{bin,dev,proc,sys,mnt/host,mnt/upper,mnt/root,mnt/out,lib/modules}
cp /bin/busybox "$root/bin/busybox"
for path in "${order[@]}"; do
    file="$modules/$path"
    if [ -f "$file.xz" ]; then xz -dc "$file.xz" > "$root/lib/modules/$(basename "$path")"
    else cp "$file" "$root/lib/modules/"; fi
    echo "$(basename "$path")" >> "$root/lib/modules/order"
done
cp Tests/VM/guest-init.sh "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$cache/initrd.gz.new"
cp "$work"/deb/boot/vmlinuz-* "$cache/vmlinuz"
mv "$cache/initrd.gz.new" "$cache/initrd.gz"
echo "$package ($release), modules: ${#order[@]}" > "$cache/kernel.txt"
rm -rf "$work"
echo "$cache"
