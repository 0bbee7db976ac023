#!/usr/bin/env python3
"""Export acceptance (issue 40): sessions out of the gateway as MetaBase CSV, InfluxDB line
protocol and JSON Lines, against emulated boards, a real mosquitto and a real InfluxDB 1.x.

    .venv/bin/python Tests/Export/export_test.py --gateway .build/debug/gyrogate [--keep-temp]

Two emulated boards of one user stream at 100 Hz; board 1 has `backfill`, board 2 not. Both lose
their link for 3 s, and board 2 drops 7 samples, so board 1's session has backfilled points and
board 2's has gaps (`disconnected (…)`, `notReceived`). A subscriber follows `realtime_data/+` and
`records/+`. Then, through the gateway's CLI (`gyrogate export`, reading the store while the
daemon runs) and its admin socket (`GET /v1/sessions/{id}/export`), never the tables:
- the CSV read by pandas has one row per stored sample, its epoch column equals the published
  chunks' times, its values (deg/s) are the peer's waveform, its backfilled column matches the
  published points, and its gap columns say what the record's gaps say, where they are;
- the admin socket's CSV is the CLI's, byte for byte; the JSON Lines has one object a sample;
- the merged table of the two boards has every sample once and, in each row, the boards'
  samples within one sample period;
- the line protocol, written to influxd (Debian's `influxdb`, started here on a free loopback
  port) with the commands of docs/export.md, answers a count query with the session's samples
  and a time-range query with that range's samples;
- docs/export.md's pandas recipe (Tests/Export/pandas_recipe.py, quoted there) runs on the CSV.
One `PASS`/`FAIL` line per check; exit 1 on any failure (the temporary folder is then kept).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "Reliability"))
import reliability as rel  # noqa: E402
from reliability import bench  # noqa: E402

import pandas as pd  # noqa: E402

ODR = 100
PERIOD_MS = 1000 / ODR
USER = "export-user"
results: list[tuple[bool, str]] = []


def check(ok, text: str) -> None:
    results.append((bool(ok), text))
    print(("PASS " if ok else "FAIL ") + text, flush=True)


def int16(v: int) -> int:
    return ((v + 32768) % 65536) - 32768


def admin_raw(socket_path: str, path: str, timeout: float = 30.0) -> tuple[int, dict, bytes]:
    """One GET on the admin socket, the body de-chunked (exports are streamed: chunked, no length)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(socket_path)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(1 << 16):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if headers.get("transfer-encoding") == "chunked":
        out, rest = b"", body
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        body = out
    return int(lines[0].split()[1]), headers, body


