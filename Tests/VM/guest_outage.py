#!/usr/bin/env python3
"""Inside the VM (Tests/VM/hcivm.py, scenario c): the controller vanishes and comes back.

The gateway streams over hci:0; a reset of hci0 through the kernel is tried (the kernel refuses
it while the user channel is held); btattach is killed (the kernel unregisters hci0, as when a UART
controller's driver resets or a USB dongle is pulled) and started again after --away seconds (a
new hci0 registers). Checked: the gateway's status names the controller's state while it is
gone and after it is back; streaming resumes without a restart of the gateway; against the
peer's record of what each board produced, every gap stored is exactly what was lost
(Tests/Reliability/case_faults.py's comparison); the store's invariants (each sample once, the
records' arithmetic). The peer runs outside the VM (--peer-control).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Reliability"))
import reliability as rel  # noqa: E402
from reliability import bench  # noqa: E402
import case_faults  # noqa: E402

PID_FILE = "/run/btattach.pid"
TTY = "/dev/ttyS1"
BTATTACH = ["btattach", "-B", TTY, "-P", "h4", "-S", "3000000"]


def _control(peer: bench.Peer, **cmd) -> None:
    reply = peer.call(**cmd)
    if not reply.get("ok"):
        raise RuntimeError(f"peer {cmd}: {reply}")


def controller(gw: rel.Gateway) -> str:
    """The status's controller state without its `hci:0: ` prefix."""
    return str(gw.status().get("radio", {}).get("controller")).split(": ", 1)[-1]


def committed(gw: rel.Gateway) -> int:
    return int(gw.status().get("capture", {}).get("committedSamples") or 0)


def stop_btattach() -> None:
    pid = int(open(PID_FILE).read())
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        try:  # our child when we restarted it; the guest shell's otherwise
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)


