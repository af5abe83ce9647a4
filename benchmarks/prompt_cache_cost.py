"""Cost of a banking run with and without Anthropic prompt caching.

Runs every banking case (benign, injection tasks alone, and every user x injection task under one
attack) as anthropic/claude-haiku-4-5 against a fake Messages API that applies the documented
prefix-cache rule (tests/fakes/anthropic_cache.py) and plays a competent model (each conversation
replays its task's ground truth). Once with randori's cache breakpoints, once without
(RANDORI_ANTHROPIC_CACHE=off); prints tokens, cache reads and writes, and the cost of each at the
model's genai-prices rates (input, cache read, cache write, output)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run(model_name: str, cache: bool, attack: str, concurrency: int) -> dict[str, float]:
    from tests.fakes.anthropic_cache import CachingAnthropicServer
    from tests.fakes.policies import ground_truth_policy

    from randori.agents.models import ModelSettings, get_model
    from randori.bench.pricing import load_prices, row_cost
    from randori.bench.runner import Selection, plan, run_cases
    from randori.bench.store import Store
    from randori.suites import get_suite

    banking = get_suite("banking")
    with CachingAnthropicServer(ground_truth_policy(["banking"]), record=False) as server:
        model = get_model(model_name, ModelSettings(), base_url=server.base_url, api_key="sk-ant-fake-benchmark",
                          prompt_cache=cache)
        cases = plan(Selection(suites=[banking], model=model, attacks=[attack]))
        with tempfile.TemporaryDirectory() as d, Store(d) as store:
            run_id = store.start_run({})
            t0 = time.perf_counter()

            async def go() -> None:
                try:
                    await run_cases(cases, {"banking": banking}, model, store, run_id, concurrency=concurrency)
                finally:
                    await model.aclose()

            asyncio.run(go())
            wall = time.perf_counter() - t0
            rows = list(store.iter_cases())
    prices = load_prices()
    costs = [row_cost(prices, r) for r in rows]
    return {"cases": len(rows), "errors": sum(r["status"] != "ok" for r in rows),
            "requests": sum(r["model_calls"] for r in rows), "breakpoints": max(server.breakpoints, default=0),
            "input": sum(r["input_tokens"] for r in rows), "read": sum(r["cached_input_tokens"] for r in rows),
            "written": sum(r["cache_write_tokens"] for r in rows), "output": sum(r["output_tokens"] for r in rows),
            "cost": sum(c for c in costs if c is not None), "wall": wall, "source": prices.source(model_name) or "-"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="anthropic/claude-haiku-4-5")
    ap.add_argument("--attack", default="important_instructions")
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    os.environ.pop("RANDORI_ANTHROPIC_CACHE", None)
    out = {label: run(args.model, cache, args.attack, args.concurrency)
           for label, cache in (("with caching", True), ("without caching", False))}
    on, off = out["with caching"], out["without caching"]
    print(f"banking, {on['cases']} cases, {args.model} (prices: {on['source']})")
    print(f"{'':16} {'requests':>8} {'breakpts':>8} {'input tok':>10} {'cache read':>10} {'cache wrt':>10} "
          f"{'errors':>6} {'cost USD':>9}")
    for label, r in out.items():
        print(f"{label:16} {r['requests']:8.0f} {r['breakpoints']:8.0f} {r['input']:10,.0f} {r['read']:10,.0f} "
              f"{r['written']:10,.0f} {r['errors']:6.0f} {r['cost']:9.4f}")
    share = on["read"] / on["input"] if on["input"] else 0.0
    ratio = on["cost"] / off["cost"]
    print(f"input tokens read from the cache: {100 * share:.1f}%; cost with caching is "
          f"{100 * ratio:.1f}% of the cost without ({100 * (1 - ratio):.1f}% saved)")


if __name__ == "__main__":
    main()