def stamp(ms: float) -> str:
    """MetaBase's start in a file name, in UTC (the test's timeZone): 2024-06-17T12.00.00.125."""
    whole = math.floor(ms)
    return time.strftime("%Y-%m-%dT%H.%M.%S", time.gmtime(whole // 1000)) + f".{whole % 1000:03d}"


def gyrogate(binary: str, *args: str) -> str:
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"gyrogate {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


# -- InfluxDB 1.x ---------------------------------------------------------------------------

class Influx:
    """influxd on a free loopback port, its meta, data and WAL in `folder`, nothing reported out."""

    def __init__(self, procs: bench.Processes, folder: str):
        self.port, rpc = bench.free_port(), bench.free_port()
        os.makedirs(folder, exist_ok=True)
        conf = os.path.join(folder, "influxdb.conf")
        with open(conf, "w") as f:
            f.write(f'reporting-disabled = true\nbind-address = "127.0.0.1:{rpc}"\n'
                    f'[meta]\n  dir = "{folder}/meta"\n'
                    f'[data]\n  dir = "{folder}/data"\n  wal-dir = "{folder}/wal"\n  query-log-enabled = false\n'
                    f'[http]\n  bind-address = "127.0.0.1:{self.port}"\n  log-enabled = false\n'
                    f'[monitor]\n  store-enabled = false\n')
        self.log = open(os.path.join(folder, "influxd.log"), "wb")
        self.proc = procs.start(["influxd", "-config", conf], stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/ping", timeout=2) as r:
                    if r.status == 204:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"influxd did not answer on port {self.port}; see {folder}/influxd.log")
            time.sleep(0.2)

    def query(self, q: str) -> list:
        url = f"http://127.0.0.1:{self.port}/query?" + urllib.parse.urlencode({"db": "gyrogate", "q": q})
        with urllib.request.urlopen(url, timeout=30) as r:
            result = json.load(r)["results"][0]
        if "error" in result:
            raise RuntimeError(f"influx {q}: {result['error']}")
        return result.get("series", [])

    def count(self, where: str) -> int:
        series = self.query(f"SELECT count(x) FROM gyro WHERE {where}")
        return int(series[0]["values"][0][1]) if series else 0


def recipe_commands(port: int) -> tuple[str, str]:
    """The InfluxDB commands of docs/export.md, with this test's port: the docs' block must hold
    them as they are run here (with 8086)."""
    create = "curl -sS -XPOST 'http://127.0.0.1:8086/query' --data-urlencode 'q=CREATE DATABASE gyrogate'"
    write = ("gyrogate export --config config.json --session \"$SESSION\" --format influx \\\n"
             "  | curl -sS -XPOST 'http://127.0.0.1:8086/write?db=gyrogate&precision=ns' --data-binary @-")
    with open(os.path.join(ROOT, "docs", "export.md")) as f:
        doc = f.read()
    for command in (create, write):
        if command not in doc:
            raise RuntimeError(f"docs/export.md no longer holds the command this test runs:\n{command}")
    return create.replace("8086", str(port)), write.replace("8086", str(port))


# -- the checks -----------------------------------------------------------------------------

def check_csv(df: pd.DataFrame, record: dict, chunks: dict, sid: str, samples: int, board: str) -> None:
    check(len(df) == samples == record["samples"],
          f"{board}: the CSV has one row per stored sample ({len(df)} rows, the store {samples}, the record {record['samples']})")
    points = [p for cid in record["gscope_data"] for p in chunks.get(cid, {}).get("data", [])]
    missing = [cid for cid in record["gscope_data"] if cid not in chunks]
    epochs = [round(v * 1000) for v in df["epoch (ms)"]]
    times = [round(p["timestamp"] * 1000) for p in points]
    first = next((i for i, (a, b) in enumerate(zip(epochs, times)) if a != b), None)
    check(not missing and epochs == times,
          f"{board}: the epoch column equals the {len(points)} published points' times ({len(record['gscope_data'])} chunks)"
          + (f" -- {len(missing)} chunks not seen" if missing else "")
          + (f" -- row {first}: {epochs[first] / 1000} vs {times[first] / 1000}" if first is not None else ""))
    wrong = []
    for i, (x, y, z) in enumerate(zip(df["x-axis (deg/s)"], df["y-axis (deg/s)"], df["z-axis (deg/s)"])):
        n = round(x * rel.LSB_PER_DPS)
        if n < 0 or round(y * rel.LSB_PER_DPS) != round(10000 * math.sin(2 * math.pi * n / ODR)) or round(z * rel.LSB_PER_DPS) != int16(-n):
            wrong.append(f"row {i}: {x}, {y}, {z}")
    check(not wrong, f"{board}: every row's values (deg/s) are the peer's waveform for its counter"
          + (f" -- {len(wrong)} not, e.g. {wrong[0]}" if wrong else ""))
    marked = sum(1 for p in points if p.get("backfilled"))
    check(int(df["backfilled"].sum()) == marked,
          f"{board}: {int(df['backfilled'].sum())} rows backfilled, as the published points ({marked})")
    check(set(df["session"]) == {sid} and set(df["clock"]) == {record.get("clock") or "unknown"},
          f"{board}: every row names its session and the record's clock ({record.get('clock')})")
    # Gaps: each record gap ends before the first row after it, which says how many and why.
    said, problems = 0, []
    ms = [v for v in df["epoch (ms)"]]
    for gap in record["gaps"]:
        after = next((i for i, t in enumerate(ms) if t > gap["to"]), None)
        if after is None or after == 0:
            problems.append(f"gap {gap['from']}..{gap['to']} has no row before and after it")
            continue
        cell, reason = df["gap (samples)"].iloc[after], str(df["gap reason"].iloc[after])
        span = (ms[after] - ms[after - 1]) / PERIOD_MS - 1
        if pd.isna(cell) or gap["reason"] not in reason.split(";") or abs(span - cell) > 1:
            problems.append(f"gap of {gap['missing']} ({gap['reason']}) before row {after}: the row says {cell} ({reason}), "
                            f"the rows are {span:.1f} periods apart")
        said += 1
    total = int(df["gap (samples)"].sum(skipna=True))
    check(not problems and total == sum(g["missing"] for g in record["gaps"]),
          f"{board}: the {len(record['gaps'])} gaps of the record ({', '.join(sorted({g['reason'] for g in record['gaps']})) or 'none'}) "
          f"are on the rows after them, {total} samples missing" + (f" -- {problems[0]}" if problems else ""))


def check_merged(path: str, sessions: list[dict]) -> None:
    df = pd.read_csv(path)
    macs = [s["device"].replace(":", "") for s in sessions]
    counts = [int(df[f"{m} epoch (ms)"].count()) for m in macs]
    check(counts == [s["samples"] for s in sessions],
          f"merged table: each board's samples once ({counts}, the sessions {[s['samples'] for s in sessions]}), {len(df)} rows")
    both = df[df[f"{macs[0]} epoch (ms)"].notna() & df[f"{macs[1]} epoch (ms)"].notna()]
    worst = float((both[f"{macs[0]} epoch (ms)"] - both[f"{macs[1]} epoch (ms)"]).abs().max()) if len(both) else math.inf
    off_grid = max(float((df[f"{m} epoch (ms)"] - df["epoch (ms)"]).abs().max()) for m in macs)
    check(len(both) > 0 and worst < PERIOD_MS and off_grid < PERIOD_MS,
          f"merged table: in the {len(both)} rows with both boards, their samples {worst:.3f} ms apart at most "
          f"(one period: {PERIOD_MS} ms); every sample within {off_grid:.3f} ms of its row's time")


def run(gateway: str, tmp: str) -> None:
    procs = bench.Processes()
    try:
        _broker, port = bench.start_broker(procs, tmp)
        peer = bench.Peer(procs, 2, tmp, "export")
        config = rel.write_config(tmp, peer.hci, port, sensors=2, odr=ODR, commit_ms=200, chunk_size=500)
        with open(config) as f:
            tree = json.load(f)
        for sensor in tree["sensors"]:
            sensor["userId"] = USER
        tree["sensors"][0]["backfill"] = True
        tree["sensors"][0]["name"] = "MetaMotion R (board 1)"
        with open(config, "w") as f:
            json.dump(tree, f, indent=2)
        os.symlink(config, os.path.join(tmp, "config.json"))  # the name docs/export.md's commands use
        sub = bench.Subscriber(port)
        gw = rel.Gateway(procs, gateway, config, os.path.join(tmp, "gateway.log"))
        gw.wait_admin()
        rel.wait_streaming(peer, gw)
        gw.run_for(3)
        peer.call(cmd="drop_samples", sensor=1, count=7)
        gw.run_for(2)
        for i in range(2):
            peer.call(cmd="drop_link", sensor=i, away_s=3)
        gw.run_for(3)
        deadline = time.monotonic() + 90
        while not int(next(s for s in gw.status()["sensors"] if s["address"] == rel.address(0)).get("backfilledSamples") or 0):
            if time.monotonic() > deadline:
                raise RuntimeError(f"board 1 backfilled nothing after its outage; see {gw.log_path}")
            gw.run_for(0.2)
        rel.wait_streaming(peer, gw, since=[s["samples_sent"] for s in peer.sensors()])
        gw.run_for(3)
        stopped = [gw.stop_session(rel.address(i)) for i in range(2)]
        deadline = time.monotonic() + 30
        while gw.status()["outbox"]["depth"] > 0 and time.monotonic() < deadline:
            gw.run_for(0.2)
        sub.wait_quiet(2.0, 20)
        records, chunks = rel.published(sub.take())
        listed = rel.admin_get(gw.socket_path, f"/v1/sessions?range=all&user={USER}")["sessions"]
        sessions = [next(s for s in listed if s["id"] == sid) for sid in stopped]
        check(all(sid in records for sid in stopped), f"records of both sessions published ({', '.join(stopped)})")

        out = os.path.join(tmp, "export")
        os.makedirs(out)
        # autoStart opened the boards' next sessions after the stop: the user has those too, open.
        now = rel.admin_get(gw.socket_path, f"/v1/sessions?range=all&user={USER}")["sessions"]
        written = gyrogate(gateway, "export", "--config", config, "--user", USER, "--out", out).split()
        names = [os.path.basename(p) for p in written]
        starts = {s["device"].replace(":", ""): s for s in sessions}
        check(len(written) == len(now) and all(n.endswith("_Gyroscope.csv") for n in names)
              and all(any(f"_{mac}_" in n for n in names) for mac in starts),
              f"`gyrogate export --user` with the daemon running wrote one CSV per session and board ({len(now)} sessions, "
              f"{len(now) - 2} of them open): {names}")
        written = [next(p for p in written if f"_{stamp(s['startMs'])}_{mac}_" in p) for mac, s in starts.items()]
        for i, (sid, session) in enumerate(zip(stopped, sessions)):
            board = f"board {i + 1} ({session['device']})"
            mac = session["device"].replace(":", "")
            path = next(p for p in written if f"_{mac}_" in p)
            df = pd.read_csv(path)
            check(list(df.columns[:6]) == ["epoch (ms)", "time (+00:00)", "elapsed (s)", "x-axis (deg/s)", "y-axis (deg/s)", "z-axis (deg/s)"],
                  f"{board}: MetaBase's header ({','.join(df.columns[:6])}), file {os.path.basename(path)}")
            check_csv(df, records[sid], chunks, sid, session["samples"], board)
            status, headers, body = admin_raw(gw.socket_path, f"/v1/sessions/{sid}/export?format=csv")
            with open(path, "rb") as f:
                same = f.read() == body
            check(status == 200 and headers.get("transfer-encoding") == "chunked" and same
                  and os.path.basename(path) in headers.get("content-disposition", ""),
                  f"{board}: GET /v1/sessions/{{id}}/export?format=csv streams the same bytes ({len(body)}, chunked, "
                  f"{headers.get('content-disposition')})")
            jsonl = [json.loads(line) for line in gyrogate(gateway, "export", "--config", config, "--session", sid, "--format", "jsonl").splitlines()]
            check(len(jsonl) == session["samples"] and all(o["session"] == sid and "gx" in o for o in jsonl),
                  f"{board}: JSON Lines, one object a sample ({len(jsonl)})")
        status, _h, body = admin_raw(gw.socket_path, f"/v1/sessions/{stopped[0]}/export?format=xml")
        check(status == 400 and b"csv, influx or jsonl" in body, f"a bad format is refused with 400 naming the formats: {body[:120]!r}")
        status, _h, body = admin_raw(gw.socket_path, "/v1/sessions/nobody___1/export?format=csv")
        check(status == 404 and b"nobody___1" in body, f"an unknown session is 404 naming it: {body[:120]!r}")

        merged = gyrogate(gateway, "export", "--config", config, "--user", USER, "--merge", "--out", out).split()
        first = sorted(sessions, key=lambda s: s["startMs"])
        table = [p for p in merged if os.path.basename(p) == f"{USER}_{stamp(first[0]['startMs'])}_merged_Gyroscope.csv"]
        check(len(merged) == 2 and len(table) == 1,
              f"--merge wrote one table per group of overlapping sessions (the stopped ones, the open ones): {[os.path.basename(p) for p in merged]}")
        if table:
            check_merged(table[0], first)

        recipe = subprocess.run([sys.executable, os.path.join(HERE, "pandas_recipe.py"), written[0], os.path.join(tmp, "plot.png")],
                                capture_output=True, text=True, timeout=120)
        with open(os.path.join(ROOT, "docs", "export.md")) as f:
            quoted = open(os.path.join(HERE, "pandas_recipe.py")).read().strip() in f.read()
        check(recipe.returncode == 0 and os.path.getsize(os.path.join(tmp, "plot.png")) > 10000 and quoted,
              f"docs/export.md's pandas recipe (quoted there: {quoted}) plots the CSV: {recipe.stdout.strip() or recipe.stderr.strip()[-300:]}")

        if shutil.which("influxd") is None:
            # Under CI every part runs: a machine where it could not be installed fails here.
            check(os.environ.get("CI") != "true", "SKIPPED the InfluxDB checks: no influxd (apt-get install influxdb)")
            return
        influx = Influx(procs, os.path.join(tmp, "influx"))
        create, write = recipe_commands(influx.port)
        env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(gateway)) + os.pathsep + os.environ["PATH"])
        for sid in stopped:
            for command in (create, write):
                done = subprocess.run(command, shell=True, cwd=tmp, env=dict(env, SESSION=sid), capture_output=True, text=True, timeout=120)
                if done.returncode != 0 or done.stdout.strip().startswith('{"error'):
                    raise RuntimeError(f"{command}: {done.returncode} {done.stdout} {done.stderr}")
        for sid, session in zip(stopped, sessions):
            got = influx.count(f"session = '{sid}'")
            check(got == session["samples"], f"influx: count(x) of {sid} is its {session['samples']} samples ({got})")
            df = pd.read_csv(next(p for p in written if f"_{session['device'].replace(':', '')}_" in p))
            lo, hi = df["epoch (ms)"].iloc[len(df) // 4], df["epoch (ms)"].iloc[len(df) // 2]
            want = int(((df["epoch (ms)"] >= lo) & (df["epoch (ms)"] <= hi)).sum())
            got = influx.count(f"session = '{sid}' AND time >= {round(lo * 1000) * 1000} AND time <= {round(hi * 1000) * 1000}")
            check(got == want, f"influx: a time-range query of {sid} returns that range's {want} samples ({got})")
        code, _ = gw.terminate()
        check(code == 0, f"SIGTERM: exit {code}")
        sub.close()
    finally:
        procs.stop_all()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--keep-temp", action="store_true")
    args = parser.parse_args()
    gateway = os.path.abspath(args.gateway)
    tmp = tempfile.mkdtemp(prefix="gyrogate-export-")
    started = time.monotonic()
    try:
        run(gateway, tmp)
    except Exception as e:  # a harness or gateway failure, reported as a check
        import traceback
        traceback.print_exc()
        check(False, f"the test stopped: {type(e).__name__}: {e}")
    failed = sum(1 for ok, _ in results if not ok)
    print(f"-- export: {time.monotonic() - started:.1f} s; {len(results) - failed} passed, {failed} failed")
    if failed or args.keep_temp:
        print(f"stores and logs kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