def drain_line(quiet_s: float = 1.0, limit_s: float = 20.0) -> int:
    """Reads /dev/ttyS1 (raw, btattach's speed) until it has been quiet for `quiet_s`; the bytes read."""
    import termios
    import tty
    fd = os.open(TTY, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    total = 0
    try:
        tty.setraw(fd)
        attrs = termios.tcgetattr(fd)
        attrs[4] = attrs[5] = termios.B3000000
        attrs[2] |= termios.CRTSCTS
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        deadline = time.monotonic() + limit_s
        last = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - last < quiet_s:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                chunk = b""
            if chunk:
                total += len(chunk)
                last = time.monotonic()
            else:
                time.sleep(0.02)
        termios.tcflush(fd, termios.TCIFLUSH)
    finally:
        os.close(fd)
    return total


def reattach(peer: bench.Peer, sensors: int, figures: dict) -> None:
    """Starts btattach again on a clean line.

    The peer's controller went on sending (the boards' notifications) while btattach was gone:
    qemu holds those bytes, and the kernel dropped a frame's head when it closed the tty, so the
    line would resume mid-frame. hci_uart's H4 has no resync: the kernel logs "Frame reassembly
    failed (-84)", can lose the answer to its HCI Reset ("Opcode 0x0c03 failed: -110"), and then
    the new hci0 stays in setup for good (the kernel clears HCI_SETUP only when the first power-on
    succeeds): every user channel bind fails with EBUSY (seen on a loaded machine). A controller
    that was reset or plugged in again starts clean: so the boards stop sending (their samples
    are lost, as they were anyway) and the line is drained before btattach starts again; they
    speak again once hci_uart holds the line (hci0 registered), as bytes that came while btattach
    was still setting the line up would be flushed mid-frame."""
    for i in range(sensors):
        _control(peer, cmd="silent", sensor=i, seconds=0)
    figures.setdefault("line_drained_bytes", []).append(drain_line())
    with open("/mnt/out/btattach.log", "ab") as log:
        again = subprocess.Popen(BTATTACH, stdout=log, stderr=log, start_new_session=True)
    with open(PID_FILE, "w") as f:
        f.write(str(again.pid))
    t0 = time.monotonic()
    while not os.path.exists("/sys/class/bluetooth/hci0") and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    for i in range(sensors):
        _control(peer, cmd="silent", sensor=i, seconds=-1)


def kernel_log_count(text: str) -> int:
    """How many lines of the kernel's log so far hold `text`."""
    dmesg = subprocess.run(["dmesg"], capture_output=True, text=True, errors="replace").stdout
    return dmesg.count(text)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--peer-control", required=True)
    p.add_argument("--gateway", required=True)
    p.add_argument("--sensors", type=int, default=2)
    p.add_argument("--away", type=float, default=10.0)
    p.add_argument("--json")
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="gyrogate-outage-")
    procs = bench.Processes()
    checks: list[tuple[bool, str]] = []
    figures: dict = {}
    try:
        _broker, port = bench.start_broker(procs, tmp)
        peer = bench.Peer(procs, args.sensors, tmp, "outage", control=args.peer_control)
        config = rel.write_config(tmp, 0, port, sensors=args.sensors, odr=case_faults.ODR, commit_ms=200)
        with open(config) as f:
            data = json.load(f)
        data["bluetooth"]["transport"] = "hci:0"
        with open(config, "w") as f:
            json.dump(data, f)
        gw = rel.Gateway(procs, args.gateway, config, os.path.join(tmp, "gateway.log"))
        gw.wait_admin(120)
        figures["to_streaming_s"] = rel.wait_streaming(peer, gw, timeout=180)
        gw.run_for(5)
        before = controller(gw)
        # A reset through the kernel (HCIDEVRESET) of an adapter whose user channel is held.
        reset = subprocess.run(["hciconfig", "hci0", "reset"], capture_output=True, text=True)
        figures["kernel_reset"] = (reset.stdout + reset.stderr).strip() or f"exit {reset.returncode}"
        base = committed(gw)
        gw.run_for(3)
        checks.append((committed(gw) > base and controller(gw).startswith("running"),
                       f"hci0 reset through the kernel while held ({figures['kernel_reset']!r}): streaming went on"))

        stop_btattach()
        t_gone = time.monotonic()
        states: list[tuple[float, str]] = []  # (seconds since btattach was killed, state) on change

        def follow() -> str:
            state = controller(gw)
            if not states or states[-1][1] != state:
                states.append((round(time.monotonic() - t_gone, 1), state))
            return state
        while time.monotonic() - t_gone < args.away:
            follow()
            gw.run_for(0.5)
        away_states = {state for _, state in states}
        h4_errors = kernel_log_count("Frame reassembly failed")
        resets_failed = kernel_log_count("Opcode 0x0c03 failed")
        reattach(peer, args.sensors, figures)
        t_back = time.monotonic()
        # Resumed: the controller runs again and samples are committed after that.
        resumed = None
        base = None
        figures["reattached"] = 0
        while time.monotonic() - t_back < 60 + 30 * figures["reattached"]:
            if figures["reattached"] < 2 and kernel_log_count("Opcode 0x0c03 failed") > resets_failed:
                # The new hci0's HCI Reset went unanswered all the same: it stays in setup until it
                # registers again (the kernel's doing, not the gateway's): attach it once more, as
                # the gateway's EBUSY message tells a person to.
                resets_failed = kernel_log_count("Opcode 0x0c03 failed")
                figures["reattached"] += 1
                stop_btattach()
                reattach(peer, args.sensors, figures)
            state = follow()
            if state.startswith("running"):
                base = committed(gw) if base is None else base
                if committed(gw) > base:
                    resumed = time.monotonic() - t_back
                    break
            gw.run_for(0.2)
        figures["resumed_after_s"] = resumed
        # Informational: a few are harmless when the kernel's HCI Reset still got its answer.
        figures["h4_reassembly_errors_after_restart"] = kernel_log_count("Frame reassembly failed") - h4_errors
        after = controller(gw) if resumed is not None else None
        gw.run_for(5)
        code, seconds = gw.terminate()
        stop_btattach()

        figures.update(before=before, states=states, after=after)
        checks.append((code == 0, f"SIGTERM: exit {code} after {seconds:.1f} s"))
        checks.append((before.startswith("running"), f"before: controller {before!r}"))
        checks.append((any(s.startswith("unavailable") for s in away_states),
                       f"while btattach was gone the status named it: {sorted(away_states)}"))
        checks.append((resumed is not None, f"streaming resumed {resumed} s after btattach restarted, the same gateway process"))
        checks.append((after is not None and "re-opened after 1 loss" in after, f"after: controller {after!r}"))
        path = rel.store_path(os.path.join(tmp, "data"))
        store = rel.read_store(args.gateway, path)  # through `gyrogate store dump`
        stored = case_faults._stored_samples(store)
        per_device = {}
        for sensor in peer.sensors():
            device = sensor["address"][:17].upper()
            # The stamps are compared with the peer's clock, which is another machine's here.
            checks += [c for c in case_faults._compare(device, stored.get(device, []), sensor["gyro_runs"])
                       if "every stamp" not in c[1]]
            per_device[device] = {"stored": len(stored.get(device, [])), "sent": sensor["samples_sent"]}
        for s in store.sessions:
            per_device[s["device"].upper()].setdefault("sessions", []).append(
                {"expected": s["expected"], "samples": s["samples"], "missing": rel.gaps_missing(s["gaps"])})
        figures["per_device"] = per_device
        checks += rel.invariants(args.gateway, path, odr=case_faults.ODR)
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        checks.append((False, f"{type(error).__name__}: {error}"))
    finally:
        procs.stop_all()
        log = os.path.join(tmp, "gateway.log")
        if os.path.isdir("/mnt/out") and os.path.exists(log):
            shutil.copy(log, "/mnt/out/gateway.log")
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                lines = [line.rstrip() for line in f if " warning " in line or " error " in line]
            figures["gateway_log"] = lines[:20]
    if not all(ok for ok, _ in checks):
        # The kernel's side of a failure (hci_uart's reassembly errors, a timed-out command).
        dmesg = subprocess.run(["dmesg"], capture_output=True, text=True, errors="replace").stdout
        figures["kernel_log"] = [line for line in dmesg.splitlines() if "Bluetooth" in line or "hci" in line][-30:]
    for ok, text in checks:
        print(("ok   " if ok else "FAIL ") + text)
    print(json.dumps(figures, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"checks": [[ok, text] for ok, text in checks], "figures": figures}, f, indent=2)
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
