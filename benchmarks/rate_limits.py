"""Throughput against a rate-limited provider: adaptive concurrency and header pacing against a
fixed number of requests in flight, on one server and on two behind a repeated --base-url.

Each server is a fake OpenAI-compatible server (tests/fakes/ratelimit.py) in its own process,
enforcing R requests/min and T tokens/min and answering 429 + Retry-After beyond them, with its
headers saying the limits as OpenAI's do. The agent plays each banking case's ground truth (about
3.6 model calls per case, ~3k tokens each). The limits are scaled to finish in a minute or two:
R = 3,000/min and T = 9M/min, with a burst allowance of 1 s of each (not the real service's 60 s)
so the figure is the sustained rate, not one minute's burst. Prints, per configuration: cases,
error cases, 429s, wall time, requests and tokens per minute let through and their share of
each limit."""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def serve(rpm: float, tpm: float, window: float, latency: float, headers: bool, url_q: Any, cmd_q: Any,
          out_q: Any) -> None:
    from tests.fakes.policies import ground_truth_policy
    from tests.fakes.ratelimit import RateLimitedOpenAIServer

    server = RateLimitedOpenAIServer(ground_truth_policy(["banking"]), rpm=rpm, tpm=tpm, window=window,
                                     latency=latency, send_headers=headers, record=False)
    with server:
        url_q.put(server.base_url)
        cmd_q.get()  # the run is over
        out_q.put({**server.throughput(), "rejected": server.rejected, "accepted": len(server.accepted)})


def scenario(label: str, servers: int, adaptive: bool, ceiling: int, args: argparse.Namespace) -> dict[str, Any]:
    from randori.agents.models import ModelSettings, get_model
    from randori.bench.runner import Selection, plan, run_cases
    from randori.bench.store import Store
    from randori.suites import get_suite

    ctx = mp.get_context("spawn")
    procs, urls, cmds, outs = [], [], [], []
    for _ in range(servers):
        url_q, cmd_q, out_q = ctx.Queue(), ctx.Queue(), ctx.Queue()
        p = ctx.Process(target=serve, args=(args.rpm, args.tpm, args.window, args.latency, not args.no_headers,
                                            url_q, cmd_q, out_q), daemon=True)
        p.start()
        procs.append(p)
        urls.append(url_q.get(timeout=60))
        cmds.append(cmd_q)
        outs.append(out_q)
    banking = get_suite("banking")
    model = get_model("openai/fake-model", ModelSettings(), base_url=urls if servers > 1 else urls[0],
                      api_key="sk-fake-benchmark", concurrency=ceiling, adaptive=adaptive)
    one = plan(Selection(suites=[banking], model=model, attacks=[args.attack]))
    repeats = max(1, math.ceil(args.cases / len(one)))
    cases = plan(Selection(suites=[banking], model=model, attacks=[args.attack], repeats=repeats))
    status: list[str] = []
    with tempfile.TemporaryDirectory() as d, Store(d) as store:
        run_id = store.start_run({})
        t0 = time.perf_counter()

        def on_result(res: Any) -> None:
            done = len(status) + 1
            status.append(model.status())
            if done % 250 == 0:
                print(f"  {label}: {done}/{len(cases)} cases, {time.perf_counter() - t0:.0f} s, {status[-1]}",
                      flush=True)

        async def go() -> None:
            try:
                await run_cases(cases, {"banking": banking}, model, store, run_id, concurrency=ceiling,
                                on_result=on_result)
            finally:
                await model.aclose()

        asyncio.run(go())
        wall = time.perf_counter() - t0
        rows = list(store.iter_cases())
    for q in cmds:
        q.put("stop")
    stats = [q.get(timeout=60) for q in outs]
    for p in procs:
        p.join(timeout=10)
    return {"label": label, "cases": len(rows), "errors": sum(r["status"] != "ok" for r in rows),
            "rejected": sum(s["rejected"] for s in stats), "wall": wall,
            "rpm": sum(s["rpm"] for s in stats), "tpm": sum(s["tpm"] for s in stats), "servers": servers,
            "last": status[-1] if status else ""}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rpm", type=float, default=2400.0, help="requests per minute per server")
    ap.add_argument("--tpm", type=float, default=6_000_000.0, help="tokens per minute per server")
    ap.add_argument("--window", type=float, default=5.0, help="seconds of the limit a burst may use")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per accepted request")
    ap.add_argument("--ceiling", type=int, default=256, help="--provider-concurrency (and cases in flight)")
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--attack", default="important_instructions")
    ap.add_argument("--no-headers", action="store_true", help="servers do not send rate-limit headers")
    ap.add_argument("--only", choices=["adaptive", "fixed", "default", "two"], action="append",
                    help="run only these configurations (default: all)")
    args = ap.parse_args()
    todo = args.only or ["adaptive", "fixed", "default", "two"]
    configs = {"adaptive": (f"adaptive, ceiling {args.ceiling}", 1, True, args.ceiling),
               "fixed": (f"fixed {args.ceiling} (--no-adaptive)", 1, False, args.ceiling),
               "default": ("fixed 16 (today's default)", 1, False, 16),
               "two": (f"adaptive, 2 servers, ceiling {args.ceiling}", 2, True, args.ceiling)}
    print(f"limits per server: {args.rpm:,.0f} requests/min, {args.tpm:,.0f} tokens/min, burst {args.window:g} s; "
          f"latency {args.latency:g} s; rate-limit headers {'off' if args.no_headers else 'on'}", flush=True)
    results = [scenario(*configs[k], args) for k in todo]
    print(f"\n{'configuration':34} {'cases':>6} {'errors':>6} {'429s':>6} {'wall s':>7} {'req/min':>8} "
          f"{'of R':>5} {'tok/min':>10} {'of T':>5}")
    for r in results:
        n = r["servers"]
        print(f"{r['label']:34} {r['cases']:6} {r['errors']:6} {r['rejected']:6} {r['wall']:7.1f} {r['rpm']:8,.0f} "
              f"{100 * r['rpm'] / (n * args.rpm):4.0f}% {r['tpm']:10,.0f} {100 * r['tpm'] / (n * args.tpm):4.0f}%")
    by = {r["label"]: r for r in results}
    one = by.get(configs["adaptive"][0])
    two = by.get(configs["two"][0])
    if one:
        use = max(one["rpm"] / args.rpm, one["tpm"] / args.tpm)
        print(f"adaptive, one server: {100 * use:.1f}% of the binding limit, {one['errors']} error cases "
              f"(target >= 90%, 0 errors)")
    if one and two:
        print(f"two servers: {two['rpm'] / one['rpm']:.2f}x one server's requests/min (target >= 1.8x)")


if __name__ == "__main__":
    main()
