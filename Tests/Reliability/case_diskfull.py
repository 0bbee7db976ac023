"""diskfull: the data directory's filesystem fills up under a streaming gateway.

A 30 MB tmpfs holds the data directory; 4 sensors stream at 400 Hz (packed) with a 200 ms commit
interval and `retention.maxStoreBytes` far above the disk's size, so only the disk limits the
store. A filler file takes the disk's free space (all but 64 KB, so that capture itself hits
the wall within seconds: with chunks stored compact the store grows slowly, even at
this load), later it is deleted, then the disk is filled again and the gateway stopped with
SIGTERM while full. The gateway runs with a systemd notify socket and a 2 s watchdog, read here.

Checks (issue "Loses nothing, says so", disk full):
- the status says `full` no later than the first failed commit (within one commit interval);
- RSS grows by at most 15 MB while full;
- the STATUS line says `store: full (…)` and watchdog keep-alives go on (no restart for this);
- commits resume within 10 s of space returning, and the status says `ok` again;
- after SIGTERM while full: exit 0, integrity ok, every record `expected - samples ==
  sum(gap.missing)`, every stored sample once and equal to the waveform, and `expected` covers
  what the sensors sent.
Skipped where a tmpfs cannot be mounted.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time

import reliability as rel
from reliability import bench

DISK_BYTES = 30 << 20
SENSORS, ODR, COMMIT_MS = 4, 400, 200
RSS_GROWTH_MB = 15


class NotifySocket:
    """The systemd side of sd_notify: a datagram socket the gateway writes READY/STATUS/WATCHDOG
    to, read as they come (as systemd does) by a thread that stamps each message's arrival."""

    def __init__(self, path: str):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.messages: list[tuple[float, str]] = []
        self.open = True
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while self.open:
            try:
                data = self.sock.recv(65536)
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            for line in data.decode(errors="replace").splitlines():
                self.messages.append((time.monotonic(), line))

    def since(self, t: float) -> list[str]:
        return [m for at, m in list(self.messages) if at >= t]

    def close(self) -> None:
        self.open = False
        self.reader.join(timeout=1)
        self.sock.close()


def fill(path: str, directory: str, leave: int) -> None:
    """Writes `path` until the filesystem of `directory` has at most `leave` bytes free."""
    block = b"\xab" * (1 << 20)
    with open(path, "ab") as f:
        while True:
            free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
            if free <= leave:
                return
            try:
                f.write(block[:max(4096, min(len(block), free - leave))])
                f.flush()
            except OSError:
                return


def run(ctx) -> list[tuple[bool | None, str]]:
    tmp = ctx.tmpdir("diskfull")
    disk = os.path.join(tmp, "disk")
    os.makedirs(disk)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", disk],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        return [(None, f"cannot mount a {DISK_BYTES >> 20} MB tmpfs ({mounted.stderr.strip()}): needs root or "
                       "CAP_SYS_ADMIN; the disk-full case did not run")]
    notify = NotifySocket(os.path.join(tmp, "notify.sock"))
    try:
        return _run(ctx, tmp, disk, notify)
    finally:
        notify.close()
        ctx.procs.stop_all()
        subprocess.run(["umount", "-l", disk], capture_output=True)


def _status(gw: rel.Gateway) -> dict:
    st = gw.status()
    return {"state": st["store"].get("state"), "failed": st["capture"]["failedCommits"], "commits": st["capture"]["commits"],
            "notKept": st["store"].get("notKeptSamples", 0), "free": st["store"].get("diskFreeBytes")}


