#!/usr/bin/env bash
# Builds (cached in .build-pivm/) what the aarch64 VM of issue #28 boots (Tests/VM/pivm.py runs it):
#   - Debian trixie's arm64 kernel (linux-image-arm64, unpacked with mmdebstrap --variant=extract);
#   - a trixie arm64 root made with mmdebstrap (systemd as init, udev, mosquitto, bluez for
#     btattach, busybox-static), the arm64 gyrogate .deb installed with dpkg under qemu-user
#     (Tests/Deploy/arm64-namespace.sh), the kernel's modules, and a few units of the test bed:
#     pivm-btattach.service (btattach -P h4 on /dev/hvc0, the virtconsole wired to the emulated
#     controller's H4 port, Before=gyrogate.service), pivm-control.service (waits for "stop" from
#     the host over qemu's user network, stops gyrogate, sends the journal back, powers off);
#   - root.img: an ext4 image of that root (mke2fs -d), and initrd.gz: busybox plus the modules to
#     mount it (virtio-blk, ext4), which switch_roots to /sbin/init (systemd).
#
#   bash Tests/VM/pivm.sh DEB      # prints the cache folder (vmlinuz, initrd.gz, root.img, kernel.txt)
#
# Needs: mmdebstrap, qemu-user-static (binfmt in a user namespace, Linux >= 6.7), e2fsprogs,
# cpio, kmod (depmod), qemu-system-arm (to boot it).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
deb=$(readlink -f "${1:?usage: pivm.sh dist/gyrogate_VERSION_arm64.deb}")
cache="${GYROGATE_PIVM_CACHE:-$PWD/.build-pivm}"
mkdir -p "$cache"
cd "$cache"
say() { echo "[pivm.sh $(date +%T)] $*" >&2; }

# 1. The root's packages (cached).
if [ ! -s root.tar ]; then
    say "mmdebstrap: trixie arm64 root (systemd, mosquitto, bluez)"
    bash "$repo/Tests/Deploy/arm64-namespace.sh" mmdebstrap --quiet --mode=root --variant=minbase --architectures=arm64 \
        --include=systemd-sysv,udev,kmod,iproute2,mosquitto,bluez,libsqlite3-0,libmosquitto1,tzdata,init-system-helpers,busybox-static,systemd-resolved \
        --format=tar trixie root.tar.tmp
    mv root.tar.tmp root.tar
fi
# 2. The kernel (cached).
if [ ! -d kernel-extract/boot ]; then
    say "mmdebstrap: linux-image-arm64 (extract)"
    rm -rf kernel-extract
    mmdebstrap --quiet --variant=extract --architectures=arm64 --include=linux-image-arm64 trixie kernel-extract
fi
kmod_root=kernel-extract
release=$(ls $kmod_root/usr/lib/modules | head -1)
modules=$kmod_root/usr/lib/modules/$release
[ -e $kmod_root/lib ] || ln -s usr/lib $kmod_root/lib
[ -s "$modules/modules.dep" ] || depmod -b $kmod_root "$release"
cp $kmod_root/boot/vmlinuz-"$release" vmlinuz
echo "linux-image-$release (trixie arm64)" > kernel.txt

