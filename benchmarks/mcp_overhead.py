"""The MCP route's cost: overhead per tool call, and every attacked case's wall time through MCP beside
the in-process agent, in the same run.

Both agents replay the same decisions: the in-process one is scripted/gullible; the MCP one is a
process per case (tests/fakes/mcp_agent.py, standard library only) that asks the fake OpenAI server
answering like scripted/gullible, and calls the tools over MCP. Cases run one at a time, so each is
timed alone.

Overhead per tool call = the round trip the agent process measures for `tools/call` minus the time
randori spends in the tool path itself (defense hooks, the tool, rendering, the trace): what HTTP,
JSON-RPC and the MCP SDK's server add. Target (issue 14): median at most 5 ms.

Then each case's wall time with a process per case beside `--agent-reuse N` (a process serves N cases
in turn), for the standard-library client and, with `--sdk`, a client on the official MCP SDK (whose
start is expensive: the case for reuse). Every agent process runs in its container."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests.fakes: the fake OpenAI server and the reference agents

from randori.agents.external import get_agent  # noqa: E402
from randori.agents.external.session import ExternalAgent  # noqa: E402
from randori.agents.models import get_model  # noqa: E402
from randori.bench.runner import Selection, plan, run_cases  # noqa: E402
from randori.bench.store import Store  # noqa: E402
from randori.suites import get_suite  # noqa: E402

# The fake model server runs in its own process: in ours its thread would compete for the interpreter
# with the MCP server being measured.
FAKE_SERVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.replay import Replay
with FakeOpenAIServer(Replay(gullible=True).policy, record=False) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


TOOL_TIME: list[float] = []  # randori's own time per tool call through MCP, in call order


def run(cases: list[Any], suites: dict[str, Any], agent: Any, model: Any) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as d, Store(d) as store:
        run_id = store.start_run({})
        asyncio.run(run_cases(cases, suites, model, store, run_id, concurrency=1, agent=agent))
        return {r["key"]: r for r in store.cases()}


BACK_TO_BACK = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import mcp_agent
mcp = mcp_agent.Mcp(sys.argv[2])
name, args = json.loads(sys.argv[3])
for _ in range(int(sys.argv[4])):
    mcp.call(name, args)
print(json.dumps(mcp.times))
"""


