#!/usr/bin/env python3
"""The gateway on a full store (issue 39): for each size, fill a store, then measure on it.

    sudo .venv/bin/python Tests/Benchmarks/StoreSize/store_size_bench.py [--sizes 0.1G,0.5G,2G]
        [--gateway .build/release/gyrogate] [--filler .build/release/store-filler]
        [--odrs 100,400] [--rounds 2] [--seconds 30] [--skip-e2e] [--json OUT]

Per size (stores cached in .build-storefill/, gitignored; delete a directory to fill it again):

1. fill: `store-filler fill DIR --bytes SIZE --sensors 4 --hz 100` (months of 4-hour sessions of
   4 boards, 2 users, their gaps; all published but the newest 100 chunks), timed once;
2. retention: a copy of it gets one timed pass of the store's own enforceRetention with
   retention.maxStoreBytes 1 MiB under its size (`store-filler retention`): it prunes to 90 %.
   That pruned copy (a store at its retention limit, its freed pages reused by new chunks) is
   the store of every step below, with retention.maxStoreBytes = SIZE;
3. READY: page cache dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`), the gateway started
   on a scratch copy with NOTIFY_SOCKET set: seconds from the exec to its READY=1 (sent once
   the admin socket listens); 3 runs, each on a fresh copy, median; a private mosquitto, no
   configured sensor, no controller (the gateway retries it);
4. then, the gateway running: `/v1/status` over the admin socket (20 requests, median and
   worst) and `gyrogate sessions --range month --socket …` wall time (7 runs, median);
5. the backfill's gap lookup (GyroStore.fillableGaps, `store-filler gaps`), page cache dropped,
   first and median of 5;
6. e2e (Tests/Benchmarks/E2E/e2e_bench.py --ext4 --check --skip-reference) at 4 x ODR Hz for
   --seconds, an empty store and each full one (--store-from, --max-store-bytes SIZE), runs
   alternated, --rounds times.
Needs root (drop_caches, the ext4 loop device).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Tests", "Benchmarks", "E2E"))
import e2e_bench  # noqa: E402  (Processes, Peer, start_broker)

CACHE = os.path.join(REPO, ".build-storefill")


def say(msg: str) -> None:
    print(f"[store-size] {msg}", file=sys.stderr, flush=True)


def size_bytes(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def drop_caches() -> None:
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def fields(line: str) -> dict:
    return dict(p.split("=", 1) for p in line.split()[1:] if "=" in p)


def run_filler(args, argv: list[str], tag: str) -> str:
    out = subprocess.run([args.filler] + argv, capture_output=True, text=True, timeout=7200)
    if out.returncode != 0:
        raise RuntimeError(f"store-filler {' '.join(argv)}: {out.returncode} {out.stdout}{out.stderr}")
    line = [l for l in out.stdout.splitlines() if l.startswith(tag)]
    return line[-1] if line else ""


def prepared(args, label: str, size: int) -> dict:
    """The filled store (cached) and its pruned copy, with the fill's and the pass's figures."""
    filled, pruned = os.path.join(CACHE, f"fill-{label}"), os.path.join(CACHE, f"pruned-{label}")
    marker = os.path.join(filled, "FILLED")
    if not os.path.exists(marker):
        shutil.rmtree(filled, ignore_errors=True)
        say(f"{label}: filling {filled}")
        t0 = time.monotonic()
        line = run_filler(args, ["fill", filled, "--bytes", str(size), "--sensors", "4", "--hz", "100"], "FILLED")
        with open(marker, "w") as f:
            f.write(f"{line} wall={time.monotonic() - t0:.1f}\n")
    info = {"fill": fields(open(marker).read().strip())}
    pmarker = os.path.join(pruned, "RETENTION")
    if not os.path.exists(pmarker):
        shutil.rmtree(pruned, ignore_errors=True)
        copy_store(filled, pruned)
        drop_caches()
        line = run_filler(args, ["retention", pruned, "--limit", str(int(info["fill"]["bytes"]) - (1 << 20))], "RETENTION")
        with open(pmarker, "w") as f:
            f.write(line + "\n")
    info["retention"] = fields(open(pmarker).read().strip())
    info["store"] = pruned
    return info


def copy_store(source: str, target: str) -> None:
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(source):
        path = os.path.join(source, name)
        if os.path.isfile(path) and name.startswith("store.") and not name.endswith("-shm"):
            shutil.copyfile(path, os.path.join(target, name))


def http_get(sock_path: str, path: str) -> bytes:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(sock_path)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    return data


def gateway_run(args, store: str | None, size: int) -> dict:
    """READY (3 cold starts) and, on the last, /v1/status and `sessions --range month`."""
    result: dict = {"ready_s": []}
    procs = e2e_bench.Processes()
    tmp = tempfile.mkdtemp(prefix="gyrogate-storesize-", dir=CACHE)
    try:
        broker, port = e2e_bench.start_broker(procs, tmp)
        sock_path = os.path.join(tmp, "admin.sock")
        config = {"gatewayId": "store-size", "dataDirectory": os.path.join(tmp, "data"), "timeZone": "UTC",
                  "bluetooth": {"transport": "tcp:127.0.0.1:1", "maxSensors": 4}, "sensors": [],
                  "mqtt": {"host": "127.0.0.1", "port": port}, "admin": {"socketPath": sock_path, "mode": "0600"},
                  "retention": {"maxStoreBytes": max(size, 1 << 20)}}
        config_path = os.path.join(tmp, "gyrogate.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        for attempt in range(3):
            last = attempt == 2
            shutil.rmtree(config["dataDirectory"], ignore_errors=True)
            if store:
                copy_store(store, config["dataDirectory"])
            notify_path = os.path.join(tmp, "notify.sock")
            if os.path.exists(notify_path):
                os.unlink(notify_path)
            notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            notify.bind(notify_path)
            notify.settimeout(120)
            drop_caches()
            log = open(os.path.join(tmp, f"gateway-{attempt}.log"), "wb")
            t0 = time.monotonic()
            gw = procs.start([args.gateway, "run", "--config", config_path], env=dict(os.environ, NOTIFY_SOCKET=notify_path),
                             stdout=log, stderr=log)
            while True:
                msg = notify.recv(4096).decode()
                if "READY=1" in msg:
                    break
            result["ready_s"].append(time.monotonic() - t0)
            notify.close()
            if last:
                times, empty = [], 0
                while len(times) < 20:
                    t = time.monotonic()
                    reply = http_get(sock_path, "/v1/status")
                    if not reply:  # closed without an answer (seen right after READY): counted, asked again
                        empty += 1
                        if empty > 20:
                            raise RuntimeError("/v1/status: no answer")
                        time.sleep(0.05)
                        continue
                    times.append(time.monotonic() - t)
                    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
                result["status_empty_replies"] = empty
                result["status_ms_median"] = 1000 * statistics.median(times)
                result["status_ms_worst"] = 1000 * max(times)
                times = []
                for _ in range(7):
                    t = time.monotonic()
                    out = subprocess.run([args.gateway, "sessions", "--range", "month", "--socket", sock_path, "--json"],
                                         capture_output=True, timeout=60)
                    times.append(time.monotonic() - t)
                    if out.returncode != 0:
                        raise RuntimeError(f"sessions --range month: {out.returncode} {out.stderr.decode()}")
                result["month_ms_median"] = 1000 * statistics.median(times)
                result["month_ms_first"] = 1000 * times[0]
                result["month_sessions"] = len(json.loads(out.stdout).get("sessions", [])) if out.stdout.strip().startswith(b"{") \
                    else None
                result["month_json_bytes"] = len(out.stdout)
            e2e_bench.Processes.stop(gw, timeout=30)
            log.close()
        if store:
            drop_caches()
            line = run_filler(args, ["gaps", config["dataDirectory"], "C4:BE:84:00:10:01"], "GAPS")
            result["gaps"] = dict(p.split("=", 1) for p in line.split()[1:])
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    result["ready_s_median"] = statistics.median(result["ready_s"])
    return result


def e2e(args, odr: int, store: str | None, size: int, tag: str) -> dict:
    out = os.path.join(CACHE, f"e2e-{tag}-{odr}.json")
    argv = [sys.executable, os.path.join(REPO, "Tests", "Benchmarks", "E2E", "e2e_bench.py"), "--sensors", "4", "--odr", str(odr),
            "--seconds", str(args.seconds), "--ext4", "--check", "--skip-reference", "--gateway", args.gateway, "--json", out]
    if store:
        argv += ["--store-from", store, "--max-store-bytes", str(size)]
    say(f"e2e {tag} {odr} Hz")
    run = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        say(f"e2e {tag} {odr} Hz exited {run.returncode}: {run.stdout[-2000:]}")
    g = json.load(open(out))["phases"]["gyrogate"]
    keys = ["cpu_s_per_M_samples", "peak_rss_mb", "rss_anon_end_mb", "rss_anon_peak_mb", "device_bytes_per_sample",
            "write_bytes_per_sample", "mqtt_payload_bytes_per_sample"]
    return {k: g.get(k) for k in keys} | {"check": json.load(open(out))["check_failures"], "ratio": g["delivery"]["ratio"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="0.1G,0.5G,2G")
    p.add_argument("--gateway", default=os.path.join(REPO, ".build", "release", "gyrogate"))
    p.add_argument("--filler", default=os.path.join(REPO, ".build", "release", "store-filler"))
    p.add_argument("--odrs", default="100,400")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--skip-e2e", action="store_true")
    p.add_argument("--skip-ready", action="store_true")
    p.add_argument("--json", metavar="OUT", default=os.path.join(CACHE, "store-size.json"))
    args = p.parse_args()
    os.makedirs(CACHE, exist_ok=True)
    results: dict = {}
    sizes = [(label, size_bytes(label)) for label in args.sizes.split(",")]
    stores = {}
    for label, size in sizes:
        stores[label] = prepared(args, label, size)
        results[label] = {"fill": stores[label]["fill"], "retention": stores[label]["retention"]}
        say(f"{label}: {results[label]}")
    if not args.skip_ready:
        results["empty"] = {"gateway": gateway_run(args, None, 1 << 30)}
        for label, size in sizes:
            results[label]["gateway"] = gateway_run(args, stores[label]["store"], size)
            say(f"{label}: {results[label]['gateway']}")
    if not args.skip_e2e:
        for odr in [int(o) for o in args.odrs.split(",")]:
            for r in range(args.rounds):
                results.setdefault("empty", {}).setdefault(f"e2e_{odr}", []).append(e2e(args, odr, None, 0, f"empty-{r}"))
                for label, size in sizes:
                    results[label].setdefault(f"e2e_{odr}", []).append(e2e(args, odr, stores[label]["store"], size, f"{label}-{r}"))
                with open(args.json, "w") as f:
                    json.dump(results, f, indent=2)
    with open(args.json, "w") as f:
        json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