# 3. The root: packages, the gyrogate .deb, modules, the test bed's units and configuration.
say "root: unpacking, installing $(basename "$deb")"
rm -rf root && mkdir root
tar -x -C root --numeric-owner -f root.tar
mkdir -p root/usr/lib/modules
cp -a "$modules" root/usr/lib/modules/
cp "$deb" root/tmp/gyrogate.deb
bash "$repo/Tests/Deploy/arm64-namespace.sh" chroot root dpkg -i /tmp/gyrogate.deb >&2
rm root/tmp/gyrogate.deb
# One emulated board at 100 Hz over hci:0, the broker in the VM.
python3 - root/etc/gyrogate/config.json <<'EOF'
import json, sys
path = sys.argv[1]
c = json.load(open(path))
c["bluetooth"]["transport"] = "hci:0"
c["bluetooth"]["maxSensors"] = 1
c["sensors"] = [{"address": "C4:BE:84:00:00:01", "userId": "pivm-user", "name": "MetaMotion R (emulated)"}]
c["gyro"]["odrHz"] = 100
c["timeZone"] = "UTC"
c["mqtt"].update({"host": "127.0.0.1", "port": 1883, "clientId": "gyrogate-pivm"})
c.pop("web", None)
json.dump(c, open(path, "w"), indent=2)
EOF
cat > root/etc/mosquitto/conf.d/pivm.conf <<'EOF'
listener 1883 0.0.0.0
allow_anonymous true
max_queued_messages 0
EOF
echo pivm > root/etc/hostname
mkdir -p root/etc/systemd/network
cat > root/etc/systemd/network/10-eth.network <<'EOF'
[Match]
Name=en* eth*
[Network]
DHCP=ipv4
EOF
cat > root/etc/systemd/system/pivm-btattach.service <<'EOF'
[Unit]
Description=pivm: hci_uart on the virtconsole wired to the emulated controller (H4)
Before=gyrogate.service
After=systemd-modules-load.service systemd-udev-settle.service
[Service]
Type=simple
ExecStartPre=/sbin/modprobe hci_uart
# The line: kernel argument pivm.h4= (pivm.py: /dev/ttyS0, a PCI 16550, or /dev/hvc0, a virtconsole).
ExecStart=/bin/sh -c 'line=$(tr " " "\\n" < /proc/cmdline | sed -n "s/^pivm.h4=//p"); line=$${line:-/dev/ttyS0}; for i in $(seq 300); do [ -e $$line ] && break; sleep 0.1; done; exec /usr/bin/btattach -B $$line -P h4 -S 3000000'
ExecStartPost=/bin/sh -c 'for i in $(seq 600); do [ -e /sys/class/bluetooth/hci0 ] && exit 0; sleep 0.1; done; exit 1'
[Install]
WantedBy=multi-user.target
EOF
cat > root/etc/systemd/system/pivm-control.service <<'EOF'
[Unit]
Description=pivm: waits for the host's stop, stops gyrogate, reports, powers off
After=network-online.target gyrogate.service
Wants=network-online.target
[Service]
Type=simple
ExecStart=/usr/local/sbin/pivm-control
Restart=on-failure
RestartSec=2
[Install]
WantedBy=multi-user.target
EOF
mkdir -p root/usr/local/sbin
cat > root/usr/local/sbin/pivm-control <<'EOF'
#!/bin/bash
# The host's pivm.py listens on 10.0.2.2:PORT (kernel argument pivm.ctl=PORT).
port=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^pivm.ctl=//p')
[ -n "$port" ] || exit 0
for i in $(seq 300); do exec 3<>/dev/tcp/10.0.2.2/$port && break; sleep 1; done
{
    echo "uptime $(cut -d' ' -f1 /proc/uptime)"
    systemctl show -p ActiveEnterTimestampMonotonic -p ExecMainStartTimestampMonotonic gyrogate.service
    systemctl is-active gyrogate.service
} >&3
read -r line <&3
t0=$(cut -d' ' -f1 /proc/uptime)
systemctl stop gyrogate.service
echo "stopped in $(awk -v t0=$t0 '{print $1 - t0}' /proc/uptime) s" >&3
{
    echo "--- systemctl status"; systemctl status --no-pager gyrogate.service pivm-btattach.service mosquitto.service 2>&1
    echo "--- journal gyrogate"; journalctl -b --no-pager -u gyrogate.service 2>&1 | tail -n 60
    echo "--- systemd-analyze"; systemd-analyze 2>&1
    echo "--- hciconfig"; cat /sys/class/bluetooth/hci0/uevent 2>&1
} >&3
exec 3>&-
sleep 1
systemctl poweroff
EOF
chmod +x root/usr/local/sbin/pivm-control
ln -sf /etc/systemd/system/pivm-btattach.service root/etc/systemd/system/multi-user.target.wants/
ln -sf /etc/systemd/system/pivm-control.service root/etc/systemd/system/multi-user.target.wants/
ln -sf /usr/lib/systemd/system/systemd-networkd.service root/etc/systemd/system/multi-user.target.wants/
# bluetoothd would power hci0 up and hold it; the gateway wants it to itself (docs/deployment.md).
ln -sf /dev/null root/etc/systemd/system/bluetooth.service
# systemd's getty generator puts a login prompt on hvc0 when it exists: that line is the controller's.
ln -sf /dev/null root/etc/systemd/system/serial-getty@hvc0.service
# gyrogate.service: After=network-online.target; networkd's wait-online is enough here.
ln -sf /usr/lib/systemd/system/systemd-networkd-wait-online.service root/etc/systemd/system/network-online.target.wants/ 2>/dev/null || true
passwd_root=$(grep -c '^root:' root/etc/passwd)
[ "$passwd_root" = 1 ] && sed -i 's/^root:[^:]*:/root::/' root/etc/shadow
echo "/dev/vda / ext4 defaults 0 1" > root/etc/fstab
test -L root/etc/systemd/system/multi-user.target.wants/gyrogate.service