async def back_to_back(suite: Any, calls: int) -> tuple[list[float], list[float]]:
    """One case served; one process makes `calls` identical read-only tool calls in a row (no model in
    between): the transport alone, without waking a model server between calls."""
    from randori.agents.defenses import Defense
    from randori.agents.external.mcp import serve
    from randori.agents.external.session import AgentCase, ToolSpec
    from randori.vocabulary import Trace

    task = next(iter(suite.user_tasks.values()))
    env = suite.load_env()
    first = task.ground_truth(env)[0]
    agent = ExternalAgent(None, None, suite.tools, suite.system_prompt, Defense(), limit=None)  # type: ignore[arg-type]
    trace = Trace()
    tool_map = {t.name: t for t in suite.tools}

    async def invoke(name: str, arguments: Any) -> tuple[str, bool]:
        return await agent.invoke(env, trace, tool_map, None, name, arguments)

    case = AgentCase(task.prompt, suite.system_prompt, [ToolSpec(t.name, t.description, t.parameters)
                                                        for t in suite.tools], invoke, None)
    start = len(TOOL_TIME)
    async with serve(case) as url:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-S", "-c", BACK_TO_BACK, str(REPO / "tests" / "fakes"), url,
            json.dumps([first.function, first.args]), str(calls), stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
    return json.loads(out), TOOL_TIME[start:]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[int(q * (len(values) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", action="append", default=[], help="Suite (repeatable). Default: banking.")
    ap.add_argument("--limit", type=int, default=0, help="Only the first N attacked cases.")
    ap.add_argument("--calls", type=int, default=300, help="Back-to-back calls in the transport-only test.")
    ap.add_argument("--reuse", type=int, default=20, help="Cases one process serves in the --agent-reuse runs.")
    ap.add_argument("--sdk", action="store_true", help="Also time the SDK client, a process per case and reused.")
    args = ap.parse_args()
    suites = {n: get_suite(n) for n in (args.suite or ["banking"])}

    invoke = ExternalAgent.invoke

    async def timed_invoke(self: ExternalAgent, *a: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await invoke(self, *a, **kw)
        finally:
            TOOL_TIME.append(time.perf_counter() - t0)

    ExternalAgent.invoke = timed_invoke  # type: ignore[method-assign]

    fake = subprocess.Popen([sys.executable, "-c", FAKE_SERVER, str(REPO)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert fake.stdout is not None and fake.stdin is not None
    with fake, tempfile.TemporaryDirectory() as d:
        timings = Path(d) / "round_trips"
        os.environ.update({"MODEL_BASE_URL": fake.stdout.readline().strip(), "MCP_AGENT_TIMINGS": str(timings)})
        gullible = get_model("scripted/gullible")
        builtin = get_agent("builtin")
        stdlib_client = f"mcp:{sys.executable} -S {REPO / 'tests' / 'fakes' / 'mcp_agent.py'}"
        sdk_client = f"mcp:{sys.executable} {REPO / 'tests' / 'fakes' / 'mcp_sdk_agent.py'}"
        bind = [f"{d}:rw"]  # the agent appends its round trips to a file there, from inside its container
        mcp = get_agent(stdlib_client, binds=bind)
        cases = plan(Selection(suites=list(suites.values()), model=gullible, benign=False, injection_only=False))
        cases = cases[:args.limit] if args.limit else cases
        mcp_cases = plan(Selection(suites=list(suites.values()), model=None, benign=False, injection_only=False,
                                   agent=mcp))
        mcp_cases = mcp_cases[:len(cases)]
        t0 = time.perf_counter()
        inproc = run(cases, suites, builtin, gullible)
        t1 = time.perf_counter()
        through_mcp = run(mcp_cases, suites, mcp, None)
        t2 = time.perf_counter()
        round_trips = [float(x) for x in timings.read_text().split()] if timings.exists() else []
        tool_time = list(TOOL_TIME)  # the runs below call tools too
        variants = {"stdlib client, reused": run(mcp_cases, suites, get_agent(stdlib_client, binds=bind,
                                                                              reuse=args.reuse), None)}
        if args.sdk:
            variants["SDK client, a process per case"] = run(mcp_cases, suites, get_agent(sdk_client), None)
            variants["SDK client, reused"] = run(mcp_cases, suites, get_agent(sdk_client, reuse=args.reuse), None)
        fake.stdin.close()
    rt2, tt2 = asyncio.run(back_to_back(next(iter(suites.values())), args.calls))

    print(f"suites: {', '.join(f'{s.name}@{s.version}' for s in suites.values())}; "
          f"{len(cases)} attacked cases, one at a time")
    # A round trip wakes two processes: on a machine busy with other work, each wake-up waits its turn.
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if len(round_trips) != len(tool_time):
        print(f"warning: {len(round_trips)} round trips measured by the agent, {len(tool_time)} calls in randori")
    overhead = [1000 * (rt - tt) for rt, tt in zip(round_trips, tool_time, strict=False)]
    if overhead:
        print(f"MCP overhead per tool call ({len(overhead)} calls): median {statistics.median(overhead):.2f} ms, "
              f"p95 {pct(overhead, 0.95):.2f} ms (target: median <= 5 ms)")
        print(f"  randori's own tool path: median {1000 * statistics.median(tool_time):.2f} ms; "
              f"round trip: median {1000 * statistics.median(round_trips):.2f} ms")
    b2b = [1000 * (rt - tt) for rt, tt in zip(rt2, tt2, strict=False)]
    print(f"  the same, {len(b2b)} calls back to back (no model between calls): median "
          f"{statistics.median(b2b):.2f} ms, p95 {pct(b2b, 0.95):.2f} ms")
    print(f"\n{'attacked case':44} {'calls':>5} {'in-process':>11} {'MCP':>9} {'same':>5}")
    rows = []
    for a, b in zip(cases, mcp_cases, strict=True):
        x, y = inproc[a.key], through_mcp[b.key]
        same = (x["utility"], x["attack_succeeded"], x["injection_seen"]) == (
            y["utility"], y["attack_succeeded"], y["injection_seen"])
        ut, it = a.user_task.replace("user_task_", "u"), a.injection_task.replace("injection_task_", "i")
        name = f"{a.suite} {ut} x {it}"
        calls = x["model_calls"] - 1
        rows.append((x["duration_s"], y["duration_s"]))
        print(f"{name:44} {calls:>5} {1000 * x['duration_s']:>8.1f} ms {1000 * y['duration_s']:>6.0f} ms "
              f"{'yes' if same else 'NO':>5}")
    print(f"\nper case, median: in-process {1000 * statistics.median(r[0] for r in rows):.1f} ms, "
          f"MCP {1000 * statistics.median(r[1] for r in rows):.0f} ms (a process, a server and model calls per case)")
    print(f"whole run: in-process {t1 - t0:.1f} s, MCP {t2 - t1:.1f} s")
    print(f"\nper case, median wall time: a process per case beside --agent-reuse {args.reuse}")
    print(f"  {'stdlib client, a process per case':40} {1000 * statistics.median(r[1] for r in rows):>8.0f} ms")
    for label, results in variants.items():
        durations = [results[b.key]["duration_s"] for b in mcp_cases]
        pairs = zip(cases, mcp_cases, strict=True)
        same = sum((inproc[a.key]["utility"], inproc[a.key]["attack_succeeded"]) == (
            results[b.key]["utility"], results[b.key]["attack_succeeded"]) for a, b in pairs)
        print(f"  {label:40} {1000 * statistics.median(durations):>8.0f} ms  (same outcome: {same}/{len(cases)})")


if __name__ == "__main__":
    main()
