"""The document checks of Tests/VM/guest_time_check.py, (c) to (e): records and daily sessions at
the paths of their true times, the true day's sessions and medals, the clock the gateway shows.
A mixin of time_checks.Analysis (its points, frames and tolerances)."""

from __future__ import annotations

import json
import re

from time_support import RECORD_FIELDS, clock_state, cli, delta, expected_medals, info, iso, utc_date


class DocumentChecks:
    # -- (c) paths ----------------------------------------------------------------------------

    def paths(self) -> None:
        """Records and daily sessions at the paths of their true times; the sessions as they truly were."""
        first_of: dict[str, dict] = {}  # chunk topic -> its first numbered point
        last_of: dict[str, dict] = {}
        count: dict[str, int] = {}
        for q in self.points:
            t = q["topic"]
            if t not in first_of or q["i"] < first_of[t]["i"]:
                first_of[t] = q
            if t not in last_of or q["i"] > last_of[t]["i"]:
                last_of[t] = q
            count[t] = count.get(t, 0) + 1
        wrong_path, wrong_start, not_closed, wrong_count, empty = [], [], [], [], []
        self.true_sessions: dict[str, dict] = {}
        for topic, doc in sorted(self.records.items()):
            sid = topic.split("/", 1)[1]
            m = re.fullmatch(r"(.+)___(\d+)(?:_\d+)?", sid)
            topics = [f"realtime_data/{c}" for c in doc.get("gscope_data") or [] if f"realtime_data/{c}" in first_of]
            if not topics:
                empty.append(sid)
                continue
            first = min((first_of[t] for t in topics), key=lambda q: q["due"])
            last = max((last_of[t] for t in topics), key=lambda q: q["due"])
            start = self.truth(first)
            truth = self.true_sessions[sid] = {"user": doc.get("user_id"), "start": start, "end": self.truth(last),
                                               "samples": sum(count[t] for t in topics)}
            if not m or abs(int(m.group(2)) - start) > 1.05:
                wrong_path.append(f"{topic} ({delta((int(m.group(2)) - start) * 1000) if m else 'no start in the id'}: "
                                  f"its first sample was due {iso(start)})")
            if doc.get("start") is None or abs(doc["start"] - start * 1000) > self.tolerance_ms(first):
                wrong_start.append(f"{sid} start {delta(doc['start'] - start * 1000) if doc.get('start') is not None else None}")
            if doc.get("end") is None or doc.get("timestamp") is None:
                not_closed.append(sid)
            if doc.get("samples") != truth["samples"]:
                wrong_count.append(f"{sid}: samples {doc.get('samples')}, its chunks hold {truth['samples']}")
        n = len(self.records)
        self.check(bool(self.records) and not wrong_path,
                   f"(c) {n - len(wrong_path)} of {n} non-empty records at the path of their true start second"
                   + (f" -- wrong: {'; '.join(wrong_path[:3])}" if wrong_path else ""))
        self.check(not wrong_start, "(c) every record's start is the true time of its first sample"
                   + (f" -- {len(wrong_start)} not: {'; '.join(wrong_start[:3])}" if wrong_start else ""))
        self.check(not empty, "(c) no non-empty record without samples remains" + (f" -- {', '.join(empty[:4])}" if empty else ""))
        self.check(not not_closed, "(c) every record is closed (end and timestamp set)"
                   + (f" -- open: {', '.join(not_closed[:4])}" if not_closed else ""))
        self.check(not wrong_count, "(c) every record's samples are the points of its chunks"
                   + (f" -- {'; '.join(wrong_count[:3])}" if wrong_count else ""))
        listed = {c for d in self.records.values() for c in d.get("gscope_data") or []}
        orphans = [t for t, d in self.chunks.items()
                   if t.split("/", 1)[1] not in listed or f"records/{d.get('record')}" not in self.records]
        self.check(not orphans, f"(c) every chunk names a record that lists it ({len(orphans)} do not"
                   + (f", e.g. {orphans[0]} -> record {self.chunks[orphans[0]].get('record')}" if orphans else "") + ")")
        bad = []
        for topic, doc in sorted(self.daily.items()):
            sid = topic.rsplit("/", 1)[1]
            truth = self.true_sessions.get(sid)
            if truth is None:
                bad.append(f"{topic}: no record with samples at records/{sid}")
            elif doc.get("date") != utc_date(truth["start"]) or doc.get("open") is not False:
                bad.append(f"{topic}: date {doc.get('date')}, open {doc.get('open')}; true date {utc_date(truth['start'])}")
        without = [sid for sid, s in self.true_sessions.items() if f"TitanUpUsers/{s['user']}/DailySessions/{sid}" not in self.daily]
        self.check(bool(self.daily) and not bad and not without,
                   f"(c) {len(self.daily)} daily sessions, each beside its record, dated on the true day and closed"
                   + (f" -- {'; '.join(bad[:3])}" if bad else "")
                   + (f" -- records without one: {', '.join(without[:3])}" if without else ""))
        extra = sorted({k for d in self.records.values() for k in d} - RECORD_FIELDS)
        example = {k: next(iter(self.records.values())).get(k) for k in extra} if extra else {}
        info(f"records carry {('the added fields ' + ', '.join(extra) + ': e.g. ' + json.dumps(example)) if extra else 'no field beyond the documented ones'}")
        self.figures["record_extra_fields"] = extra

    # -- (d) the day ----------------------------------------------------------------------------

    def day(self) -> None:
        """Today's sessions and the medals, from the store (the gateway is stopped) and the broker."""
        a, truth = self.a, self.true_sessions
        today = utc_date(self.run.true_now() + self.shift)
        data = ("--data-dir", self.run.data_dir)
        code, listing = cli(a.gateway, "sessions", "--range", "today", "--json", *data, "--time-zone", "UTC")
        expected = {sid for sid, s in truth.items() if utc_date(s["start"]) == today}
        if code == 0 and isinstance(listing, dict):
            got = {s["id"]: s for s in listing.get("sessions", [])}
            wrong = [f"{sid} dated {s.get('date')}, start {delta(s['startMs'] - truth[sid]['start'] * 1000)}"
                     for sid, s in got.items() if sid in truth
                     and (s.get("date") != utc_date(truth[sid]["start"]) or abs(s["startMs"] - truth[sid]["start"] * 1000) > 1000)]
            self.check(bool(expected) and set(got) == expected and not wrong,
                       f"(d) `sessions --range today` ({today}, true) lists {len(got)} sessions, the true day has {len(expected)}"
                       + (f" -- listed but not of the true day: {sorted(set(got) - expected)[:3]}" if set(got) - expected else "")
                       + (f" -- of the true day but not listed: {sorted(expected - set(got))[:3]}" if expected - set(got) else "")
                       + (f" -- {'; '.join(wrong[:3])}" if wrong else ""))
        else:
            self.check(False, f"(d) `gyrogate sessions --range today --json --data-dir` failed ({code}): {listing}")
        code, everything = cli(a.gateway, "sessions", "--range", "all", "--json", *data, "--time-zone", "UTC")
        if isinstance(everything, dict):
            stored = {s["id"]: s.get("date") for s in everything.get("sessions", [])}
            self.figures["store_sessions"] = stored
            self.check(set(stored) == set(truth),
                       f"(d) the store's sessions are the published records ({len(stored)} stored, {len(truth)} published)"
                       + (f" -- only stored: {sorted(set(stored) - set(truth))[:3]}" if set(stored) - set(truth) else "")
                       + (f" -- only published: {sorted(set(truth) - set(stored))[:3]}" if set(truth) - set(stored) else ""))
        for user in sorted({s["user"] for s in truth.values()} | set(self.medals)):
            want = expected_medals([(s["start"], s["end"]) for s in truth.values() if s["user"] == user])
            doc = self.medals.get(user)
            _code, shown = cli(a.gateway, "medals", "--user", user, "--json", *data)
            diff_doc = sorted(k for k in want if doc is None or bool(doc.get(k)) != want[k])
            diff_cli = sorted(k for k in want if not isinstance(shown, dict) or bool(shown.get(k)) != want[k])
            self.check(not diff_doc and not diff_cli,
                       f"(d) {user}'s medals are those of the true sessions ({', '.join(k for k in want if want[k]) or 'none'})"
                       + (f" -- the retained document differs in {diff_doc}" if diff_doc else "")
                       + (f" -- `gyrogate medals` differs in {diff_cli}" if diff_cli else ""))

    # -- (e) the clock shown ----------------------------------------------------------------------

    def clock(self) -> None:
        """The status's clock state per phase (required with --strict-clock from --settle s into
        each), and every record's `clock` field at the end (synchronised)."""
        shown: dict[str, list] = {}
        bad = []
        for p in self.run.phases:
            polls = [x for x in self.run.polls if x["phase"] == p["name"]]
            states: list[tuple[float, str | None]] = []
            for x in polls:
                s = clock_state(x["clock"])
                if not states or states[-1][1] != s:
                    states.append((round(x["true"] - p["start"], 1), s))
            shown[p["name"]] = states
            if p["expect"] is None:
                continue
            # From --settle s on; in a phase shorter than that, its last poll.
            late = [x for x in polls if x["true"] - p["start"] >= self.a.settle] or polls[-1:]
            if not late or any(clock_state(x["clock"]) != p["expect"] for x in late):
                bad.append(f"phase {p['name']!r} expects {p['expect']} from +{self.a.settle:g} s: showed {states or 'nothing'}")
        self.figures["clock_states"] = shown
        absent = all(x["clock"] is None for x in self.run.polls)
        text = ("(e) `gyrogate status` clock state per phase: "
                + "; ".join(f"{name}: {' -> '.join(f'{s} (+{t} s)' for t, s in st) or '-'}" for name, st in shown.items())
                + (" -- the status has no `clock` object" if absent else ""))
        said: dict[str, int] = {}
        for doc in self.records.values():
            said[str(doc.get("clock", "absent"))] = said.get(str(doc.get("clock", "absent")), 0) + 1
        self.figures["records_clock"] = said
        records_text = "(e) the records' `clock` at the end: " + (", ".join(f"{k} ({v})" for k, v in sorted(said.items())) or "no records")
        if self.a.strict_clock:
            self.check(not bad, text + (f" -- {'; '.join(bad)}" if bad else ""))
            # w: a session the kill left before its re-dating says how it was dated then; one it left
            # between the step's re-dating and the synchronisation's may say either.
            killed = self.figures.get("killed_redating") or {}
            before, killed_run = set(killed.get("before", [])), set(killed.get("killed_run", []))
            allowed = lambda sid: ({"unsynchronised"} if sid in before  # noqa: E731
                                   else {"unsynchronised", "synchronised"} if sid in killed_run else {"synchronised"})
            wrong = [t for t, d in self.records.items() if d.get("clock") not in allowed(t.split("/", 1)[1])]
            self.check(bool(said) and not wrong, records_text + ", all synchronised expected"
                       + (f" but in the killed run's {len(killed_run)} sessions ({len(before)} left before the re-dating: "
                          "unsynchronised)" if killed_run else "")
                       + (f" -- not so: {', '.join(wrong[:3])}" if wrong else ""))
        else:
            self.check(None, text + " (not enforced without --strict-clock)")
            self.check(None, records_text + " (not enforced without --strict-clock)")
