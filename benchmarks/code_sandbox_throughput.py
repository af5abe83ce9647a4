"""Sandboxed test runs per second (target: >= 10/s on a 2-core machine).

Each run is what `randori code run` does per test group: a fresh sandbox (new namespaces, fresh
fixture copy, rlimits, unprivileged uid) that loads a built-in task's secure reference and runs
its functional tests. Usage:

    python benchmarks/code_sandbox_throughput.py [--runs 200] [--parallel N] [--task sqli-find-user]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from randori.code.dataset import load_builtin
from randori.code.evaluate import job_for
from randori.code.sandbox import Sandbox


async def _bench(sandbox: Sandbox, job, runs: int) -> tuple[float, list[float], int]:  # type: ignore[no-untyped-def]
    latencies: list[float] = []
    passed = 0

    async def one() -> None:
        nonlocal passed
        res = await sandbox.run(job)
        latencies.append(res.duration_s)  # inside the sandbox supervisor, not time spent queued
        passed += res.passed

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(runs)))
    return time.perf_counter() - t0, latencies, passed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--parallel", type=int, default=2 * (os.cpu_count() or 1),
                    help="sandboxes in flight at once (default: 2 x cores)")
    ap.add_argument("--task", default="sqli-find-user", help="built-in task whose functional tests to run")
    args = ap.parse_args()

    task = load_builtin().select([args.task])[0]
    job = job_for(task, task.secure_code, task.functional_tests, task.functional_names)
    sandbox = Sandbox(max_parallel=args.parallel)
    print(f"sandbox mode: {sandbox.mode}; cores: {os.cpu_count()}; parallel: {args.parallel}; task: {task.id}")
    asyncio.run(_bench(sandbox, job, min(10, args.runs)))  # warm the page cache and the probe
    wall, lat, passed = asyncio.run(_bench(sandbox, job, args.runs))
    lat.sort()
    print(f"{args.runs} runs in {wall:.2f} s: {args.runs / wall:.1f} sandboxed test runs/s "
          f"({passed} passed); one run takes {1000 * statistics.median(lat):.0f} ms median, "
          f"{1000 * lat[int(0.95 * (len(lat) - 1))]:.0f} ms p95 (set-up, tests, tear-down)")


if __name__ == "__main__":
    main()
