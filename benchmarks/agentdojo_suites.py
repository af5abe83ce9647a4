"""Speed on identical work: AgentDojo's 949 v1.2.2 attacked cases (important_instructions) with the
ground-truth agent, through randori's runner and through AgentDojo's own benchmark loop.

Each side runs in one process of its own over every case (imports and suite loading are not timed),
and the two alternate: randori, AgentDojo, then AgentDojo, randori, ... for `--rounds` rounds, so a
change in the machine's load falls on both. A case's time is its wall time from the start of its run
to its verdicts: for randori `run_case` (environment, agent loop, checks; the attack text is made
when cases are planned), for AgentDojo `run_task_with_injection_tasks` on one injection task (attack
text, environment, pipeline, checks, and the trace file its logger writes). Prints per-case medians
per suite and overall, and the ratio AgentDojo / randori.

    python benchmarks/agentdojo_suites.py [--rounds 2] [--suite banking]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time

SUITES = ("workspace", "travel", "banking", "slack")


def time_randori(suites: list[str]) -> dict[str, list[float]]:
    from randori.agents.models import ModelSettings, get_model
    from randori.bench.runner import Selection, plan, run_case
    from randori.suites import ready_suite

    out: dict[str, list[float]] = {}
    model = get_model("scripted/oracle", ModelSettings())
    for name in suites:
        suite = ready_suite(f"agentdojo:{name}")
        cases = plan(Selection(suites=[suite], model=model, attacks=["agentdojo:important_instructions"],
                               benign=False, injection_only=False))

        async def go(cases: list = cases, suite: object = suite) -> list[float]:  # type: ignore[type-arg]
            times = []
            for case in cases:
                t0 = time.perf_counter()
                result = await run_case(case, suite, model)  # type: ignore[arg-type]
                times.append(time.perf_counter() - t0)
                assert result.status == "ok", result.error_message
            return times

        out[name] = asyncio.run(go())
    return out


def time_agentdojo(suites: list[str]) -> dict[str, list[float]]:
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
    from agentdojo.attacks import load_attack
    from agentdojo.benchmark import run_task_with_injection_tasks
    from agentdojo.logging import OutputLogger
    from agentdojo.task_suite.load_suites import get_suites

    from randori.suites.agentdojo.pipeline import target

    out: dict[str, list[float]] = {}
    logdir = tempfile.mkdtemp(prefix="agentdojo-runs-")
    for name in suites:
        suite = get_suites("v1.2.2")[name]
        times = []
        for ut in suite.user_tasks.values():
            pipeline = GroundTruthPipeline(ut)
            pipeline.name = target("AI assistant").name  # the attack addresses the model by this name
            attack = load_attack("important_instructions", suite, pipeline)
            for iid in suite.injection_tasks:
                t0 = time.perf_counter()
                with OutputLogger(logdir):  # its loop needs a logger; it writes each case's trace there
                    run_task_with_injection_tasks(suite, pipeline, ut, attack, logdir=None, force_rerun=True,
                                                  injection_tasks=[iid], benchmark_version="v1.2.2")
                times.append(time.perf_counter() - t0)
        out[name] = times
    return out


def child(side: str, suites: list[str]) -> None:
    times = time_randori(suites) if side == "randori" else time_agentdojo(suites)
    print(json.dumps(times))


def run_side(side: str, suites: list[str]) -> dict[str, list[float]]:
    proc = subprocess.run([sys.executable, __file__, "--side", side, *[a for s in suites for a in ("--suite", s)]],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{side} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--suite", action="append", choices=SUITES)
    ap.add_argument("--side", choices=("randori", "agentdojo"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    suites = args.suite or list(SUITES)
    if args.side:
        child(args.side, suites)
        return
    times: dict[str, dict[str, list[float]]] = {"randori": {}, "agentdojo": {}}
    for r in range(args.rounds):
        order = ("randori", "agentdojo") if r % 2 == 0 else ("agentdojo", "randori")
        for side in order:
            print(f"round {r + 1}/{args.rounds}: {side}...", file=sys.stderr, flush=True)
            for name, ts in run_side(side, suites).items():
                times[side].setdefault(name, []).extend(ts)
    print(f"{'suite':<10} {'cases':>6} {'randori ms':>11} {'AgentDojo ms':>13} {'ratio':>7}")
    for name in [*suites, "all"]:
        ours = [t for s in suites for t in times["randori"][s]] if name == "all" else times["randori"][name]
        theirs = [t for s in suites for t in times["agentdojo"][s]] if name == "all" else times["agentdojo"][name]
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"{name:<10} {len(ours) // args.rounds:>6} {1000 * a:>11.1f} {1000 * b:>13.1f} {b / a:>6.1f}x")
    print("per-case medians of wall time; ratio = AgentDojo / randori")


if __name__ == "__main__":
    main()
