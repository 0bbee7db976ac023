#!/usr/bin/env python3
"""The gateway over the kernel's Bluetooth stack (`hci:0`), in a VM booting Debian's kernel.

    .venv/bin/python Tests/VM/hcivm.py [--quick | --full] [--scenarios a,b,...] [--gateway PATH] [--json OUT]

The emulated MetaWear peer (Tests/Peers/metawear_peer.py) runs here; its controller's H4 port is
the VM's second serial line, where `btattach -P h4` makes the kernel's hci_uart driver register
hci0, as a Pi's on-board UART controller is. The gateway, mosquitto and the checker
(Tests/Benchmarks/E2E/e2e_bench.py, Tests/VM/guest_outage.py) run inside the VM, on its loopback;
they reach the peer's control channel (and, for tcp:, its H4 port) through qemu's user network,
where 10.0.2.2 is this machine's 127.0.0.1. One boot per scenario (Tests/VM/hcivm.sh builds and
caches the kernel and initramfs):

  a  stream:  N boards at 100 Hz over hci:0, every sample delivered once (e2e checker)
  b  held:    hci0 powered up through mgmt first; the gateway takes the adapter (or names the fix)
  c  outage:  btattach killed for 10 s and restarted; streaming resumes without a gateway restart,
              the gaps recorded exactly, `gyrogate status` names the controller's state
  d  caps:    the gateway as a non-root user with only the systemd unit's capabilities
  e  fast:    N boards at 400 Hz over hci:0
  f  bench:   CPU per million samples over tcp: and hci:0 in the same VM (tcp: first, or
              hci:0 first with --hci-first: alternate the order between runs)

Honest time (issue 38; Tests/VM/guest_time_check.py runs them, Tests/VM/guest_clock.py steps the
guest's clock with adjtimex ADJ_SETOFFSET, as chrony does, and sets or clears STA_UNSYNC with adjtimex, as an NTP client
would; true time is the peer's clock, on this machine, whose offset from the guest's is measured
before and after every change). Two boards at 100 Hz over hci:0, chunks of 500 points, their
crystals 20 ppm fast and 20 ppm slow (--board-drift-ppm; the peer's truth follows each):
  t  forward step: the guest's clock 3 days behind and unsynchronised when the gateway starts;
              15 s into streaming stepped to true and synchronised; 35 s in all
  u  backward step: true and synchronised; 15 s into streaming stepped back 1 h (synchronised
              again at once); 35 s in all; true time is then the stepped clock (peer - 3600 s)
  v  board time: 15 s synchronised; SIGTERM; the clock 3 days behind and unsynchronised; the
              gateway again on the same store, the boards still streaming (not reset); 15 s;
              synchronised; 10 s
  w  a kill during the re-dating: as t, but SIGKILLed 0.3 s after the step (the re-dating
              takes about a second); started again on the same store, the clock true; 10 s.
              Each session of the killed run wholly before the re-dating or wholly after it
  Each ends with SIGTERM (sessions closed, the outbox published) and checks the last version
  of every document: every sample once; each sample's timestamp within 20 ms of its true time
  (v: the part dated by the boards within 20 ms + --drift-ppm); no records or daily session at
  the path of a wrong time; `gyrogate sessions --range today` and the medals those of the true
  day; the `clock` of `gyrogate status` printed per phase (required with --strict-clock).

--quick (CI): a with 2 boards for 20 s, c, and t, u, v, w with --strict-clock. Full (default): 4 boards, 60 s windows, every
scenario. Outside CI, exits 0 with "SKIPPED: <why>" when this machine cannot run the VM (no
qemu, no Debian registry). Under CI=true the VM must run: a VM that cannot be built is a
failure (exit 1); only a capability the machine lacks (not root) is skipped, printed and
counted. Exits 1 when a scenario fails. (No /dev/kvm is no reason: qemu's TCG runs the guest.)
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PEER = os.path.join(REPO, "Tests", "Peers", "metawear_peer.py")
E2E = os.path.join(REPO, "Tests", "Benchmarks", "E2E", "e2e_bench.py")


def say(msg: str) -> None:
    print(f"[hcivm {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def lacking_capability() -> str | None:
    """What this machine cannot give the VM whatever is installed, or None. Root only: the guest
    shares this machine's root over 9p and runs the gateway as root and as a user. (No /dev/kvm
    is not one: qemu's TCG runs the guest, more slowly.)"""
    if os.geteuid() != 0:
        return "not root: the guest shares this root and runs the gateway as root and as a user"
    return None