def _run(ctx, tmp: str, disk: str, notify: NotifySocket) -> list[tuple[bool | None, str]]:
    out: list[tuple[bool | None, str]] = []
    full_seconds = 8 if ctx.quick else 30
    data = os.path.join(disk, "data")
    filler = os.path.join(disk, "filler")
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "diskfull")
    config = rel.write_config(tmp, peer.hci, ctx.broker_port, sensors=SENSORS, odr=ODR, commit_ms=COMMIT_MS, data_dir=data)
    with open(config) as f:
        tree = json.load(f)
    tree["retention"] = {"maxStoreBytes": 1 << 30}
    with open(config, "w") as f:
        json.dump(tree, f, indent=2)
    env = dict(os.environ, NOTIFY_SOCKET=notify.path, WATCHDOG_USEC="2000000")
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway.log"), env=env)
    gw.wait_admin()
    rel.wait_streaming(peer, gw)
    gw.run_for(3)
    base_rss = rel.memory_kb(gw.pid)[1]

    # 1. The disk fills up under capture.
    fill(filler, disk, leave=64 << 10)
    filled = time.monotonic()
    state_at_first_failure = None
    became_full = None
    while time.monotonic() - filled < 120:
        s = _status(gw)
        if s["failed"] > 0 and state_at_first_failure is None:
            state_at_first_failure = s["state"]
        if s["state"] == "full":
            became_full = time.monotonic()
            break
        gw.run_for(0.05)
    if became_full is None:
        return out + [(False, f"the store never said full within 120 s of the disk filling; see {gw.log_path}")]
    out.append((state_at_first_failure in (None, "full"),
                f"the status said full {became_full - filled:.1f} s after the disk was filled, by the first failed commit "
                f"(state then: {state_at_first_failure or 'full'})"))

    # 2. Full for a while: memory, STATUS line, keep-alives.
    peak = 0
    deadline = time.monotonic() + full_seconds
    while time.monotonic() < deadline:
        peak = max(peak, rel.memory_kb(gw.pid)[1])
        gw.run_for(0.2)
    s = _status(gw)
    out.append((s["state"] == "full", f"still full after {full_seconds} s ({s['notKept']} samples not kept, {s['free']} bytes free)"))
    growth = (peak - base_rss) / 1024
    out.append((growth <= RSS_GROWTH_MB, f"RSS grew {growth:.1f} MB while full (from {base_rss / 1024:.1f} MB; at most {RSS_GROWTH_MB} MB)"))
    lines = notify.since(became_full)
    statuses = [m for m in lines if m.startswith("STATUS=")]
    keepalives = sum(1 for m in lines if m == "WATCHDOG=1")
    out.append((any("store: full" in m for m in statuses), f"the systemd STATUS line says so: {statuses[-1] if statuses else 'none'}"))
    out.append((keepalives >= full_seconds // 2, f"{keepalives} watchdog keep-alives while full (a restart cannot make space)"))

    # 3. Space returns.
    before = _status(gw)["commits"]
    os.unlink(filler)
    freed = time.monotonic()
    resumed = None
    while time.monotonic() - freed < 30:
        s = _status(gw)
        if s["state"] == "ok" and s["commits"] > before:
            resumed = time.monotonic() - freed
            break
        gw.run_for(0.05)
    out.append((resumed is not None and resumed <= 10,
                f"commits resumed and the store said ok {resumed:.1f} s after space returned" if resumed is not None
                else "the store never said ok within 30 s of space returning"))

    # 4. Full again, then SIGTERM.
    gw.run_for(2)
    fill(filler, disk, leave=0)
    refilled = time.monotonic()
    while _status(gw)["state"] != "full" and time.monotonic() - refilled < 60:
        gw.run_for(0.05)
    gw.run_for(2)
    code, seconds = gw.terminate()
    out.append((code == 0, f"SIGTERM while full: exit {code} after {seconds:.1f} s"))
    sent = rel.sent_per_device(peer)
    path = rel.store_path(data)
    os.unlink(filler)  # room for the reader's -shm, which grows with the WAL's frames
    out += rel.invariants(ctx.gateway, path, odr=ODR)
    sessions = rel.read_store(ctx.gateway, path).sessions
    expected: dict[str, int] = {}
    for s in sessions:
        expected[s["device"].upper()] = expected.get(s["device"].upper(), 0) + s["expected"]
    missing = sum(s["expected"] - s["samples"] for s in sessions)
    # Samples in flight when the gateway stopped the boards are not the store's to record.
    tail = ODR // 4
    short = {d: sent[d] - expected.get(d, 0) for d in sent}
    out.append((all(v <= tail for v in short.values()),
                f"expected covers what the sensors sent (sent - expected per sensor: {sorted(short.values())}, "
                f"at most {tail} in flight at the stop); {missing} recorded missing in all"))
    out.append(rel.rss_check([gw]))
    return out
