"""Executors side by side (docs/guides/cluster.md).

1. Throughput on the scripted agents: every case of the five suites with scripted/gullible, in
   process, with `processes=2` and on a local Ray cluster this process starts. Prints cases per
   second over the whole run (worker start-up included) and from the first finished case to the
   last (the steady rate), the CPU seconds used by this process and its worker processes, and for
   Ray the tasks, the batch size and the niceness of its workers.
2. Against a fake provider with 200 ms latency at 128 cases in flight (ground-truth replies, one
   attack): wall time against the lower bound max(longest case's calls x latency, all calls x
   latency / 128), in process and with `processes=2` (target at most 1.15 with processes=2). The
   fake provider is a lean asyncio server in its own process (not tests/fakes' threaded one, which
   cost twice the CPU per request on the cores the run needs); the script prints its CPU too, and
   the wall time the CPU of client and server needs on this machine's cores.
3. Three workers against one rate-limited fake server (R requests/min, 429 + Retry-After beyond
   it, rate-limit headers as OpenAI's): one run with `processes=3` (one shared limit) against three
   uncoordinated runs at once. Prints the share of R held and the error cases (target >= 90%, 0).

The machine's other load moves every figure: the script prints the load average with them."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The figures are on the five suites whose checks read state; `coding` judges code in the
# sandbox (CPU-bound checks), so it is left out unless named with --suite.
FIVE = ["banking", "workspace", "chat", "travel", "devops"]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def scripted(executor_text: str) -> dict[str, Any]:
    from randori.agents.models import ModelSettings, get_model
    from randori.bench.executors import get_executor
    from randori.bench.runner import Selection, plan, run_cases
    from randori.bench.store import Store
    from randori.suites import ready_suite

    suites = [ready_suite(n) for n in FIVE]
    model = get_model("scripted/gullible", ModelSettings())
    cases = plan(Selection(suites=suites, model=model))
    executor = get_executor(executor_text)
    times: list[float] = []
    with tempfile.TemporaryDirectory() as d, Store(d) as store:
        run_id = store.start_run({})
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        asyncio.run(run_cases(cases, {s.name: s for s in suites}, model, store, run_id, executor=executor,
                              on_result=lambda r: times.append(time.perf_counter())))
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    steady = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else float("nan")
    out = {"label": executor_text, "cases": len(cases), "wall": wall, "rate": len(cases) / wall, "steady": steady,
           "cpu": cpu}
    if executor_text.startswith("ray"):
        out |= {"tasks": executor.number, "batch": executor.batch,  # type: ignore[attr-defined]
                "niceness": sorted(set(executor.niceness.values()))}  # type: ignore[attr-defined]
    return out


def serve_ground_truth(latency: float, url_q: Any, stop_q: Any) -> None:
    """The ground-truth fake provider of part 2, on one asyncio event loop in its own process.

    It gives the replies of tests/fakes' threaded FakeOpenAIServer (same policy, same completion
    JSON), but that server holds a thread per connection under one GIL and cost about 0.75 ms of CPU
    per request; this one costs about a third of that. On this 2-core machine the fake server shares
    the cores with the run it serves, so its CPU is taken from the client: part 2 measures the client."""
    from tests.fakes.openai_server import completion
    from tests.fakes.policies import ground_truth_policy

    from randori.suites import suite_names

    policy = ground_truth_policy(suite_names())
    count = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal count
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = json.loads(await reader.readexactly(length) if length else b"{}")
                count += 1
                n = count
                await asyncio.sleep(latency)
                data = json.dumps(completion(policy(body), body.get("model", "fake"), n)).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(len(data)).encode() + b"\r\n\r\n" + data)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
        port = server.sockets[0].getsockname()[1]
        url_q.put(f"http://127.0.0.1:{port}/v1")
        while await asyncio.get_running_loop().run_in_executor(None, stop_q.get) == "cpu":
            url_q.put(cpu_seconds())  # this process's CPU so far (it has no children)
        server.close()

    asyncio.run(main())


def latency_bound(latency: float, in_flight: int, attack: str, names: list[str]) -> tuple[float, int]:
    from randori.agents.models import get_model
    from randori.bench.runner import Selection, plan
    from randori.suites import ready_suite

    suites = {n: ready_suite(n) for n in names}
    cases = plan(Selection(suites=list(suites.values()), model=get_model("scripted/oracle"), attacks=[attack]))
    calls = []
    for c in cases:
        s = suites[c.suite]
        task = s.user_tasks[c.user_task] if c.user_task else s.injection_tasks[c.injection_task]
        calls.append(len(task.ground_truth(s.load_env())) + 1)
    return max(max(calls) * latency, sum(calls) * latency / in_flight), len(cases)


def cli(results: str, base_url: str, *extra: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "randori", "run", "-m", "openai/fake", "--base-url", base_url, "--results", results,
           *extra]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "OPENAI_API_KEY": "sk-fake-benchmark"})


def store_rows(results: str) -> list[dict[str, Any]]:
    from randori.bench.store import Store

    with Store(results) as store:
        return list(store.iter_cases())


def against_latency(args: argparse.Namespace) -> list[dict[str, Any]]:
    args.suite = args.suite or FIVE
    bound, n = latency_bound(args.latency, args.in_flight, args.attack, args.suite)
    ctx = mp.get_context("spawn")
    url_q, stop_q = ctx.Queue(), ctx.Queue()
    server = ctx.Process(target=serve_ground_truth, args=(args.latency, url_q, stop_q), daemon=True)
    server.start()
    url = url_q.get(timeout=120)
    out = []
    try:
        for executor in ("inprocess", "processes=2"):
            with tempfile.TemporaryDirectory() as d:
                stop_q.put("cpu")
                server0 = url_q.get(timeout=60)
                load = os.getloadavg()[0]
                t0, cpu0 = time.perf_counter(), cpu_seconds()
                proc = cli(d, url, *(a for n in args.suite for a in ("-s", n)), "--attack", args.attack,
                           "--concurrency", str(args.in_flight),
                           "--provider-concurrency", str(args.in_flight), "--executor", executor)
                _, err = proc.communicate()
                wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
                if proc.returncode not in (0, 1):
                    raise SystemExit(f"run failed: {err[-2000:]}")
                rows = store_rows(d)
                stop_q.put("cpu")
                server_cpu = url_q.get(timeout=60) - server0
            out.append({"label": executor, "cases": len(rows), "planned": n, "wall": wall, "bound": bound,
                        "errors": sum(r["status"] != "ok" for r in rows), "cpu": cpu, "server_cpu": server_cpu,
                        "load": load,
                        "calls": sum(r["model_calls"] for r in rows)})
    finally:
        stop_q.put("stop")
        server.join(10)
    return out


def against_rate_limit(args: argparse.Namespace) -> list[dict[str, Any]]:
    from rate_limits import serve  # benchmarks/rate_limits.py: the same rate-limited server

    from randori.agents.models import get_model
    from randori.bench.runner import Selection, plan
    from randori.suites import ready_suite

    one = len(plan(Selection(suites=[ready_suite("banking")], model=get_model("scripted/oracle"))))
    repeats = max(1, math.ceil(args.limited_cases / one))
    out = []
    for label, runs in (("processes=3, one shared limit", [["--executor", "processes=3"]]),
                        ("3 uncoordinated runs", [["--executor", "inprocess"]] * 3)):
        ctx = mp.get_context("spawn")
        url_q, cmd_q, out_q = ctx.Queue(), ctx.Queue(), ctx.Queue()
        server = ctx.Process(target=serve, args=(args.rpm, args.tpm, args.window, args.latency, True, url_q, cmd_q,
                                                 out_q), daemon=True)
        server.start()
        url = url_q.get(timeout=120)
        dirs = [tempfile.mkdtemp() for _ in runs]
        t0 = time.perf_counter()
        # Each uncoordinated run takes a third of the cases (a seeded sample would overlap): its own repeats.
        each = repeats if len(runs) == 1 else -(-repeats // 3)
        procs = [cli(d, url, "-s", "banking", "--repeats", str(each), "--concurrency", "96",
                     "--provider-concurrency", "96", *extra) for d, extra in zip(dirs, runs, strict=True)]
        for p in procs:
            p.communicate()
        wall = time.perf_counter() - t0
        cmd_q.put("stop")
        stats = out_q.get(timeout=60)
        server.join(10)
        rows = [r for d in dirs for r in store_rows(d)]
        out.append({"label": label, "cases": len(rows), "errors": sum(r["status"] != "ok" for r in rows),
                    "rejected": stats["rejected"], "rpm": stats["rpm"], "wall": wall})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["scripted", "latency", "limit"], action="append")
    ap.add_argument("--no-ray", action="store_true", help="leave Ray out of the scripted comparison")
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--in-flight", type=int, default=128)
    ap.add_argument("--attack", default="important_instructions")
    ap.add_argument("--suite", action="append", default=[], help="suites of part 2 (default: all five)")
    ap.add_argument("--rpm", type=float, default=2400.0, help="the rate-limited server's requests per minute")
    ap.add_argument("--tpm", type=float, default=50_000_000.0)
    ap.add_argument("--window", type=float, default=5.0, help="seconds of the limit a burst may use")
    ap.add_argument("--limited-cases", type=int, default=600)
    args = ap.parse_args()
    todo = args.only or ["scripted", "latency", "limit"]
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    if "scripted" in todo:
        runs = [scripted(e) for e in ["inprocess", "processes=2"] + ([] if args.no_ray else ["ray"])]
        base = runs[0]
        print(f"\n1. scripted/gullible, every case of the five suites ({base['cases']} cases)")
        print(f"{'executor':14} {'wall s':>7} {'cases/s':>8} {'steady':>8} {'vs in':>6} {'CPU s':>7}")
        for r in runs:
            print(f"{r['label']:14} {r['wall']:7.1f} {r['rate']:8.0f} {r['steady']:8.0f} "
                  f"{r['steady'] / base['steady']:5.2f}x {r['cpu']:7.1f}")
            if "tasks" in r:
                print(f"  ray: {r['tasks']} tasks of up to {r['batch']} cases; worker niceness {r['niceness']}")
    if "latency" in todo:
        runs = against_latency(args)
        print(f"\n2. fake provider, {args.latency * 1000:.0f} ms per reply, {args.in_flight} cases in flight, "
              f"attack {args.attack}")
        cores = os.cpu_count() or 1
        print(f"{'executor':14} {'cases':>6} {'errors':>6} {'wall s':>7} {'bound s':>8} {'ratio':>6} "
              f"{'CPU ms/call':>11} {'server':>7} {'CPU bound':>9} {'load':>5}")
        for r in runs:
            # Client and fake server share this machine's cores: their CPU over the cores is a lower
            # bound of the wall time too (one core only for the client in process).
            calls = max(1, r["calls"])
            cpu_bound = max(r["cpu"] if r["label"] == "inprocess" else 0.0, (r["cpu"] + r["server_cpu"]) / cores)
            print(f"{r['label']:14} {r['cases']:6} {r['errors']:6} {r['wall']:7.1f} {r['bound']:8.1f} "
                  f"{r['wall'] / r['bound']:6.2f} {1000 * r['cpu'] / calls:11.2f} "
                  f"{1000 * r['server_cpu'] / calls:7.2f} {cpu_bound:8.1f}s {r['load']:5.1f}")
        print("target: ratio <= 1.15 with processes=2")
        print(f"CPU ms/call: the client's (driver and workers, start-up included); server: the fake provider's. "
              f"CPU bound: the wall time their CPU needs on {cores} cores (the client in process on one); "
              "load: the load average when the run started")
    if "limit" in todo:
        runs = against_rate_limit(args)
        print(f"\n3. one rate-limited server: {args.rpm:,.0f} requests/min, burst {args.window:g} s, "
              f"{args.latency * 1000:.0f} ms per reply; banking cases")
        print(f"{'configuration':30} {'cases':>6} {'errors':>6} {'429s':>6} {'req/min':>8} {'of R':>6}")
        for r in runs:
            print(f"{r['label']:30} {r['cases']:6} {r['errors']:6} {r['rejected']:6} {r['rpm']:8,.0f} "
                  f"{100 * r['rpm'] / args.rpm:5.0f}%")
        print("target: processes=3 holds >= 90% of R with 0 error cases")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end", flush=True)


if __name__ == "__main__":
    main()