# 4. root.img
say "root.img (mke2fs -d)"
rm -f root.img
mke2fs -q -t ext4 -d root -L pivm root.img 3G
rm -rf root

# 5. initrd.gz: busybox and the modules that mount the root.
say "initrd.gz"
rm -rf initramfs && mkdir -p initramfs/{bin,dev,proc,sys,newroot,lib/modules}
tar -x -C initramfs -f root.tar ./usr/bin/busybox && mv initramfs/usr/bin/busybox initramfs/bin/busybox && rm -rf initramfs/usr
declare -A seen=()
order=()
add() {
    local name=$1 path deps dep
    path=$(awk -F: -v m="/$name.ko" '{p=$1; sub(/\.(xz|zst|gz)$/, "", p)} index(p, m) > 0 && index(p, m) == length(p) - length(m) + 1 {print $1; exit}' "$modules/modules.dep")
    [ -n "$path" ] || return 0   # built in
    [ -z "${seen[$path]:-}" ] || return 0
    seen[$path]=1
    deps=$(grep -E "^$path:" "$modules/modules.dep" | cut -d: -f2-)
    for dep in $deps; do dep=$(basename "$dep"); add "${dep%%.ko*}"; done
    order+=("$path")
}
for name in virtio_pci virtio_mmio virtio_blk ext4 crc32c_generic crc32c; do add "$name"; done
for path in "${order[@]}"; do
    file="$modules/$path"; base=$(basename "$path"); out="initramfs/lib/modules/${base%%.ko*}.ko"
    case "$path" in
        *.xz) xz -dc "$file" > "$out" ;;
        *.zst) zstd -qdc "$file" > "$out" ;;
        *) cp "$file" "$out" ;;
    esac
    basename "$out" >> initramfs/lib/modules/order
done
cat > initramfs/init <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
[ -f /lib/modules/order ] && while read -r m; do insmod /lib/modules/$m 2>/dev/null; done < /lib/modules/order
for i in $(seq 100); do [ -b /dev/vda ] && break; sleep 0.1; done
mount -t ext4 -o rw /dev/vda /newroot || { echo "init: cannot mount /dev/vda"; ls /dev; poweroff -f; }
umount /proc /sys; mount --move /dev /newroot/dev 2>/dev/null || umount /dev
exec switch_root /newroot /sbin/init
EOF
chmod +x initramfs/init
(cd initramfs && find . | cpio -o -H newc --quiet | gzip -1) > initrd.gz
rm -rf initramfs
echo "modules in initrd: ${#order[@]}" >> kernel.txt
echo "$cache"
