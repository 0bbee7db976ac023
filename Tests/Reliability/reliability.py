"""Shared helpers of the reliability suite (suite.py): the gateway as a process, its admin status,
the store read through `gyrogate store dump`, and the invariants every case checks.

The broker, the emulated MetaWear peer and the process bookkeeping come from
Tests/Benchmarks/E2E/e2e_bench.py (imported as `bench`), as in crash_window_test.py.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks", "E2E"))
import e2e_bench as bench  # noqa: E402  (the broker, the peer and the process helpers)

LSB_PER_DPS = 16.4  # gyro raw units per °/s at 2000 dps (the range every case uses)
RSS_LIMIT_MB = 150  # a generous sanity bound for VmHWM: the debug build idles at a few tens of MB


def address(i: int) -> str:
    """The emulated peer's sensor i (0-based)."""
    return f"C4:BE:84:00:00:{i + 1:02X}"


def write_config(tmp: str, hci: int, mqtt_port: int, *, sensors: int = 2, odr: int = 100, commit_ms: int = 200,
                 chunk_size: int = 2000, data_dir: str | None = None, admin_socket: str | None = None,
                 gateway_id: str = "reliability", user: str = "rel-user", client_id: str | None = None) -> str:
    """A gateway config in tmp (the shape of crash_window_test.config), returned as its path."""
    path = os.path.join(tmp, "gyrogate.json")
    with open(path, "w") as f:
        json.dump({
            "gatewayId": gateway_id,
            "dataDirectory": data_dir or os.path.join(tmp, "data"),
            "timeZone": "UTC",
            "bluetooth": {"transport": f"tcp:127.0.0.1:{hci}", "maxSensors": sensors},
            "sensors": [{"address": address(i), "userId": f"{user}-{i + 1}"} for i in range(sensors)],
            "gyro": {"odrHz": odr, "rangeDps": 2000},
            "capture": {"chunkSize": chunk_size, "commitIntervalMs": commit_ms},
            "sessions": {"autoStart": True},
            "mqtt": {"host": "127.0.0.1", "port": mqtt_port,
                     "clientId": client_id or f"{gateway_id}-{os.getpid()}-{time.time_ns()}"},
            "admin": {"socketPath": admin_socket or os.path.join(tmp, "admin.sock"), "mode": "0600"},
        }, f, indent=2)
    return path


# -- the gateway as a process ------------------------------------------------------------------

class Gateway:
    """`gyrogate run` in its own process group, its output in a log file; follows its VmHWM."""

    def __init__(self, procs: bench.Processes, binary: str, config: str, log_path: str, env: dict | None = None):
        with open(config) as f:
            self.socket_path = json.load(f)["admin"]["socketPath"]
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.proc = procs.start([binary, "run", "--config", config], stdout=self.log, stderr=self.log, env=env)
        self.pid = self.proc.pid
        self.hwm_kb = 0

    def alive(self) -> bool:
        return self.proc.poll() is None

    def sample_memory(self) -> None:
        """Call now and then: VmHWM is gone once the process has exited."""
        if self.alive():
            hwm, _rss = memory_kb(self.pid)
            self.hwm_kb = max(self.hwm_kb, hwm)

    def run_for(self, seconds: float) -> None:
        """Let it work for a while, following its memory; fails fast if it exits."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self.sample_memory()
            if not self.alive():
                raise RuntimeError(f"the gateway exited with {self.proc.returncode}; see {self.log_path}")
            time.sleep(min(0.1, left))

    def signal(self, sig: int) -> None:
        os.killpg(self.pid, sig)

    def kill(self) -> None:
        """SIGKILL, as a crash: no handler runs."""
        self.sample_memory()
        self.signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def terminate(self, timeout: float = 30.0) -> tuple[int | None, float]:
        """SIGTERM and wait: (exit code or None if it did not exit in time, seconds to exit)."""
        self.sample_memory()
        started = time.monotonic()
        self.signal(signal.SIGTERM)
        while self.alive() and time.monotonic() - started < timeout:
            self.sample_memory()
            time.sleep(0.05)
        code = self.proc.poll()
        seconds = time.monotonic() - started
        bench.Processes.stop(self.proc)  # a gateway that hung is killed, so nothing outlives the case
        self.log.close()
        return code, seconds

    def status(self) -> dict:
        """GET /v1/status: broker {state, detail}, outbox {depth}, capture {committedSamples},
        sensors [{address, session}] (Sources/Admin/AdminAPI+Handlers.swift)."""
        return admin_get(self.socket_path, "/v1/status")

    def stop_session(self, device: str) -> str | None:
        """Stops the device's open session over the admin API (as `gyrogate session stop`);
        autoStart opens the next one with the next samples. Returns the stopped id."""
        for sensor in self.status()["sensors"]:
            if sensor["address"].upper() == device.upper() and sensor.get("session"):
                sid = sensor["session"]["id"]
                admin_request(self.socket_path, "POST", f"/v1/sessions/{sid}/stop")
                return sid
        return None

    def wait_admin(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.status()
                return
            except OSError:
                if not self.alive() or time.monotonic() > deadline:
                    raise RuntimeError(f"the gateway's admin socket never answered; see {self.log_path}")
                time.sleep(0.1)


def memory_kb(pid: int) -> tuple[int, int]:
    """(VmHWM, VmRSS) in kB."""
    st = bench.status_fields(f"/proc/{pid}/status")
    return bench.kb(st.get("VmHWM", "")), bench.kb(st.get("VmRSS", ""))


def rss_check(gateways: list[Gateway]) -> tuple[bool, str]:
    peak = max(g.hwm_kb for g in gateways) / 1024
    return peak <= RSS_LIMIT_MB, f"gateway peak RSS (VmHWM) {peak:.1f} MB (at most {RSS_LIMIT_MB} MB)"


def admin_request(socket_path: str, method: str, path: str, timeout: float = 10.0) -> dict:
    """One request over the admin unix socket. The server answers one request per connection and
    closes it (`connection: close`, with a content-length), so reading to EOF is the response."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(socket_path)
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].decode()
    if status_line.split()[1:2] != ["200"]:
        raise OSError(f"admin {method} {path}: {status_line} {body[:200]!r}")
    return json.loads(body)


