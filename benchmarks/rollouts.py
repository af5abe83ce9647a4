"""Episode throughput for trainers (docs/performance.md, "Episodes"): a scripted policy plays randori's
episodes (the oracle's calls and answer) and this prints episodes per second in one process and over
worker processes, the median cost of `reset`, and the memory each live episode holds.

    python benchmarks/rollouts.py [--episodes 2000] [--workers 2] [--concurrent 2000]

Figures depend on the machine: they are printed, never asserted."""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.training.policies

from randori.training import Episode, EpisodeSpec  # noqa: E402
from randori.training.episode import suite_of  # noqa: E402

SUITES = ("banking", "travel", "chat", "workspace", "devops")


def specs(n: int) -> list[EpisodeSpec]:
    every = []
    for name in SUITES:
        s = suite_of(name)
        for u in s.user_tasks:
            every.append(EpisodeSpec(name, u))
            every += [EpisodeSpec(name, u, i) for i in list(s.injection_tasks)[:2] if s.reachable_vectors(u)]
    return [every[k % len(every)] for k in range(n)]


async def play_all(batch: list[EpisodeSpec]) -> list[float]:
    from tests.training.policies import play

    return [(await play(Episode(), spec)).reward for spec in batch]


def _worker(batch: list[EpisodeSpec]) -> int:
    return len(asyncio.run(play_all(batch)))


async def reset_costs(batch: list[EpisodeSpec]) -> list[float]:
    costs = []
    for spec in batch:
        ep = Episode()
        t0 = time.perf_counter()
        await ep.reset(spec)
        costs.append(time.perf_counter() - t0)
        await ep.close()
    return costs


async def concurrent(batch: list[EpisodeSpec]) -> tuple[int, float]:
    """`len(batch)` episodes reset and alive at once; each then makes a call and finishes."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    episodes = [Episode() for _ in batch]
    await asyncio.gather(*(e.reset(s) for e, s in zip(episodes, batch, strict=True)))
    held = (tracemalloc.get_traced_memory()[0] - before) / len(batch)
    tracemalloc.stop()
    results = await asyncio.gather(*(e.finish("done") for e in episodes))
    return sum(r.status == "ok" for r in results), held


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--concurrent", type=int, default=2000)
    args = ap.parse_args()
    batch = specs(args.episodes)
    asyncio.run(play_all(batch[:50]))  # suites read and cases planned once, as a trainer's warm-up does
    t0 = time.perf_counter()
    rewards = asyncio.run(play_all(batch))
    one = len(rewards) / (time.perf_counter() - t0)
    print(f"in process: {one:,.0f} scripted episodes/s on one core ({len(rewards)} episodes, "
          f"mean reward {statistics.mean(rewards):.2f})")
    costs = asyncio.run(reset_costs(batch[:500]))
    print(f"reset: median {statistics.median(costs) * 1000:.2f} ms, p90 "
          f"{statistics.quantiles(costs, n=10)[-1] * 1000:.2f} ms")
    chunks = [batch[k::args.workers] for k in range(args.workers)]
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        pool.map(_worker, [c[:20] for c in chunks])
        t0 = time.perf_counter()
        done = sum(pool.map(_worker, chunks))
    many = done / (time.perf_counter() - t0)
    print(f"{args.workers} worker processes: {many:,.0f} episodes/s ({many / args.workers:,.0f} per process)")
    ok, held = asyncio.run(concurrent(specs(args.concurrent)))
    print(f"{args.concurrent} episodes alive at once in one process: {ok} finished without error, "
          f"{held / 1024:,.0f} KiB held per live episode")


if __name__ == "__main__":
    main()
