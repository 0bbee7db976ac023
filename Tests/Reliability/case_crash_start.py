"""crash_start: SIGKILL at fixed delays right after a stream starts (crash_window_test.py).

One sensor at 100 Hz, commit interval 200 ms, a fresh store per kill: at most one commit
interval of samples (plus one notification) is lost, integrity holds, and a restart closes the
killed session honestly. Quick: 0.3 s twice (what CI runs on its own); full: 0.3 s and 0.45 s,
three times each.
"""

from __future__ import annotations

import crash_window_test


def run(ctx) -> list:
    delays, cycles = ([0.3], 2) if ctx.quick else ([0.3, 0.45], 3)
    results = []
    crash_window_test.run_cycles(ctx.gateway, delays, 200, 100, cycles, ctx.procs, ctx.broker_port,
                                 lambda ok, text: results.append((ok, text)))
    return results
