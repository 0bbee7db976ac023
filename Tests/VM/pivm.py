#!/usr/bin/env python3
"""The arm64 package in an aarch64 VM, started by systemd, streaming one board over `hci:0`.

    .venv/bin/python Tests/VM/pivm.py [--deb dist/gyrogate_VERSION_arm64.deb] [--seconds 60] [--json OUT]

Issue #28's last acceptance point. Tests/VM/pivm.sh builds (cached in .build-pivm/) Debian trixie's
arm64 kernel, a trixie arm64 root with the .deb installed, and an initramfs; this boots it with
`qemu-system-aarch64 -M virt -cpu max -accel tcg`. The emulated MetaWear peer
(Tests/Peers/metawear_peer.py) runs here; its controller's H4 port is the VM's virtconsole
(/dev/hvc0; qemu 7.2's virt machine has one PL011), where pivm-btattach.service runs
`btattach -P h4` so hci_uart registers hci0, before systemd starts gyrogate.service. mosquitto runs
in the VM; this script subscribes to it through qemu's user-net hostfwd on 127.0.0.1. Once the
board streams, it counts a window of --seconds, tells the guest (pivm-control.service, over the user
network) to `systemctl stop gyrogate`, and checks every sample the peer sent arrived exactly once
(Tests/Benchmarks/E2E/e2e_bench.py's analysis). Exits 0 with "SKIPPED: <why>" when this machine
cannot build or boot the VM; 1 when the check fails.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Tests", "Benchmarks", "E2E"))
sys.path.insert(0, HERE)
import e2e_bench  # noqa: E402  (analyse, Subscriber, Peer)
from hcivm import PeerProcess  # noqa: E402


def say(msg: str) -> None:
    print(f"[pivm {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deb", help="default: the newest dist/gyrogate_*_arm64.deb")
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--boot-timeout", type=float, default=900.0, help="seconds until the board streams")
    p.add_argument("--h4", choices=["pci-serial", "virtconsole"], default="pci-serial",
                   help="the guest's line to the controller: a PCI 16550 (/dev/ttyS0) or a virtconsole (/dev/hvc0)")
    p.add_argument("--json", metavar="OUT")
    p.add_argument("--keep", action="store_true")
    args = p.parse_args()
    if shutil.which("qemu-system-aarch64") is None:
        print("SKIPPED: qemu-system-aarch64 is missing (apt-get install qemu-system-arm)")
        return 0
    deb = args.deb or max(glob.glob(os.path.join(REPO, "dist", "gyrogate_*_arm64.deb")), key=os.path.getmtime, default=None)
    if not deb:
        print("SKIPPED: no dist/gyrogate_*_arm64.deb (bash deploy/package.sh --arch arm64)")
        return 0
    t_build = time.monotonic()
    built = subprocess.run(["bash", os.path.join(HERE, "pivm.sh"), deb], stdout=subprocess.PIPE, text=True)
    if built.returncode != 0:
        print(f"SKIPPED: the VM cannot be built here (pivm.sh exited {built.returncode}, see above)")
        return 0
    cache = built.stdout.strip().splitlines()[-1]
    build_s = time.monotonic() - t_build
    say(f"images ready in {build_s:.0f} s: {open(os.path.join(cache, 'kernel.txt')).read().strip()}")

    out = tempfile.mkdtemp(prefix="gyrogate-pivm-")
    # The image is modified by the boot (journal, store): boot a copy-on-write overlay of it.
    overlay = os.path.join(out, "root.qcow2")
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", os.path.join(cache, "root.img"), overlay], check=True)
    peer = PeerProcess(1, os.path.join(out, "peer.log"))
    ctl = socket.create_server(("127.0.0.1", 0))
    ctl_port = ctl.getsockname()[1]
    mqtt_port = free_port()
    argv = ["qemu-system-aarch64", "-M", "virt", "-cpu", "max", "-accel", "tcg", "-smp", "2", "-m", "1024",
            "-nographic", "-no-reboot",
            "-kernel", os.path.join(cache, "vmlinuz"), "-initrd", os.path.join(cache, "initrd.gz"),
            "-append", f"console=ttyAMA0 panic=-1 pivm.ctl={ctl_port} pivm.h4={'/dev/ttyS0' if args.h4 == 'pci-serial' else '/dev/hvc0'} systemd.show_status=1",
            "-drive", f"file={overlay},if=none,id=root,format=qcow2", "-device", "virtio-blk-pci,drive=root",
            "-netdev", f"user,id=n0,hostfwd=tcp:127.0.0.1:{mqtt_port}-:1883", "-device", "virtio-net-pci,netdev=n0",
            "-chardev", f"socket,id=h4,host=127.0.0.1,port={peer.hci}",
            *(["-device", "pci-serial,chardev=h4"] if args.h4 == "pci-serial"
              else ["-device", "virtio-serial-pci", "-device", "virtconsole,chardev=h4"]),
            "-serial", "mon:stdio"]
    result: dict = {"h4": args.h4, "deb": os.path.basename(deb), "kernel": open(os.path.join(cache, "kernel.txt")).read().strip(),
                    "images_s": round(build_s, 1)}
    console = open(os.path.join(out, "console.log"), "wb")
    t0 = time.monotonic()
    vm = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT, start_new_session=True)
    say(f"booting (peer H4 {peer.hci}, control {peer.control}, broker at 127.0.0.1:{mqtt_port}), folder {out}")
    rc = 1
    sub = None
    try:
        ctl.settimeout(args.boot_timeout)
        conn, _ = ctl.accept()
        f = conn.makefile("rwb")
        hello = [f.readline().decode().strip() for _ in range(4)]
        result["guest_ready_s"] = round(time.monotonic() - t0, 1)
        say(f"guest's control service: {hello}")
        # the broker, through the hostfwd
        deadline = time.monotonic() + 120
        while True:
            try:
                sub = e2e_bench.Subscriber(mqtt_port)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        control = e2e_bench.Peer(None, 1, out, "pivm", control=f"127.0.0.1:{peer.control}")
        deadline = t0 + args.boot_timeout
        while True:
            sensors = control.sensors()
            if all(s["streaming"] and s["samples_sent"] > 0 for s in sensors):
                break
            if vm.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"board not streaming: {sensors}")
            time.sleep(0.2)
        result["streaming_s"] = round(time.monotonic() - t0, 1)
        say(f"board streaming {result['streaming_s']} s after qemu started; window {args.seconds} s")
        s0 = e2e_bench.totals(control.sensors())
        time.sleep(args.seconds)
        s1 = e2e_bench.totals(control.sensors())
        f.write(b"stop\n")
        f.flush()
        stopped = f.readline().decode().strip()
        say(f"guest: {stopped}")
        report = f.read().decode(errors="replace")
        open(os.path.join(out, "guest-report.txt"), "w").write("\n".join(hello) + "\n" + stopped + "\n" + report)
        sub.wait_quiet(3.0)
        final = control.sensors()
        messages = sub.take()
        with open(os.path.join(out, "messages.jsonl"), "w") as fm:
            for t, topic, payload in messages:
                fm.write(json.dumps({"t": t, "topic": topic, "payload": payload.decode(errors="replace")}) + "\n")
        delivery = e2e_bench.analyse(messages, final, 100)
        result["window_samples"] = s1["samples"] - s0["samples"]
        result["delivery"] = {k: delivery[k] for k in ("expected", "delivered", "duplicates", "gaps", "tail", "mismatches",
                                                        "chunk_documents", "records")}
        ok = (delivery["expected"] > 0 and delivery["delivered"] == delivery["expected"] and delivery["duplicates"] == 0
              and delivery["gaps"] == 0 and delivery["tail"] == 0 and delivery["mismatches"] == 0)
        say(f"delivered {delivery['delivered']}/{delivery['expected']}, duplicates {delivery['duplicates']}, "
            f"gaps {delivery['gaps']}, tail {delivery['tail']}, mismatches {delivery['mismatches']}: {'PASS' if ok else 'FAIL'}")
        rc = 0 if ok else 1
        try:
            vm.wait(120)
        except subprocess.TimeoutExpired:
            say("guest did not power off in 120 s")
    except Exception as e:
        say(f"FAILED: {e}")
        rc = 1
    finally:
        result["wall_s"] = round(time.monotonic() - t0, 1)
        if sub:
            sub.close()
        if vm.poll() is None:
            vm.kill()
            vm.wait(10)
        peer.stop()
        console.close()
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as fj:
            json.dump(result, fj, indent=2)
    if rc != 0:
        print(f"--- console (last 60 lines), folder {out} ---")
        print("\n".join(open(os.path.join(out, "console.log"), errors="replace").read().splitlines()[-60:]))
    elif not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