def accelerator() -> list[str]:
    """KVM only where it runs a stock kernel: vmx/svm in the CPU flags and no nested kvm_pvm
    (which runs only PVM guests: Debian's kernel hangs in its decompressor there)."""
    try:
        flags = open("/proc/cpuinfo").read()
        modules = open("/proc/modules").read()
    except OSError:
        flags = modules = ""
    if os.access("/dev/kvm", os.R_OK | os.W_OK) and (" vmx" in flags or " svm" in flags) and "kvm_pvm" not in modules:
        return ["-accel", "kvm", "-cpu", "host"]
    return ["-accel", "tcg", "-cpu", "max"]


class PeerProcess:
    """The emulated boards and their controller, here; H4 port and control port on 127.0.0.1."""

    def __init__(self, sensors: int, log: str, drift_ppm: tuple[float, ...] = ()):
        self.log = open(log, "wb")
        drift = [f"--drift-ppm={i}={ppm:g}" for i, ppm in enumerate(drift_ppm)]
        self.proc = subprocess.Popen([sys.executable, PEER, "--hci-port", "0", "--control-port", "0",
                                      "--sensors", str(sensors), "--exit-with-parent", *drift],
                                     stdout=subprocess.PIPE, stderr=self.log, start_new_session=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline().decode().split() if ready else []
        if not line or line[0] != "READY":
            raise RuntimeError(f"peer did not start (got {line!r})")
        ports = dict(p.split("=") for p in line[1:])
        self.hci, self.control = int(ports["hci"]), int(ports["control"])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.log.close()


GUEST_PRELUDE = """\
set -u
ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2
cd {repo}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
start_btattach() {{
    btattach -B /dev/ttyS1 -P h4 -S 3000000 >> /mnt/out/btattach.log 2>&1 &
    echo $! > /run/btattach.pid
}}
wait_hci0() {{
    for i in $(seq 600); do [ -e /sys/class/bluetooth/hci0 ] && return 0; sleep 0.1; done
    echo "hci0 did not appear"; return 1
}}
echo "guest: up at $(cut -d' ' -f1 /proc/uptime) s"
start_btattach
wait_hci0 || exit 1
echo "guest: hci0 at $(cut -d' ' -f1 /proc/uptime) s"
"""


def boot(cache: str, out: str, script: str, h4_port: int, timeout: float) -> tuple[int | None, float]:
    """Boots the VM with `script` as /mnt/out/guest.sh; returns its exit code (None on a timeout)
    and the wall time."""
    with open(os.path.join(out, "guest.sh"), "w") as f:
        f.write(script)
    argv = ["qemu-system-x86_64", *accelerator(), "-m", "1024", "-smp", "2", "-nographic", "-no-reboot",
            "-kernel", os.path.join(cache, "vmlinuz"), "-initrd", os.path.join(cache, "initrd.gz"),
            # gyrogate.vm=1: guest_clock.py changes no clock without it (never this machine's).
            "-append", "console=ttyS0 quiet panic=-1 gyrogate.vm=1",
            "-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot",
            "-fsdev", f"local,id=out,path={out},security_model=none",
            "-device", "virtio-9p-pci,fsdev=out,mount_tag=out",
            "-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0",
            # nodelay: with Nagle's algorithm on this socket, the guest's small HCI writes waited up
            # to 40 ms for the peer's delayed ACK, a one-way delay of the test bed's own (it put
            # the boards' tick 0 about 20 ms early; no radio link delays one direction so).
            "-serial", "mon:stdio", "-serial", f"tcp:127.0.0.1:{h4_port},nodelay=on"]
    t0 = time.monotonic()
    with open(os.path.join(out, "console.log"), "wb") as console:
        vm = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            vm.wait(timeout)
        except subprocess.TimeoutExpired:
            vm.kill()
            vm.wait(10)
            return None, time.monotonic() - t0
    try:
        return int(open(os.path.join(out, "guest.rc")).read().strip()), time.monotonic() - t0
    except (OSError, ValueError):
        return None, time.monotonic() - t0


def e2e(args, peer: PeerProcess, *, sensors: int, odr: int, seconds: float, json_name: str,
        transport: str = "hci:0", extra: str = "") -> str:
    return (f"{args.guest_python} {E2E} --sensors {sensors} --odr {odr} --seconds {seconds} --warmup 2 "
            f"--peer-control 10.0.2.2:{peer.control} --transport {transport} --gateway {args.gateway} "
            f"--startup-timeout 180 --check --json /mnt/out/{json_name} {extra}")


def scenario_script(name: str, args, peer: PeerProcess, tcp_peer: PeerProcess | None) -> str:
    s = GUEST_PRELUDE.format(repo=REPO)
    n, window = args.sensors, args.seconds
    if name == "a":
        s += e2e(args, peer, sensors=n, odr=100, seconds=window, json_name="a.json") + "\n"
    elif name == "e":
        s += e2e(args, peer, sensors=n, odr=400, seconds=window, json_name="e.json") + "\n"
    elif name == "b":
        # Up through the kernel's management interface, as bluetoothd would hold it.
        # (the kernel's own setup of a new adapter answers "Invalid Index" until it is done).
        s += ("for i in $(seq 100); do btmgmt --index 0 power on 2>&1 | grep -q 'powered' && break; sleep 0.3; done\n"
              "hciconfig hci0 | grep -q 'UP RUNNING' || { echo 'hci0 did not come up'; hciconfig hci0; exit 1; }\n"
              "echo 'guest: hci0 is up, as bluetoothd would leave it'\n")
        # doctor leaves it up and says who can take it: root can, a user without capabilities
        # is told the fix.
        s += ("sed 's|tcp:127.0.0.1:7001|hci:0|; s|\"data\"|\"/tmp/doctor\"|; s|data/admin.sock|/tmp/doctor/admin.sock|' config.json > /tmp/doctor.json\n"
              "mkdir -p /tmp/doctor && chmod 777 /tmp/doctor\n"
              f"{args.gateway} doctor --config /tmp/doctor.json | grep -i -A1 'transport' | tee /mnt/out/doctor-root.txt\n"
              f"setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "
              f"{args.gateway} doctor --config /tmp/doctor.json | grep -i -A2 'transport' | tee /mnt/out/doctor-user.txt\n"
              "grep -q 'brings it down when it starts' /mnt/out/doctor-root.txt || { echo 'doctor (root) did not say it takes hci0'; exit 1; }\n"
              "grep -q 'setcap cap_net_admin' /mnt/out/doctor-user.txt || { echo 'doctor (no capabilities) did not name the fix'; exit 1; }\n"
              "hciconfig hci0 | grep -q 'UP RUNNING' || { echo 'doctor brought hci0 down'; exit 1; }\n")
        s += e2e(args, peer, sensors=2, odr=100, seconds=10, json_name="b.json") + " | tee /tmp/b.txt\n"
        s += "grep -q 'hci0 was up: brought it down' /tmp/b.txt || { echo 'the gateway did not say it took hci0'; exit 1; }\n"
    elif name == "d":
        s += "useradd --system --no-create-home gyrogate\n"
        # While it streams: its user and capabilities (CAP_NET_ADMIN and CAP_NET_RAW are bits 12, 13).
        during = ("for p in $(pgrep -x gyrogate); do grep -E \"^(Uid|CapEff)\" /proc/$p/status; done > /mnt/out/d-ids.txt")
        s += e2e(args, peer, sensors=2, odr=100, seconds=10, json_name="d.json",
                 extra=f"--run-as gyrogate --during '{during}'") + "\n"
        s += ("cat /mnt/out/d-ids.txt\n"
              "grep -q 'CapEff:.0000000000003000' /mnt/out/d-ids.txt && awk '/^Uid:/ && $2 == 0 {exit 1}' /mnt/out/d-ids.txt"
              " || { echo 'the gateway did not run as a user with only CAP_NET_ADMIN and CAP_NET_RAW'; exit 1; }\n")
    elif name == "c":
        s += (f"{args.guest_python} {os.path.join(HERE, 'guest_outage.py')} --peer-control 10.0.2.2:{peer.control} "
              f"--gateway {args.gateway} --sensors 2 --away 10 --json /mnt/out/c.json\n")
    elif name in ("t", "u", "v", "w"):
        clock = f"{args.guest_python} {os.path.join(HERE, 'guest_clock.py')}"
        control = f"10.0.2.2:{peer.control}"
        s += f"{clock} state\n{clock} offset --peer-control {control}\n"
        s += (f"{args.guest_python} {os.path.join(HERE, 'guest_time_check.py')} --scenario {name} --peer-control {control} "
              f"--gateway {args.gateway} --sensors 2 --odr 100 --drift-ppm {args.drift_ppm:g} --json /mnt/out/{name}.json"
              + (" --strict-clock" if args.strict_clock else "")
              + (f" --kill-after {args.kill_after:g}" if name == "w" else "")
              + (f" --log-level {args.gateway_log_level}" if args.gateway_log_level else "") + "\n")
    elif name == "f":
        runs = [e2e(args, tcp_peer, sensors=n, odr=100, seconds=window, json_name="f-tcp.json",
                    transport=f"tcp:10.0.2.2:{tcp_peer.hci}"),
                e2e(args, peer, sensors=n, odr=100, seconds=window, json_name="f-hci.json")]
        s += "set -e\n" + "\n".join(reversed(runs) if args.hci_first else runs) + "\n"
    return s


def summarise(name: str, out: str) -> dict:
    """The figures a scenario left in the run's folder."""
    result: dict = {}
    for path in sorted(os.listdir(out)):
        if path.endswith(".json"):
            with open(os.path.join(out, path)) as f:
                data = json.load(f)
            if "checks" in data and "timestamps" in data.get("figures", {}):
                fig = data["figures"]
                result[path[:-5]] = {"failed": [text for ok, text in data["checks"] if ok is False],
                                     "timestamps": fig["timestamps"], "offsets_ms": {o["at"]: o["offset_ms"] for o in fig["offsets"]},
                                     "clock_states": fig.get("clock_states"), "runs": fig.get("runs")}
            elif "phases" in data:
                g = data["phases"]["gyrogate"]
                d = g["delivery"]
                result[path[:-5]] = {"sensors": data["sensors"], "odr_hz": data["odr_hz"], "window_s": round(g["window_s"], 1),
                                     "expected": d["expected"], "delivered": d["delivered"], "duplicates": d["duplicates"],
                                     "gaps": d["gaps"], "tail": d["tail"], "mismatches": d["mismatches"],
                                     "cpu_s_per_M_samples": g["cpu_s_per_M_samples"],
                                     "cpu_us_per_notification": g["cpu_us_per_notification"],
                                     "time_to_stream_s": g["time_to_stream_s"], "check_failures": data["check_failures"]}
            else:
                result[path[:-5]] = data
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="CI form: a (2 boards, 20 s), c, and t, u, v, w (strict clock)")
    p.add_argument("--scenarios", help="comma-separated letters (default: all, or a,c with --quick)")
    p.add_argument("--sensors", type=int)
    p.add_argument("--seconds", type=float)
    p.add_argument("--gateway", help="the gateway binary (default: release if built, else debug)")
    p.add_argument("--hci-first", action="store_true", help="f: hci:0 before tcp: (alternate the order between runs)")
    p.add_argument("--json", metavar="OUT")
    p.add_argument("--keep", action="store_true", help="keep the run folders (console, logs)")
    p.add_argument("--boot-timeout", type=float, default=600, help="seconds per scenario, boot included")
    p.add_argument("--strict-clock", action="store_true", help="t, u, v: require the clock state in `gyrogate status`")
    p.add_argument("--drift-ppm", type=float, default=50.0, help="v: drift bound of the boards' clocks while they date samples")
    p.add_argument("--kill-after", type=float, default=0.3,
                   help="w: seconds from the step to the SIGKILL (0.3: while the re-dating runs; 3: after it)")
    p.add_argument("--board-drift-ppm", type=float, default=20.0,
                   help="t, u, v: the emulated crystals' drift (board 1 fast, board 2 slow by this)")
    p.add_argument("--gateway-log-level", metavar="LEVEL", help="t, u, v: the gateway's LOG_LEVEL (its log lands in the run's folder)")
    args = p.parse_args()
    args.sensors = args.sensors or (2 if args.quick else 4)
    args.seconds = args.seconds or (20 if args.quick else 60)
    scenarios = (args.scenarios or ("a,c,t,u,v,w" if args.quick else "a,b,c,d,e,f,t,u,v,w")).split(",")
    args.strict_clock = args.strict_clock or args.quick
    unknown = [name for name in scenarios if name not in "abcdeftuvw" or len(name) != 1]
    if unknown:
        p.error(f"unknown scenarios {unknown} (a-f, t-w)")
    if not args.gateway:
        release = os.path.join(REPO, ".build", "release", "gyrogate")
        args.gateway = release if os.access(release, os.X_OK) and not args.quick else os.path.join(REPO, ".build", "debug", "gyrogate")
    args.gateway = os.path.abspath(args.gateway)
    args.guest_python = os.path.join(REPO, ".venv", "bin", "python")

    ci = os.environ.get("CI", "").lower() == "true"
    lacking = lacking_capability()
    if lacking:
        # Counted, so that a CI summary can tell a skip from a pass.
        print(f"SKIPPED: {lacking} (a capability this machine lacks); skipped parts: 1, scenarios run: 0 of {len(scenarios)}")
        return 0
    built = subprocess.run(["bash", os.path.join(HERE, "hcivm.sh")], capture_output=True, text=True)
    if built.returncode != 0:
        why = (built.stderr or built.stdout).strip().splitlines()
        why = why[-1] if why else f"hcivm.sh exited with {built.returncode}"
        if ci:
            print(f"FAILED: the VM cannot be built here ({why}); under CI=true that is a failure, not a skip")
            return 1
        print(f"SKIPPED: the VM cannot be built here: {why}")
        return 0
    cache = built.stdout.strip().splitlines()[-1]
    say(f"kernel {open(os.path.join(cache, 'kernel.txt')).read().strip()}; accelerator {' '.join(accelerator())}")

    results: dict = {}
    failed = []
    t_all = time.monotonic()
    for name in scenarios:
        out = tempfile.mkdtemp(prefix=f"gyrogate-vm-{name}-")
        # The time scenarios' boards keep time with crystals off by the nRF52's LFXO tolerance
        # (±20 ppm), one fast and one slow: the truth is the peer's own clock for each.
        timed = name in ("t", "u", "v", "w")
        peer = PeerProcess(args.sensors if name not in ("b", "c", "d", "t", "u", "v", "w") else 2, os.path.join(out, "peer.log"),
                           drift_ppm=(args.board_drift_ppm, -args.board_drift_ppm) if timed else ())
        tcp_peer = PeerProcess(args.sensors, os.path.join(out, "peer-tcp.log")) if name == "f" else None
        say(f"scenario {name}: booting (peer H4 {peer.hci}, control {peer.control}), folder {out}")
        try:
            rc, wall = boot(cache, out, scenario_script(name, args, peer, tcp_peer), peer.hci, args.boot_timeout)
        finally:
            peer.stop()
            if tcp_peer:
                tcp_peer.stop()
        guest_log = open(os.path.join(out, "guest.log"), errors="replace").read() if os.path.exists(os.path.join(out, "guest.log")) else ""
        boot_s = next((float(line.split()[3]) for line in guest_log.splitlines() if line.startswith("guest: up at")), None)
        results[name] = {"rc": rc, "wall_s": round(wall, 1), "guest_up_s": boot_s, "figures": summarise(name, out)}
        ok = rc == 0
        say(f"scenario {name}: {'passed' if ok else 'FAILED'} (rc {rc}) in {wall:.0f} s, guest up after {boot_s} s")
        if not ok:
            failed.append(name)
            print(f"--- scenario {name}: guest.log (last 40 lines) ---\n" + "\n".join(guest_log.splitlines()[-40:]))
        if ok and not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    total = time.monotonic() - t_all
    print(json.dumps(results, indent=1))
    print(f"hcivm: {len(scenarios) - len(failed)}/{len(scenarios)} scenarios passed in {total:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"scenarios": results, "total_s": total, "gateway": args.gateway}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