def admin_get(socket_path: str, path: str = "/v1/status") -> dict:
    return admin_request(socket_path, "GET", path)


def wait_streaming(peer: bench.Peer, gateway: Gateway | None, timeout: float = 60.0, since: list[int] | None = None) -> float:
    """Wait until every sensor is connected and has sent samples (more than `since`, per sensor,
    when the peer outlives gateways: its counters are cumulative). Returns the seconds waited."""
    started = time.monotonic()
    while True:
        sensors = peer.sensors()
        base = since or [0] * len(sensors)
        if all(s["connected"] and s["samples_sent"] > b for s, b in zip(sensors, base)):
            return time.monotonic() - started
        if gateway is not None:
            gateway.sample_memory()
            if not gateway.alive():
                raise RuntimeError(f"the gateway exited with {gateway.proc.returncode}; see {gateway.log_path}")
        if time.monotonic() - started > timeout:
            raise RuntimeError("not every sensor streams: " + ", ".join(
                f"{s['address']} connected={s['connected']} sent={s['samples_sent']}" for s in sensors))
        time.sleep(0.05)


def sent_per_device(peer: bench.Peer) -> dict[str, int]:
    return {s["address"][:17].upper(): s["samples_sent"] for s in peer.sensors()}


# -- the store ---------------------------------------------------------------------------------

def store_path(data_dir: str) -> str:
    return os.path.join(data_dir, "store.sqlite")


def dump_store(gateway: str, path: str) -> list[dict]:
    """The lines of `gyrogate store dump` for the store file at `path` (docs/durability.md,
    "Reading a store"): read-only, so a killed gateway's files, or a copy of them, are read as
    the next start would find them and stay as they are."""
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    proc = subprocess.run([gateway, "store", "dump", "--data-dir", os.path.dirname(os.path.abspath(path))],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"gyrogate store dump {path}: exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()}")
    return [json.loads(line) for line in proc.stdout.splitlines()]


@dataclass
class Chunk:
    id: str
    session: str
    seq: int
    is_open: bool
    count: int  # the chunk row's count
    points: list  # (timestamp ms, x, y, z) in °/s
    has_body: bool = True
    pruned: bool = False  # its document was removed by retention after publication
    start: float = 0.0  # the chunk row's startMs: the record lists closed chunks in this order
    stream: str = "gyro"
    first_index: int = 0  # the stream index of its first sample
    gaps: list = field(default_factory=list)  # the gaps inside it (fromIndex, toIndex, missing, reason)
    backfilled: int = 0  # points marked backfilled in its document


