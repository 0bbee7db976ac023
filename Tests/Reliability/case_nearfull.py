"""nearfull: a nearly full disk loses no unpublished sample while it has room, and says full when it does.

The data directory is a small journalled ext4 in a loop-mounted image (`mkfs.ext4 -m 0`, so root
has no blocks of its own beyond what statvfs reports), the broker is away (nothing published,
so retention has nothing to prune), 4 sensors stream at 400 Hz with small chunks so that the
store grows by tens of KB a second. A filler file (allocated with posix_fallocate) squeezes
the free space to 4 MB, below the store's 4 MiB reserve: the working limit once subtracted the
reserve from that although the reserve held its own blocks, and evicted every closed
unpublished chunk at once while the status said ok (issue 39). Then the store fills what is left
by itself, slowly enough that a retention pass (every 30 s) runs while the disk still has room
(checked: otherwise the case could not tell that limit from the right one); later the filler is
deleted.

Throughout, the status is polled every 0.1 s, and the test measures the disk itself (statvfs,
and the reserve file's blocks with stat). Checks (issue 39's acceptance):
- no unpublished chunk evicted while the disk has room: at every poll after which the status's
  `evictedUnpublishedChunks` or `notKeptSamples` grew, the disk's room before it (free space
  plus the reserve's blocks) was at most the reserve plus 1 MB (the sum only shrinks while the
  filler stays: the files grow, and releasing the reserve moves its blocks into the free space);
- every eviction while the status says `full` (the poll after it, and `/metrics`'
  `gyrogate_store_full` 1), never `atLimit`, and the systemd-style STATUS words match;
- space given back: the status says `ok` within 10 s and nothing further is evicted;
- after SIGTERM, through `gyrogate sessions --json` and `gyrogate documents get` on the data
  directory (the gateway's own reading of its store, never its tables): every session and its
  records document balanced, `expected - samples == sum of gaps`, the storeFull gaps covering
  what was evicted or not kept.
Skipped (with the reason) without root or loop devices; any other setup failure fails.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time

import reliability as rel
from reliability import bench

IMAGE_BYTES = 48 << 20
SENSORS, ODR, COMMIT_MS, CHUNK = 4, 400, 200, 100
SQUEEZE_FREE = 4_000_000           # below the reserve plus a few MB: below the reserve itself
RETENTION_PASS_S = 30              # CaptureService's period: one pass must fall while the disk has room
RESERVE = 4 << 20                  # StoreReserve.defaultBytes
ROOM_SLACK = 1_000_000             # "the reserve plus 1 MB"
POLL_S = 0.1


class SmallExt4(bench.Ext4Disk):
    """The e2e bench's loop-mounted ext4, smaller and without root's reserved blocks."""

    def __init__(self, tmp: str, size: int):
        super().__init__(tmp, size=size, reserved_percent=0)


def free_bytes(path: str) -> int:
    fs = os.statvfs(path)
    return fs.f_bavail * fs.f_frsize


def held_bytes(path: str) -> int:
    try:
        return min(RESERVE, os.stat(path).st_blocks * 512)
    except FileNotFoundError:
        return 0


def squeeze(filler: str, directory: str, leave: int) -> None:
    """Allocates (not writes) the filler so that `directory` has `leave` bytes free, to the block."""
    with open(filler, "ab") as f:
        size = os.fstat(f.fileno()).st_size
        grow = free_bytes(directory) - leave
        if grow > 0:
            os.posix_fallocate(f.fileno(), size, grow)
        os.fsync(f.fileno())


def run(ctx) -> list[tuple[bool | None, str]]:
    why = bench.Ext4Disk.unavailable()
    if why:
        return [(None, f"SKIPPED: the near-full disk needs a loop-mounted ext4: {why}")]
    tmp = ctx.tmpdir("nearfull")
    disk = SmallExt4(tmp, IMAGE_BYTES)
    try:
        try:
            mount = disk.setup()
        except (subprocess.CalledProcessError, OSError) as e:
            detail = getattr(e, "stderr", b"") or b""
            reason = f"could not set up the loop-mounted ext4: {e} {detail.decode(errors='replace').strip() if isinstance(detail, bytes) else detail}"
            # Root and loop devices are here: under CI the case must run, so this is a failure.
            return [(False if os.environ.get("CI") == "true" else None, reason)]
        return _run(ctx, tmp, mount)
    finally:
        ctx.procs.stop_all()
        disk.teardown()


class Poll:
    """One look at the gateway and at the disk, taken together."""

    def __init__(self, gw: rel.Gateway, data: str):
        store = gw.status()["store"]
        self.t = time.monotonic()
        self.state = store.get("state")
        self.evicted = store.get("evictedUnpublishedChunks", 0)
        self.not_kept = store.get("notKeptSamples", 0)
        self.episodes = store.get("fullEpisodes", 0)
        self.limit_set_by = store.get("limitSetBy")
        self.free = free_bytes(data)
        self.held = held_bytes(os.path.join(data, "store.reserve"))

    @property
    def room(self) -> int:
        """The disk's room as the acceptance counts it: free space plus the reserve's blocks."""
        return self.free + self.held


def _run(ctx, tmp: str, mount: str) -> list[tuple[bool | None, str]]:
    out: list[tuple[bool | None, str]] = []
    full_seconds = 8 if ctx.quick else 30
    data = os.path.join(mount, "data")
    filler = os.path.join(mount, "filler")
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "nearfull")
    config = rel.write_config(tmp, peer.hci, bench.free_port(), sensors=SENSORS, odr=ODR, commit_ms=COMMIT_MS,
                              chunk_size=CHUNK, data_dir=data)  # a port nobody listens on: the broker is away
    with open(config) as f:
        tree = json.load(f)
    tree["retention"] = {"maxStoreBytes": 1 << 30}  # far above the disk: only the disk limits the store
    with open(config, "w") as f:
        json.dump(tree, f, indent=2)
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway.log"))
    gw.wait_admin()
    rel.wait_streaming(peer, gw)
    gw.run_for(2)

    # 1. Squeezed below the reserve plus a few MB; the store then fills the rest by itself.
    squeeze(filler, mount, SQUEEZE_FREE)
    squeezed = Poll(gw, data)
    polls = [squeezed]
    became_full = None
    while time.monotonic() - squeezed.t < 300:
        gw.run_for(POLL_S)
        polls.append(Poll(gw, data))
        if became_full is None and polls[-1].state == "full":
            became_full = polls[-1].t
        if became_full is not None and polls[-1].t - became_full >= full_seconds:
            break
    if became_full is None:
        return out + [(False, f"the store never said full within 300 s of the squeeze (free {polls[-1].free} bytes, "
                              f"state {polls[-1].state}); see {gw.log_path}")]
    metrics = _metrics(gw.socket_path)
    statuses = [p.state for p in polls]
    out.append((squeezed.evicted == 0 and squeezed.state == "ok",
                f"squeezed to {squeezed.free} bytes free with the reserve's {squeezed.held} held: state {squeezed.state}, "
                f"nothing evicted ({squeezed.evicted})"))

    # Every growth of the evicted or not-kept counters, with the room before it and the state after it.
    roomy_until = next((p.t for p in polls if p.room <= RESERVE + ROOM_SLACK), polls[-1].t)
    out.append((roomy_until - squeezed.t > RETENTION_PASS_S,
                f"the disk had room for {roomy_until - squeezed.t:.1f} s after the squeeze: a retention pass ran in it "
                f"(one every {RETENTION_PASS_S} s)"))
    losses = [(a, b) for a, b in zip(polls, polls[1:]) if b.evicted > a.evicted or b.not_kept > a.not_kept]
    roomy = [(a, b) for a, b in losses if a.room > RESERVE + ROOM_SLACK]
    out.append((not roomy,
                f"no unpublished sample evicted while the disk had room: {len(losses)} polls saw evictions, the most room "
                f"before one {max((a.room for a, _ in losses), default=0)} bytes (at most {RESERVE + ROOM_SLACK})"
                + (f" -- {len(roomy)} with more, e.g. room {roomy[0][0].room}, state {roomy[0][1].state}" if roomy else "")))
    not_full = [(a, b) for a, b in losses if b.state != "full"]
    last = polls[-1]
    out.append((bool(losses) and not not_full,
                f"every eviction while the status said full: {last.evicted - squeezed.evicted} chunks evicted and "
                f"{last.not_kept - squeezed.not_kept} samples not kept in {len(losses)} polls, "
                f"{len(not_full)} with another state" + (f" ({not_full[0][1].state})" if not_full else "")
                + ("" if losses else " -- nothing was evicted at all: the wall was never reached")))
    out.append(("atLimit" not in statuses and last.limit_set_by == "disk",
                f"the disk, not retention.maxStoreBytes, set the limit (limitSetBy {last.limit_set_by}; states seen: "
                f"{', '.join(sorted(set(s for s in statuses if s)))})"))
    out.append((metrics.get("gyrogate_store_full") == "1" and last.episodes == 1,
                f"/metrics gyrogate_store_full {metrics.get('gyrogate_store_full')}, gyrogate_store_at_limit "
                f"{metrics.get('gyrogate_store_at_limit')}, fullEpisodes {last.episodes}"))
    status_text = subprocess.run([ctx.gateway, "status", "--socket", gw.socket_path], capture_output=True, text=True, timeout=30).stdout
    out.append(("FULL for" in status_text, "gyrogate status says FULL: "
                + next((line.strip() for line in status_text.splitlines() if line.strip().startswith("store")), status_text[:200])))

    # 2. Space given back: ok again, nothing further evicted.
    os.unlink(filler)
    freed = time.monotonic()
    ok_at = None
    while time.monotonic() - freed < 30:
        gw.run_for(POLL_S)
        p = Poll(gw, data)
        if p.state == "ok":
            ok_at = p
            break
    if ok_at is None:
        return out + [(False, f"the store never said ok within 30 s of space returning; see {gw.log_path}")]
    out.append((ok_at.t - freed <= 10, f"ok {ok_at.t - freed:.1f} s after space returned ({ok_at.free} bytes free)"))
    gw.run_for(full_seconds)
    after = Poll(gw, data)
    out.append((after.evicted == ok_at.evicted and after.not_kept == ok_at.not_kept and after.state == "ok",
                f"nothing evicted once ok ({ok_at.evicted} -> {after.evicted} chunks, {ok_at.not_kept} -> {after.not_kept} "
                f"not kept over {full_seconds} s), state {after.state}"))

    # 3. Stopped; the records read back through the gateway's CLI.
    code, seconds = gw.terminate()
    out.append((code == 0, f"SIGTERM: exit {code} after {seconds:.1f} s"))
    out += balanced(ctx.gateway, data, evicted_or_not_kept=after.evicted > 0 or after.not_kept > 0)
    out.append((True, f"figures: {IMAGE_BYTES >> 20} MiB ext4, squeezed to {squeezed.free} bytes free, full "
                      f"{became_full - squeezed.t:.1f} s after the squeeze, {after.evicted} chunks evicted and "
                      f"{after.not_kept} samples not kept while full, ok {ok_at.t - freed:.1f} s after space returned"))
    out.append(rel.rss_check([gw]))
    return out


def _metrics(socket_path: str) -> dict[str, str]:
    """GET /metrics over the admin socket: name -> value."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(socket_path)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    body = data.partition(b"\r\n\r\n")[2].decode()
    return dict(line.split(" ", 1) for line in body.splitlines() if line and not line.startswith("#"))


