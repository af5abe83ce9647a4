"""Harness overhead: scripted/oracle over every attacked case of all suites with one attack.

Targets (issue 9): median under 5 ms per case; whole run under 20 s on a 2-core machine.
Prints the per-case median and 95th percentile (environment copy, injection, agent loop, scoring,
state diff and the store write, each case timed alone) and the wall time of the real runner."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, quiet_gc, run_case, run_cases
from randori.bench.store import Store
from randori.suites import get_suite, suite_names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--suite", action="append", default=[])
    ap.add_argument("--attack", default="important_instructions")
    args = ap.parse_args()
    t_load = time.perf_counter()
    suites = [get_suite(n) for n in (args.suite or suite_names())]
    model = get_model("scripted/oracle", ModelSettings())
    cases = plan(Selection(suites=suites, model=model, attacks=[args.attack], benign=False, injection_only=False))
    by_name = {s.name: s for s in suites}
    print(f"suites: {', '.join(f'{s.name}@{s.version}' for s in suites)}")
    print(f"attacked cases: {len(cases)} (planning incl. suite load: {time.perf_counter() - t_load:.2f} s)")

    with tempfile.TemporaryDirectory() as d:
        store = Store(d)
        run_id = store.start_run({})
        per_case: list[float] = []

        async def timed() -> None:
            for c in cases:
                t0 = time.perf_counter()
                res = await run_case(c, by_name[c.suite], model)
                store.add(run_id, [res])
                per_case.append(time.perf_counter() - t0)

        with quiet_gc():  # as run_cases does
            asyncio.run(timed())
        store.close()
    per_case.sort()
    median = statistics.median(per_case) * 1000
    p95 = per_case[int(0.95 * (len(per_case) - 1))] * 1000
    print(f"per case: median {median:.2f} ms, p95 {p95:.2f} ms, max {per_case[-1] * 1000:.2f} ms")

    with tempfile.TemporaryDirectory() as d:
        store = Store(d)
        run_id = store.start_run({})
        t0 = time.perf_counter()
        asyncio.run(run_cases(cases, by_name, model, store, run_id, concurrency=8))
        wall = time.perf_counter() - t0
        stored = store.conn.execute("select count(*) from cases").fetchone()[0]
        store.close()
    print(f"whole run (runner, concurrency 8): {wall:.2f} s for {stored} cases")
    print(f"targets: median < 5 ms -> {'OK' if median < 5 else 'MISSED'}; "
          f"whole run < 20 s -> {'OK' if wall < 20 else 'MISSED'}")


if __name__ == "__main__":
    main()
