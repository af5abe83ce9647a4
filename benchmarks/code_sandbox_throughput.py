"""Sandboxed test runs per second (target: >= 25/s on a 2-core machine).

Each run is what `randori code run` does per test group: a fresh sandbox (built root, new
namespaces, seccomp, memory limit, fresh fixture copy, unprivileged uid) in which the judge loads a
built-in task's functional tests and the candidate process its secure reference; every test call
crosses between the two as plain data. Usage:

    python benchmarks/code_sandbox_throughput.py [--runs 200] [--parallel N] [--task sqli-find-user]

Besides the wall-clock rate it prints the CPU time a run costs (harness, fork servers, every
sandboxed process, from getrusage), and the rate that CPU cost allows on the machine's cores: on a
machine shared with other work the wall-clock figure says more about the neighbours than about us.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import time

from randori.code.dataset import load_builtin
from randori.code.evaluate import job_for
from randori.sandbox.runner import Sandbox, _Zygote


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


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


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
    cores = os.cpu_count() or 1
    print(f"sandbox mode: {sandbox.mode}; cores: {cores}; parallel: {args.parallel}; task: {task.id}")
    asyncio.run(_bench(sandbox, job, max(10, args.parallel)))  # start the fork servers, warm the page cache
    _Zygote.close_all()  # so that their CPU time so far is counted, and not again below
    cpu0 = _cpu()
    asyncio.run(_bench(sandbox, job, max(10, args.parallel)))
    wall, lat, passed = asyncio.run(_bench(sandbox, job, args.runs))
    _Zygote.close_all()
    cpu = (_cpu() - cpu0) / (args.runs + max(10, args.parallel))
    lat.sort()
    iso = sandbox.run_sync(job).isolation
    print(f"isolation: {', '.join(k for k, v in iso.items() if v is True)}; root {iso.get('root')}; "
          f"verdicts {iso.get('verdict_isolation')}")
    print(f"{args.runs} runs in {wall:.2f} s: {args.runs / wall:.1f} sandboxed test runs/s "
          f"({passed} passed); one run takes {1000 * statistics.median(lat):.0f} ms median, "
          f"{1000 * lat[int(0.95 * (len(lat) - 1))]:.0f} ms p95 (set-up, tests, tear-down)")
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"CPU per run: {1000 * cpu:.1f} ms (all processes), so {cores / cpu:.1f} runs/s on {cores} cores "
          f"when the machine is ours alone (load average during the run: {load})")


if __name__ == "__main__":
    main()