def gyrogate_json(gateway: str, *args: str):
    done = subprocess.run([gateway, *args, "--json"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"gyrogate {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def balanced(gateway: str, data: str, evicted_or_not_kept: bool) -> list[tuple[bool, str]]:
    """Every session and its records document: expected - samples == sum of gaps, read through the CLI."""
    report = gyrogate_json(gateway, "sessions", "--range", "all", "--data-dir", data)
    sessions = report["sessions"]
    bad_rows, bad_docs, store_full = [], [], 0
    for s in sessions:
        missing = sum(s["missingByReason"].values())
        store_full += s["missingByReason"].get("storeFull", 0)
        if s["expected"] - s["samples"] != missing:
            bad_rows.append(f"{s['id']}: {s['expected']} - {s['samples']} != {missing}")
        doc = gyrogate_json(gateway, "documents", "get", f"records/{s['id']}", "--data-dir", data)
        gaps = sum(int(g.get("missing", 0)) for g in doc.get("gaps") or [])
        if doc.get("expected", 0) - doc.get("samples", 0) != gaps or (doc.get("samples"), doc.get("expected")) != (s["samples"], s["expected"]):
            bad_docs.append(f"{s['id']}: document {doc.get('expected')} - {doc.get('samples')} vs gaps {gaps}, session {s['expected']}/{s['samples']}")
    return [
        (bool(sessions) and not bad_rows, f"{len(sessions)} sessions: expected - samples == sum of gaps" + rel.examples(bad_rows)),
        (not bad_docs, f"{len(sessions)} records documents: expected - samples == sum of gaps, as their sessions" + rel.examples(bad_docs)),
        (store_full > 0 or not evicted_or_not_kept, f"{store_full} samples recorded as storeFull gaps"),
    ]