@dataclass
class Store:
    integrity: str
    sessions: list[dict]
    records: dict[str, dict | None]  # session id -> its records document (None if absent or empty)
    chunks: list[Chunk]  # the gyroscope's
    outbox_paths: set[str] = field(default_factory=set)
    all_chunks: list[Chunk] = field(default_factory=list)  # every stream's
    documents: dict[str, dict | None] = field(default_factory=dict)  # path -> body: all but chunk rows' documents

    def chunks_of(self, session_id: str) -> list[Chunk]:
        """In the record's order (`gscope_data`: closed chunks by their first sample, where a
        backfill's chunks, which share the seq of a neighbour, belong), the open chunk last."""
        return sorted((c for c in self.chunks if c.session == session_id),
                      key=lambda c: (c.is_open, c.start or 0.0, c.seq, c.id))

    def chunk_documents(self) -> list[tuple[str, list]]:
        """Every stored realtime_data document: (path, its points), the points (t, x, y, z, backfilled)."""
        docs = [(f"realtime_data/{c.id}", c.points, c.backfilled) for c in self.all_chunks if not c.is_open and c.has_body]
        for path, body in self.documents.items():
            if path.startswith("realtime_data/") and body is not None:
                data = body.get("data") or []
                docs.append((path, [(p["timestamp"], p["gx"], p["gy"], p["gz"]) for p in data],
                             sum(1 for p in data if p.get("backfilled"))))
        return docs


def read_store(gateway: str, path: str) -> Store:
    """Everything the invariants need, read by the gateway in one read transaction."""
    lines = dump_store(gateway, path)
    head = lines[0]
    assert head["kind"] == "store", f"the dump starts with {head}"
    assert head["damagedRingSlots"] == 0, f"{head['damagedRingSlots']} slots of the sample ring do not decode"
    sessions = [line for line in lines if line["kind"] == "session"]
    documents = {line["path"]: line["body"] for line in lines if line["kind"] == "document"}
    records = {s["id"]: documents.get(f"records/{s['id']}") for s in sessions}
    chunks = []
    for line in lines:
        if line["kind"] != "chunk":
            continue
        chunks.append(Chunk(line["id"], line["sessionId"], line["seq"], line["isOpen"], line["count"],
                            [tuple(p[:4]) for p in line["points"]], has_body=line["isOpen"] or line["document"],
                            pruned=line["pruned"], start=line["startMs"] or 0.0, stream=line["stream"],
                            first_index=line["firstIndex"], gaps=line["gaps"],
                            backfilled=sum(1 for p in line["points"] if p[4])))
    outbox = {line["documentPath"] for line in lines if line["kind"] == "outbox" and line["documentPath"] is not None}
    return Store(head["integrity"], sessions, records, [c for c in chunks if c.stream == "gyro"], outbox,
                 all_chunks=chunks, documents=documents)


def copy_store(data_dir: str, dest: str) -> str:
    """Copies store.sqlite with its -wal and -shm (when present) into dest; returns the copy's
    path. Taken while the gateway is stopped (SIGSTOP) or dead, it is what a power cut leaves."""
    os.makedirs(dest, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        src = store_path(data_dir) + suffix
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(dest, "store.sqlite" + suffix))
    return store_path(dest)



# -- the waveform ------------------------------------------------------------------------------

@dataclass
class Census:
    """The stored samples of every device, checked against the peer's waveform (Peers README)."""
    samples: int = 0
    duplicates: int = 0  # n not strictly increasing within a board stream
    mismatches: int = 0  # y or z not the waveform's for that n
    backwards_time: int = 0  # a timestamp not after the one before it (per device)
    streams: int = 0  # board streams seen (a stream restarts at n = 0 after a re-initialisation)
    per_device: dict = field(default_factory=dict)
    first_problems: list = field(default_factory=list)

    def note(self, text: str) -> None:
        if len(self.first_problems) < 5:
            self.first_problems.append(text)


def first_n(x: int, y: int, odr: int) -> int:
    """The sample number n of a device's first stored sample, from x = int16(n) and the sine's
    y: its board stream may have wrapped x before it (the oldest samples evicted or pruned)."""
    for n in (x + 65536 * k for k in range(16)):
        if n >= 0 and round(10000 * math.sin(2 * math.pi * n / odr)) == y:
            return n
    return x


