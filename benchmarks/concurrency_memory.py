"""Concurrency and memory against a fake provider with a fixed latency per completion.

The fake OpenAI-compatible server runs in its own process and answers like the oracle: for each
conversation it replays the ground truth of the task whose prompt it sees, one call per turn, then
answers. `randori run --concurrency 32` runs every case of the chosen suites with one attack.

Prints the wall time, the lower bound max(longest case's calls x latency, all calls x latency /
concurrency), their ratio (target <= 1.3), the CPU time of randori and of the fake server (which
records nothing, so its own heap does not grow), the peak resident memory of the randori process (target
< 400 MB), and the store's size per case."""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def serve(suite_names: list[str], latency: float, port_q: mp.Queue) -> None:
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.fakes.policies import ground_truth_policy

    with FakeOpenAIServer(ground_truth_policy(suite_names), latency=latency, record=False) as server:
        port_q.put(server.base_url)
        while True:
            time.sleep(3600)


def process_cpu(pid: int) -> float:
    """User plus system CPU seconds of a live process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--suite", action="append", default=[])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--attack", default="important_instructions")
    args = ap.parse_args()

    from randori.agents.models import ModelSettings, get_model
    from randori.bench.runner import Selection, plan
    from randori.suites import get_suite, suite_names

    names = args.suite or suite_names()
    suites = [get_suite(n) for n in names]
    model = get_model("scripted/oracle", ModelSettings())
    cases = plan(Selection(suites=suites, model=model, attacks=[args.attack]))
    by_name = {s.name: s for s in suites}
    calls = []
    for c in cases:
        s = by_name[c.suite]
        task = s.user_tasks[c.user_task] if c.user_task else s.injection_tasks[c.injection_task]
        calls.append(len(task.ground_truth(s.load_env())) + 1)
    bound = max(max(calls) * args.latency, sum(calls) * args.latency / args.concurrency)

    q: mp.Queue = mp.Queue()
    server = mp.Process(target=serve, args=(names, args.latency, q), daemon=True)
    server.start()
    base_url = q.get(timeout=60)
    try:
        with tempfile.TemporaryDirectory() as d:
            # --provider-concurrency: the openai provider's default limit (16 in flight) would cap the run.
            cmd = [sys.executable, "-m", "randori", "run", "--model", "openai/fake", "--base-url", base_url,
                   "--attack", args.attack, "--concurrency", str(args.concurrency),
                   "--provider-concurrency", str(args.concurrency), "--results", d]
            for n in names:
                cmd += ["--suite", n]
            env = {**os.environ, "OPENAI_API_KEY": "sk-fake"}
            server_cpu0 = process_cpu(server.pid)
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            wall = time.perf_counter() - t0
            server_cpu = process_cpu(server.pid) - server_cpu0
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            peak_mb = usage.ru_maxrss / 1024
            client_cpu = usage.ru_utime + usage.ru_stime
            if proc.returncode != 0:
                print(proc.stderr[-2000:])
                raise SystemExit(f"run failed with exit {proc.returncode}")
            report = subprocess.run([sys.executable, "-m", "randori", "report", "-r", d, "-f", "json"],
                                    capture_output=True, text=True, check=True)
            rows = json.loads(report.stdout)["rows"]
            size = sum(f.stat().st_size for f in Path(d).iterdir())
    finally:
        server.kill()
    pooled = next((r for r in rows if r["suite"] == "all"), rows[0])
    print(f"cases: {len(cases)}, model calls: {sum(calls)}, longest case: {max(calls)} calls")
    print(f"benign utility {pooled['benign_utility']['rate']:.3f}, errors {sum(r['errors'] for r in rows)}")
    ratio = wall / bound if bound else float("nan")
    print(f"wall time: {wall:.1f} s; lower bound: {bound:.1f} s; ratio: {ratio:.2f} (target <= 1.3)")
    print(f"CPU: randori {client_cpu:.1f} s ({client_cpu / sum(calls) * 1000:.1f} ms per call), "
          f"fake server {server_cpu:.1f} s, on {os.cpu_count()} cores")
    print(f"peak RSS of the run: {peak_mb:.0f} MB (target < 400 MB)")
    print(f"store: {size / 1e6:.1f} MB, {size / len(cases) / 1024:.1f} KB per case")


if __name__ == "__main__":
    main()
