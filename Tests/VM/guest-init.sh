#!/bin/busybox sh
# /init of the kernel-stack VM (Tests/VM/hcivm.sh builds the initramfs around it): loads the
# modules, mounts the host's root read-only over 9p under a tmpfs overlay, the run's folder
# (9p tag "out", writable) at /mnt/out inside it, and runs /mnt/out/guest.sh there as root.
# Its exit code lands in /mnt/out/guest.rc; then the VM powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
while read -r module; do
    insmod "/lib/modules/$module" 2>/dev/null || echo "init: insmod $module failed"
done < /lib/modules/order
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /mnt/host || { echo "init: no 9p root"; poweroff -f; }
mount -t tmpfs -o size=768m tmpfs /mnt/upper
mkdir -p /mnt/upper/upper /mnt/upper/work
mount -t overlay overlay -o lowerdir=/mnt/host,upperdir=/mnt/upper/upper,workdir=/mnt/upper/work /mnt/root
mkdir -p /mnt/root/mnt/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /mnt/root/mnt/out || { echo "init: no out share"; poweroff -f; }
# /tmp stays the overlay's (writable in the tmpfs above): a tmpfs of its own would hide a
# checkout that lives under the host's /tmp, and the gateway and tests the guest runs from it.
exec chroot /mnt/root /bin/sh -c '
    mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
    mount -t tmpfs tmpfs /run; mkdir -p /dev/pts /dev/shm
    mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
    out=/mnt/out
    ip link set lo up
    sh $out/guest.sh > $out/guest.log 2>&1
    echo $? > $out/guest.rc
    sync
    echo o > /proc/sysrq-trigger
    sleep 30'