def census(store: Store, odr: int) -> Census:
    """Walk every device's samples in session, chunk and offset order. The stored x is int16(n)
    in raw units, so n is recovered by unwrapping x; n going down starts a new board stream,
    which must start near 0 (anything else is a sample stored twice or out of order)."""
    c = Census()
    restart_limit = odr // 2  # a new stream starts at n = 0; allow its first samples to be lost
    by_device: dict[str, list] = {}
    for s in store.sessions:
        by_device.setdefault(s["device"].upper(), []).append(s)
    for device, sessions in by_device.items():
        prev_n = prev_x = prev_t = None
        count = 0
        for s in sessions:
            for chunk in store.chunks_of(s["id"]):
                for t, gx, gy, gz in chunk.points:
                    x = int(round(gx * LSB_PER_DPS))
                    n = first_n(x, int(round(gy * LSB_PER_DPS)), odr) if prev_n is None else prev_n + bench.int16(x - prev_x)
                    if prev_n is None:
                        c.streams += 1
                    elif n < prev_n and x <= restart_limit and x >= 0:
                        n = x  # a new board stream: n is x itself
                        c.streams += 1
                    elif n <= prev_n:
                        c.duplicates += 1
                        c.note(f"{device} session {s['id']} chunk {chunk.seq}: n {n} after {prev_n}")
                    if prev_t is not None and t <= prev_t:
                        c.backwards_time += 1
                        c.note(f"{device} session {s['id']} chunk {chunk.seq}: time {t} after {prev_t}")
                    y = round(10000 * math.sin(2 * math.pi * n / odr))
                    if int(round(gy * LSB_PER_DPS)) != y or int(round(gz * LSB_PER_DPS)) != bench.int16(-n):
                        c.mismatches += 1
                        c.note(f"{device} n {n}: ({gx}, {gy}, {gz}) is not the waveform's")
                    prev_n, prev_x, prev_t = n, x, t
                    count += 1
        c.per_device[device] = count
        c.samples += count
    return c


# -- invariants --------------------------------------------------------------------------------

def gaps_missing(gaps) -> int:
    if isinstance(gaps, str):
        gaps = json.loads(gaps or "[]")
    return sum(int(g.get("missing", 0)) for g in gaps or [])


def published(messages: list) -> tuple[dict, dict]:
    """The last version of every records/ and realtime_data/ document a subscriber saw
    (`bench.Subscriber.take()`), by document id; a zero-byte payload removed nothing here."""
    records, chunks = {}, {}
    for _t, topic, payload in messages:
        if not payload:
            continue
        if topic.startswith("records/"):
            records[topic.split("/", 1)[1]] = json.loads(payload)
        elif topic.startswith("realtime_data/"):
            chunks[topic.split("/", 1)[1]] = json.loads(payload)
    return records, chunks


def record_checks(store: Store, closed_only: bool = False) -> list[tuple[bool, str]]:
    """Every session row and its records document: expected - samples == sum(gaps.missing); the
    row's samples are the samples its chunks hold; a closed session's document is the row's."""
    bad_rows, bad_docs, bad_counts, stale_docs = [], [], [], []
    sessions = [s for s in store.sessions if not (closed_only and s["isOpen"])]
    for s in sessions:
        if s["expected"] - s["samples"] != gaps_missing(s["gaps"]):
            bad_rows.append(f"{s['id']}: expected {s['expected']} - samples {s['samples']} != missing {gaps_missing(s['gaps'])}")
        # An evicted chunk is gone (its samples a storeFull gap); a chunk pruned after
        # publication still counts, by its row, since the broker has its points.
        live = store.chunks_of(s["id"])
        held = sum(c.count if c.pruned else len(c.points) for c in live)
        counted = sum(c.count for c in live)
        if held != s["samples"] or counted != s["samples"]:
            bad_counts.append(f"{s['id']}: row says {s['samples']}, chunk rows {counted}, chunks hold {held}")
        doc = store.records.get(s["id"])
        if doc is not None:
            if doc.get("expected", 0) - doc.get("samples", 0) != gaps_missing(doc.get("gaps")):
                bad_docs.append(f"{s['id']}: {doc.get('expected')} - {doc.get('samples')} != missing {gaps_missing(doc.get('gaps'))}")
            if not s["isOpen"] and (doc.get("samples"), doc.get("expected")) != (s["samples"], s["expected"]):
                stale_docs.append(f"{s['id']}: document {doc.get('samples')}/{doc.get('expected')}, row {s['samples']}/{s['expected']}")
        elif not s["isOpen"]:
            stale_docs.append(f"{s['id']}: closed without a records document")
    what = "closed sessions" if closed_only else "sessions"
    return [
        (not bad_rows, f"{len(sessions)} {what}: expected - samples == sum(gaps.missing) in every row" + examples(bad_rows)),
        (not bad_docs, f"{len(sessions)} {what}: expected - samples == sum(gaps.missing) in every records document" + examples(bad_docs)),
        (not bad_counts, f"{len(sessions)} {what}: samples == the samples their chunks hold" + examples(bad_counts)),
        (not stale_docs, f"{len(sessions)} {what}: a closed session's records document matches its row" + examples(stale_docs)),
    ]


