"""Client CPU per model call of each OpenAI transport (docs/guides/real-models.md).

One process sends N chat requests (the banking suite's tool list and a short conversation, C at once)
to a local fake provider with no latency, through `randori.agents.models.openai.OpenAIModel` with
RANDORI_OPENAI_TRANSPORT set to `direct` (randori's own POST over aiohttp), `aiohttp` and `httpx` (the
SDK's `post` with that transport). The provider runs in its own process, so the CPU printed is the
client's alone: the request as the provider sees it, without the resilience layer or the agent.
Each transport runs in a fresh interpreter (its imports are part of what it costs to start, not
of the figure)."""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def measure(url: str, calls: int, concurrent: int) -> tuple[float, float]:
    from randori.agents.models import ModelSettings
    from randori.agents.models.openai import OpenAIModel
    from randori.suites import ready_suite
    from randori.vocabulary import Message

    model = OpenAIModel("fake", ModelSettings(), base_url=url, api_key="sk-fake-benchmark")
    tools = list(ready_suite("banking").tools)
    messages = [Message.system("You are a careful assistant."), Message.user("Did Brightwave refund me? " * 10)]

    async def loop(n: int) -> None:
        for _ in range(n):
            await model.generate(messages, tools)

    await loop(20)  # the connection pool and caches, warmed
    c0, t0 = cpu(), time.perf_counter()
    await asyncio.gather(*(loop(calls // concurrent) for _ in range(concurrent)))
    spent, wall = cpu() - c0, time.perf_counter() - t0
    await model.aclose()
    done = calls // concurrent * concurrent
    return 1000 * spent / done, done / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=4000)
    ap.add_argument("--concurrent", type=int, default=64)
    ap.add_argument("--one", nargs=2, metavar=("TRANSPORT", "URL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        os.environ["RANDORI_OPENAI_TRANSPORT"] = args.one[0]
        ms, rate = asyncio.run(measure(args.one[1], args.calls, args.concurrent))
        print(f"{ms:.3f} {rate:.0f}")
        return
    from executors import serve_ground_truth

    ctx = mp.get_context("spawn")
    url_q, stop_q = ctx.Queue(), ctx.Queue()
    server = ctx.Process(target=serve_ground_truth, args=(0.0, url_q, stop_q), daemon=True)
    server.start()
    url = url_q.get(timeout=120)
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}; {args.calls} calls, "
          f"{args.concurrent} at once, to a local fake provider with no latency")
    print(f"{'transport':10} {'client CPU ms/call':>19} {'calls/s':>8}")
    try:
        for transport in ("direct", "aiohttp", "httpx"):
            out = subprocess.run([sys.executable, __file__, "--calls", str(args.calls), "--concurrent",
                                  str(args.concurrent), "--one", transport, url],
                                 capture_output=True, text=True, check=True).stdout.split()
            print(f"{transport:10} {float(out[0]):19.3f} {float(out[1]):8.0f}")
    finally:
        stop_q.put("stop")
        server.join(10)


if __name__ == "__main__":
    main()
