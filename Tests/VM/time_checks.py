"""The checks of Tests/VM/guest_time_check.py (scenarios t, u, v, w of Tests/VM/hcivm.py) over what a
run left: every version of every document the subscriber received, the peer's record of what each
board produced and when (its clock is the true one), and the store through the gateway's CLI.
(a) to (e) are listed in guest_time_check.py's docstring; each check is (ok, text), ok None for
one that only informs.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks", "E2E"))
import e2e_bench as bench  # noqa: E402  (analyse: delivery, duplicates, the waveform)
from time_documents import DocumentChecks  # noqa: E402  ((c) to (e))
from time_support import DAY, TICK_S, clock_readings, delta, due, info, iso  # noqa: E402,F401  (DAY, delta, iso: for guest_time_check)

class Analysis(DocumentChecks):
    """One run's checks. `run` (guest_time_check.Run) gives: args, the subscriber's messages
    (guest monotonic time, topic, payload, phase), the phases and status polls in true time, the
    monotonic anchor (peer time - guest CLOCK_MONOTONIC), the peer, the gateway's log and store."""

    def __init__(self, run):
        self.run, self.a = run, run.args
        self.shift = run.args.truth_shift
        self.frame: dict[str, float] = {}  # w: chunk topic -> -3 days when the kill left it before its re-dating
        self.checks = run.checks
        self.figures: dict = {}

    def check(self, ok: bool | None, text: str) -> None:
        self.checks.append((ok, text))

    def all(self) -> dict:
        self.documents()
        self.boards()
        self.number()
        self.once()
        if self.a.scenario == "w":
            self.frames()
        self.stamps()
        if self.a.scenario == "v":
            self.board_versions()
        self.paths()
        self.day()
        self.clock()
        return self.figures

    # -- what there is -----------------------------------------------------------------------

    def documents(self) -> None:
        """The last version of every document, when each topic was first received, every version."""
        messages = self.run.sub.take()
        self.final: dict[str, bytes] = {}
        self.first_seen: dict[str, float] = {}
        self.versions: dict[str, list] = {}
        for mono, topic, payload, phase in messages:
            self.first_seen.setdefault(topic, mono)
            self.final[topic] = payload
            self.versions.setdefault(topic, []).append((mono, phase, payload))
        docs = {t: json.loads(p) for t, p in self.final.items() if p}
        self.chunks = {t: d for t, d in docs.items() if t.startswith("realtime_data/") and d.get("sensor", "gyro") == "gyro"}
        self.records = {t: d for t, d in docs.items() if t.startswith("records/")}
        self.daily = {t: d for t, d in docs.items() if "/DailySessions/" in t}
        self.medals = {t.split("/")[1]: d for t, d in docs.items() if t.endswith("/MedalsAndTrophies/current")}
        self.figures["messages"] = len(messages)
        self.figures["documents"] = {"chunks": len(self.chunks), "records": len(self.records), "daily_sessions": len(self.daily),
                                     "deleted_at_the_end": len([t for t, p in self.final.items() if not p]),
                                     "versions": sum(len(v) for v in self.versions.values())}

    def boards(self) -> None:
        """The peer's record: each board's runs, the samples it could not send, its power cycle's start."""
        peer = self.run.peer
        before = peer.call(cmd="time")["time"]
        status = peer.call(cmd="status")
        self.sensors = status["sensors"]
        backlog = status["controller"].get("hci_write_buffer_bytes", 0)
        self.figures["peer_h4_backlog_bytes"] = backlog
        if backlog > 65536:
            self.check(None, f"the peer holds {backlog} bytes the guest's serial line has not taken (a starved VM: "
                             "samples stuck there never reach the gateway; not a time matter)")
        peer_now = (before + peer.call(cmd="time")["time"]) / 2  # about when the status read the ticks
        key = lambda s: s["address"][:17].upper()  # noqa: E731 - "C4:…:01/P" -> "C4:…:01"
        self.runs_of = {key(s): s["gyro_runs"] for s in self.sensors}
        self.stretches = {key(s): [x for x in s.get("undelivered_stretches", []) if x.get("stream") == "gyro"]
                          for s in self.sensors}
        # The true time of each board's tick 0 (its power cycle's start), to half a tick.
        # A crystal e fast counts (1 + e) ticks per true tick.
        self.reset_true = {key(s): peer_now - (s["tick"] + 0.5) * TICK_S / (1 + s.get("drift_ppm", 0.0) * 1e-6)
                           for s in self.sensors}
        self.figures["board_reset_true"] = {d: iso(t) for d, t in self.reset_true.items()}
        self.figures["board_drift_ppm"] = {key(s): s.get("drift_ppm", 0.0) for s in self.sensors}
        info("the boards' crystals: " + ", ".join(f"{d} {ppm:+g} ppm" for d, ppm in self.figures["board_drift_ppm"].items()))
        readings = [r | {"error_ms": round((r["resetTime"] - self.reset_true[r["sensor"]]) * 1000, 3)}
                    for r in clock_readings(self.run.gateway_log) if r["sensor"] in self.reset_true]
        self.figures["gateway_clock_readings"] = readings
        for r in readings:
            info(f"the gateway placed {r['sensor']}'s tick 0 {delta(r['error_ms'])} from the peer's clock "
                 f"(its log clock read: round trip {r['roundTripMs']:.1f} ms, bounds {r['boundsMs']:.1f} ms wide)")

    def number(self) -> None:
        """Every point of the last versions numbered: n from x, per board in the order its chunks were
        first published, split where the board's counter restarts; each stretch of n placed on the
        board's run whose sample was due last before the stretch's first chunk arrived."""
        by_device: dict[str, list[str]] = {}
        for topic, doc in self.chunks.items():
            by_device.setdefault(str(doc.get("device"))[:17].upper(), []).append(topic)
        self.points: list[dict] = []  # device, topic, i, n, stamp_ms, p (the point), run, due
        unmatched = []
        for device, topics in sorted(by_device.items()):
            topics.sort(key=lambda t: self.first_seen[t])
            peer_runs = self.runs_of.get(device, [])
            for stretch in self._counter_runs(device, topics):
                arrived = self.first_seen[stretch[0]["topic"]] + self.run.anchor
                first_n, last_n = stretch[0]["n"], max(q["n"] for q in stretch)
                best = None
                for k, prun in enumerate(peer_runs):
                    if prun["sent"] <= 0 or last_n >= prun["generated"]:
                        continue
                    lag = arrived - due(prun, first_n)
                    if lag >= -0.5 and (best is None or lag < best[0]):
                        best = (lag, k)
                if best is None:
                    unmatched.append(f"{device}: {len(stretch)} samples n {first_n}..{last_n} (first chunk arrived {iso(arrived)})")
                    continue
                for q in stretch:
                    q["run"], q["due"] = best[1], due(peer_runs[best[1]], q["n"])
                    self.points.append(q)
        self.check(not unmatched, "every sample published belongs to a run of its board (n below what it generated, "
                   "due before its chunk arrived)" + (f" -- not: {'; '.join(unmatched[:3])}" if unmatched else ""))

    def _counter_runs(self, device: str, topics: list[str]) -> list[list[dict]]:
        out: list[list[dict]] = []
        prev_n = prev_x = None
        for topic in topics:
            for i, p in enumerate(self.chunks[topic].get("data", [])):
                x = int(round(p["gx"] * bench.LSB_PER_DPS))
                d = bench.int16(x - prev_x) if prev_x is not None else 0
                if prev_n is None or d <= 0:
                    n = x if x >= 0 else x + 65536
                    out.append([])
                else:
                    n = prev_n + d
                prev_n, prev_x = n, x
                out[-1].append({"device": device, "topic": topic, "i": i, "n": n, "stamp_ms": p["timestamp"], "p": p})
        return out

    # -- (a) every sample once ---------------------------------------------------------------

    def once(self) -> None:
        """e2e_bench.analyse per (board, run) over the last versions (each a pseudo-device), and
        exactly: every n the board sent is there, but for at most a second in flight at a stop."""
        keys: dict[tuple[str, int], str] = {}
        grouped: dict[tuple[str, str], list] = {}
        for q in self.points:
            key = keys.setdefault((q["device"], q["run"]), f"R{len(keys):02d}" + q["device"][3:])  # 17 characters
            grouped.setdefault((q["topic"], key), []).append(q["p"])
        msgs = []
        for (topic, key), pts in grouped.items():
            doc = {k: v for k, v in self.chunks[topic].items() if k != "data"} | {"device": key, "data": pts}
            msgs.append((0.0, f"{topic}#{key}", json.dumps(doc).encode()))
        pseudo_peer = [{"address": key, "samples_sent": self.runs_of[device][k]["sent"]} for (device, k), key in keys.items()]
        e2e = bench.analyse(msgs, pseudo_peer, self.a.odr)
        total_sent = sum(s["samples_sent"] for s in self.sensors)
        ratio = e2e["delivered"] / total_sent if total_sent else 0.0
        lost, per_run, killed_tail = [], {}, 0
        for (device, k), key in keys.items():
            board_run = self.runs_of[device][k]
            ns = {q["n"] for q in self.points if q["device"] == device and q["run"] == k}
            last = max(ns) if ns else -1
            unsent = set()
            for x in self.stretches.get(device, []):
                if x.get("run") == k:
                    unsent.update(range(x["n"], x["n"] + x["samples"]))
            missing = [n for n in range(last + 1) if n not in ns and n not in unsent]
            if missing:
                lost.append(f"{device} run {k}: {len(missing)} sent and not delivered, first n {missing[:5]}")
            tail = len([n for n in range(last + 1, board_run["generated"]) if n not in unsent])
            if self.a.scenario == "w" and k == 0:
                # The kill's outage: without backfill, what the board sent until the next gateway
                # reset its controller went to a host that was gone (counted, not a failure).
                killed_tail += tail
            elif tail > self.a.odr:
                lost.append(f"{device} run {k}: {tail} samples sent after the last one delivered (n {last}), "
                            f"more than a second in flight")
            v = e2e["per_device"].get(key, {})
            per_run[f"{device} run {k}"] = {"delivered": v.get("delivered"), "sent": board_run["sent"],
                                            "generated": board_run["generated"], "duplicates": v.get("duplicates"),
                                            "mismatches": v.get("mismatches"), "not_sent_inside": len([n for n in unsent if n <= last]),
                                            "lost_inside": len(missing), "sent_after_last_delivered": tail}
        self.figures["runs"] = per_run
        if self.a.scenario == "w":
            ratio = e2e["delivered"] / (total_sent - killed_tail) if total_sent > killed_tail else 0.0
            info(f"(a) {killed_tail} samples sent between the SIGKILL and the next gateway's reset of the controller "
                 "(lost with the process: this scenario runs without backfill)")
        sent_text = f"{total_sent - killed_tail} (and {killed_tail} after the kill)" if killed_tail else f"{total_sent}"
        self.check(ratio >= 0.95, f"(a) delivered {e2e['delivered']} of the {sent_text} samples the boards sent "
                   f"({ratio:.4f}, at least 0.95)")
        self.check(e2e["duplicates"] == 0, f"(a) no sample twice in the last versions of the chunks ({e2e['duplicates']} duplicates)")
        self.check(e2e["mismatches"] == 0, f"(a) every sample matches the waveform of its n ({e2e['mismatches']} mismatches)")
        self.check(not lost and bool(keys), "(a) every sample the boards sent is there, once (but for at most a second in flight "
                   "at a stop)" + (f" -- {'; '.join(lost[:3])}" if lost else "" if keys else " -- no samples at all"))

    # -- (w) before or after --------------------------------------------------------------------

    def frames(self) -> None:
        """w: a SIGKILL during the re-dating leaves each session of the killed run either before it
        (3 days behind, as captured) or after it (true), wholly: its chunks and record in one frame.
        The other checks then take each chunk's truth in its own frame."""
        # The frame before the re-dating is the guest's clock as it was set, measured: about 3 days
        # behind, give or take what the step and the measurement missed (within their bounds).
        behind = self.unsynchronised_offset()
        errors: dict[str, list[float]] = {}
        for q in self.points:
            errors.setdefault(q["topic"], []).append(q["stamp_ms"] / 1000 - (q["due"] + self.shift))
        for topic, errs in errors.items():
            self.frame[topic] = behind if statistics.median(errs) < -DAY / 2 else 0.0
        killed_at = next((p["start"] for p in self.run.phases if p["name"] == "restart (no gateway)"), float("inf"))
        first_due = {}
        for q in self.points:
            first_due[q["topic"]] = min(first_due.get(q["topic"], float("inf")), q["due"])
        mixed, before, after, killed_run = [], [], [], []
        for topic, doc in sorted(self.records.items()):
            chunks = [f"realtime_data/{c}" for c in doc.get("gscope_data") or [] if f"realtime_data/{c}" in self.frame]
            frames = {self.frame[c] for c in chunks}
            sid = topic.split("/", 1)[1]
            (mixed if len(frames) > 1 else before if frames == {behind} else after).append(sid)
            if chunks and min(first_due[c] for c in chunks) < killed_at:
                killed_run.append(sid)
        # Where the kill fell, from the first gateway's log (the second appends to it after its start).
        try:
            with open(self.run.gateway_log, errors="replace") as f:
                first_run = f.read().split("bluetooth host started", 2)
            log = first_run[0] + (first_run[1] if len(first_run) > 1 else "")
        except OSError:
            log = ""
        noticed, committed = "the gateway's time is re-dated" in log, "sessions re-dated" in log
        info("(w) the SIGKILL came " + ("after the step was noticed and " if noticed else "before the step was noticed and ")
             + ("after" if committed else "before") + " the store committed its re-dating")
        self.figures["killed_redating"] = {"before": before, "after": after, "mixed": mixed, "killed_run": killed_run,
                                           "step_noticed": noticed, "redating_committed": committed}
        self.check(not mixed, f"(w) every session wholly before or wholly after the re-dating the kill interrupted: "
                              f"{len(before)} before (3 days behind), {len(after)} at their true time"
                   + (f" -- mixed: {', '.join(mixed[:3])}" if mixed else ""))

    def unsynchronised_offset(self) -> float:
        """The guest's clock minus true time while it was 3 days behind (w's first event)."""
        for e in self.run.events:
            if e["what"].startswith("set 3 days behind"):
                measured = e["result"]["offset_after"]
                info(f"(w) the frame before the re-dating: the guest's clock {delta(measured['offset_ms'] + 3 * DAY * 1000)} "
                     f"off 3 days behind (measured, round trip {measured['rtt_ms']} ms)")
                return measured["offset_s"] - self.shift
        return -3 * DAY

    def truth(self, q: dict) -> float:
        """The time sample `q` should carry: its due time, in its chunk's frame (w)."""
        return q["due"] + self.shift + self.frame.get(q["topic"], 0.0)

    # -- (b) stamps ---------------------------------------------------------------------------

    def phase_of(self, t: float) -> dict:
        chosen = self.run.phases[0]
        for p in self.run.phases:
            if p["start"] <= t:
                chosen = p
        return chosen

    def tolerance_ms(self, q: dict) -> float:
        """20 ms; + the drift bound for a sample due while the boards dated (v)."""
        if self.phase_of(q["due"])["board_dated"]:
            return self.a.tolerance_ms + self.a.drift_ppm * 1e-6 * (q["due"] - self.reset_true[q["device"]]) * 1000
        return self.a.tolerance_ms

    def stamps(self) -> None:
        errors: dict[str, dict] = {}
        examples: dict[str, str] = {}
        for q in self.points:
            err = q["stamp_ms"] - self.truth(q) * 1000
            name = self.phase_of(q["due"])["name"]
            e = errors.setdefault(name, {"samples": 0, "errors": [], "outside": 0, "tolerance_ms": 0.0, "by_device": {}})
            e["samples"] += 1
            e["errors"].append(err)
            e["by_device"].setdefault(q["device"], []).append(err)
            tol = self.tolerance_ms(q)
            e["tolerance_ms"] = max(e["tolerance_ms"], tol)
            if abs(err) > tol:
                e["outside"] += 1
                examples.setdefault(name, f"{q['device']} n {q['n']} stamped {iso(q['stamp_ms'] / 1000)}, "
                                          f"true {iso(self.truth(q))} ({delta(err)})")
        self.figures["timestamps"] = {}
        for p in self.run.phases:
            e = errors.get(p["name"])
            if not e:
                continue
            med, worst = statistics.median(e["errors"]), max(e["errors"], key=abs)
            self.figures["timestamps"][p["name"]] = {
                "samples": e["samples"], "median_ms": round(med, 3), "worst_ms": round(worst, 3),
                "outside_tolerance": e["outside"], "tolerance_ms": round(e["tolerance_ms"], 2),
                "median_ms_by_device": {d: round(statistics.median(v), 3) for d, v in e["by_device"].items()}}
            self.check(e["outside"] == 0,
                       f"(b) last versions, samples due in phase {p['name']!r}: {e['samples'] - e['outside']} of {e['samples']} "
                       f"within {e['tolerance_ms']:.1f} ms of their true time (median {delta(med)}, worst {delta(worst)})"
                       + (f" -- e.g. {examples[p['name']]}" if p["name"] in examples else ""))
        if not self.points:
            self.check(False, "(b) no sample to check")

    def board_versions(self) -> None:
        """v: the chunk versions published while the clock was unsynchronised, dated by the boards."""
        by_key = {(q["topic"], q["i"]): q for q in self.points}
        seen = outside = 0
        worst = 0.0
        example = None
        for topic, versions in self.versions.items():
            if topic not in self.chunks:
                continue
            for _mono, phase, payload in versions:
                if phase != "run 2 board time" or not payload:
                    continue
                for i, p in enumerate(json.loads(payload).get("data", [])):
                    q = by_key.get((topic, i))
                    if q is None:
                        continue
                    err = p["timestamp"] - self.truth(q) * 1000
                    seen += 1
                    worst = max(worst, abs(err))
                    if abs(err) > self.tolerance_ms(q):
                        outside += 1
                        example = example or f"{q['device']} n {q['n']} {delta(err)}"
        self.check(seen > 0 and outside == 0,
                   f"(b) chunk versions published while unsynchronised (board time): {seen - outside} of {seen} samples "
                   f"within {self.a.tolerance_ms:g} ms + {self.a.drift_ppm:g} ppm of their true time (worst {delta(worst)})"
                   + (f" -- e.g. {example}" if example else "") + ("" if seen else " -- no chunk was published then"))