def invariants(gateway: str, path: str, odr: int = 100, closed_only: bool = False) -> list[tuple[bool, str]]:
    """The store-wide invariants: integrity, the records' arithmetic, and every stored sample
    present exactly once and equal to the peer's waveform."""
    store = read_store(gateway, path)
    checks = [(store.integrity == "ok", f"PRAGMA integrity_check: {store.integrity}")]
    checks += record_checks(store, closed_only)
    c = census(store, odr)
    checks += [
        (c.duplicates == 0, f"{c.samples} stored samples in {c.streams} board streams: none stored twice "
                            f"({c.duplicates} duplicates)" + examples(c.first_problems)),
        (c.mismatches == 0, f"{c.samples} stored samples match the waveform ({c.mismatches} mismatches)"),
        (c.backwards_time == 0, f"stored sample times increase per device ({c.backwards_time} do not)"),
    ]
    return checks


def examples(problems: list) -> str:
    """The tail of a check's text: how many went wrong and the first, or nothing."""
    return f" -- {len(problems)} bad, e.g. {problems[0]}" if problems else ""


def outbox_drained(store: Store) -> tuple[bool, str]:
    """After a clean stop with the broker connected, nothing is left to publish: the stop's own
    writes (closing records, daily sessions, medals) were handed to the broker before the exit.
    Otherwise the broker keeps the sessions open (and medals missing) until the next start."""
    left = sorted(store.outbox_paths)
    return not left, (f"a clean stop with the broker up publishes what it wrote: {len(left)} outbox rows left"
                      + (f" ({', '.join(left[:4])})" if left else ""))


# -- what a subscriber saw -----------------------------------------------------------------------

def versions_forward(messages: list) -> tuple[bool, str]:
    """Documents carry no version in their payload, so per topic: a record's `samples`,
    `expected` and chunk list never shrink, and its `end` never changes once set; a daily
    session's `samples` never decrease. (An older version after a newer one would break this.)"""
    last: dict[str, dict] = {}
    backwards = []
    checked = 0
    for _t, topic, payload in messages:
        if not payload or not (topic.startswith("records/") or "/DailySessions/" in topic):
            continue
        doc = json.loads(payload)
        prev = last.get(topic)
        checked += 1
        if prev is not None:
            shrank = doc.get("samples", 0) < prev.get("samples", 0) or doc.get("expected", 0) < prev.get("expected", 0)
            if topic.startswith("records/"):
                shrank |= len(doc.get("gscope_data") or []) < len(prev.get("gscope_data") or [])
                shrank |= prev.get("end") is not None and doc.get("end") != prev.get("end")
            if shrank:
                backwards.append(f"{topic}: samples {prev.get('samples')} -> {doc.get('samples')}, end {prev.get('end')} -> {doc.get('end')}")
        last[topic] = doc
    return not backwards, f"{checked} record/daily-session versions at the subscriber, none going backwards" + examples(backwards)


def received_chunks(messages: list) -> dict[str, tuple[int, dict]]:
    """realtime_data topic -> (times received, document)."""
    out: dict[str, tuple[int, dict]] = {}
    for _t, topic, payload in messages:
        if topic.startswith("realtime_data/") and payload:
            count, _doc = out.get(topic, (0, None))
            out[topic] = (count + 1, json.loads(payload))
    return out


def retained(port: int, topics: list[str], seconds: float = 1.5) -> dict[str, bytes]:
    """The retained messages a new subscriber gets: topic -> payload (empty payloads left out)."""
    got: dict[str, bytes] = {}
    client = bench.mqtt.Client(bench.mqtt.CallbackAPIVersion.VERSION2, client_id=f"rel-retained-{os.getpid()}-{time.time_ns()}",
                               protocol=bench.mqtt.MQTTv311, clean_session=True)
    client.on_connect = lambda c, u, f, rc, p: c.subscribe([(t, 1) for t in topics])
    client.on_message = lambda c, u, m: got.__setitem__(m.topic, m.payload) if m.retain and m.payload else None
    client.connect("127.0.0.1", port, keepalive=30)
    client.loop_start()
    time.sleep(seconds)
    client.disconnect()
    client.loop_stop()
    return got
