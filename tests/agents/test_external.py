"""Bring your own agent: a Python callable (`--agent MODULE:CALLABLE`) and an MCP client process
(`--agent "mcp:COMMAND"`) run the same cases as the built-in agent, through the same tool path.

The reference agents (tests/fakes/replay.py) decide from what any external agent sees (the prompt
and the tool outputs), like scripted/oracle and scripted/gullible; they must reproduce the scripted
agents' results case by case."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from randori.agents.defenses.detector import REDACTED
from randori.agents.external import get_agent
from randori.agents.models import get_model
from randori.bench.cases import Case
from randori.bench.runner import Selection, plan, run_cases
from randori.bench.store import Store
from randori.cli import run_cli
from randori.suites import ready_suite, suite_names
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.replay import Replay
from tests.helpers import alive_with, randori

REPO = Path(__file__).resolve().parents[2]
MCP_AGENT = f"mcp:{sys.executable} -S {REPO / 'tests' / 'fakes' / 'mcp_agent.py'}"
PY_GULLIBLE = "tests.fakes.replay:gullible_agent"
PY_ORACLE = "tests.fakes.replay:oracle_agent"
BANKING = ["-s", "banking", "-u", "user_task_0", "-u", "user_task_3", "-i", "injection_task_0"]


def outcomes(results: Path) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    con = sqlite3.connect(results / "randori.sqlite")
    rows = con.execute("SELECT kind, suite, user_task, injection_task, attack, defense, repeat, status, utility, "
                       "attack_succeeded, injection_seen FROM cases").fetchall()
    con.close()
    return {r[:7]: r[7:] for r in rows}


def run_in_process(results: Path, agent: str, model: str | None, suites: list[str], *, defense: str = "none",
                   benign: bool = True, attacks: tuple[str, ...] = ("important_instructions",),
                   injection_tasks: tuple[str, ...] = (), agent_in_process: bool = False,
                   ) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """A run through the library, as `randori run` does it (a Python agent in its worker, unless
    `agent_in_process`)."""
    spec = get_agent(agent, in_process=agent_in_process)
    sel = Selection(suites=[ready_suite(s) for s in suites], model=get_model(model) if model else None,
                    attacks=attacks, defenses=[defense], benign=benign, injection_tasks=injection_tasks, agent=spec)
    cases = plan(sel)
    with Store(results) as store:
        run = store.start_run({})
        asyncio.run(run_cases(cases, {s.name: s for s in sel.suites}, sel.model, store, run, agent=spec))
        store.finish_run(run)
    return outcomes(results)


# -- keys and store -------------------------------------------------------------------------------

def test_builtin_case_keys_are_those_of_stores_written_before_agents_were_pluggable():
    # Keys computed by randori before this change: an existing store resumes instead of re-running.
    attacked = Case("attacked", suite="banking", suite_version="1.0.0", user_task="user_task_0",
                    injection_task="injection_task_1", attack="important_instructions", defense="none",
                    model="scripted/gullible", settings={"temperature": 0.0, "max_tokens": None, "seed": None,
                                                         "reasoning_effort": None}, repeat=0, injections={"v": "text"})
    benign = Case("benign", suite="chat", suite_version="1.0.1", user_task="user_task_3", injection_task=None,
                  attack=None, defense="detector", model="openai/gpt-4o", settings={"temperature": 0.0}, repeat=2)
    assert attacked.key == "8239797826c17bbb3b6cd5d78df200ff"
    assert benign.key == "2acea3ee5e5aa7e0258d3c331cc0b315"


def test_agent_and_version_are_part_of_the_key_and_of_report_rows(tmp_path):
    base = dict(kind="benign", suite="banking", suite_version="1.0.0", user_task="user_task_0", injection_task=None,
                attack=None, defense="none", model="m", settings={}, repeat=0)
    keys = {Case(**base).key, Case(**base, agent="a:b").key, Case(**base, agent="a:b", agent_version="1").key,
            Case(**base, agent="a:b", agent_version="2").key}
    assert len(keys) == 4
    for version in ("1", "2"):
        assert run_cli(["run", *BANKING, "--no-attack", "--agent", PY_ORACLE, "--agent-version", version,
                        "-r", str(tmp_path)]) == 0
    report = randori("report", "-r", str(tmp_path), "--format", "json")
    rows = {(r["agent"], r["agent_version"], r["model"]) for r in json.loads(report.stdout)["rows"]}
    assert rows == {(PY_ORACLE, "1", f"{PY_ORACLE}@1"), (PY_ORACLE, "2", f"{PY_ORACLE}@2")}
    con = sqlite3.connect(tmp_path / "randori.sqlite")
    assert con.execute("SELECT DISTINCT agent, agent_version FROM cases ORDER BY 2").fetchall() == [
        (PY_ORACLE, "1"), (PY_ORACLE, "2")]


# -- the reference agents reproduce the scripted ones ----------------------------------------------

def test_python_agents_reproduce_the_scripted_agents_on_every_suite(tmp_path):
    # Every pair in randori's process (--agent-in-process: quick); one injection task per suite in the
    # agent's worker (the default route: a server and a session per case make the product minutes long).
    suites = suite_names()
    scripted = run_in_process(tmp_path / "scripted", "builtin", "scripted/gullible", suites)
    python = run_in_process(tmp_path / "python", PY_GULLIBLE, None, suites, agent_in_process=True)
    assert len(scripted) == len(python) > 1800
    assert python == scripted  # status, utility, attack success and injection seen, case by case
    attacked = [v for k, v in python.items() if k[0] == "attacked"]
    assert all(v[2] == 1 for v in attacked if v[3] == 1)  # the gullible agent obeys every injection it sees
    worker = run_in_process(tmp_path / "worker", PY_GULLIBLE, None, suites, injection_tasks=("injection_task_0",))
    subset = {k: v for k, v in scripted.items() if k[3] in (None, "injection_task_0")}
    assert len(worker) == len(subset) > 100 and worker == subset
    oracle = run_in_process(tmp_path / "oracle", PY_ORACLE, None, suites, attacks=())
    benign = [v for k, v in oracle.items() if k[0] == "benign"]
    assert len(benign) == sum(len(ready_suite(s).user_tasks) for s in suites)
    assert all(v[0] == "ok" and v[1] == 1 for v in benign)  # 100% benign utility


@pytest.fixture(scope="module")
def gullible_server():
    with FakeOpenAIServer(Replay(gullible=True).policy) as server:
        yield server


def test_an_mcp_agent_process_reproduces_the_scripted_agent_on_every_suite(tmp_path, gullible_server):
    # Every user task of every suite, benign and under attack (one injection task per suite: a process
    # per case makes the full product minutes long; the Python route above covers every pair).
    sel = ["-i", "injection_task_0"]
    scripted = run_in_process(tmp_path / "scripted", "builtin", "scripted/gullible", suite_names(),
                              injection_tasks=("injection_task_0",))
    proc = randori("run", "--agent", MCP_AGENT, *sel, "-r", str(tmp_path / "mcp"), "--concurrency", "8",
                   env={"MODEL_BASE_URL": gullible_server.base_url}, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    mcp = outcomes(tmp_path / "mcp")
    assert mcp == scripted
    assert all(v[0] == "ok" and v[1] == 1 for k, v in mcp.items() if k[0] == "benign")


def test_mcp_tools_and_outputs_reach_the_agent_as_the_builtin_model_sees_them(tmp_path, gullible_server):
    before = len(gullible_server.requests)
    proc = randori("run", "--agent", MCP_AGENT, *BANKING, "--no-benign", "-r", str(tmp_path / "mcp"),
                   env={"MODEL_BASE_URL": gullible_server.base_url})
    assert proc.returncode == 0, proc.stderr
    suite = ready_suite("banking")
    requests = gullible_server.requests[before:]
    assert requests and all(r["tools"] == [t.schema() for t in suite.tools] for r in requests)
    assert all(r["messages"][0] == {"role": "system", "content": suite.system_prompt} for r in requests)
    # What the agent read for each call is what the built-in agent's model read in the same case.
    assert run_cli(["run", "-m", "scripted/gullible", *BANKING, "--no-benign", "-r", str(tmp_path / "builtin")]) == 0
    seen = {r["messages"][1]["content"]: [m["content"] for m in r["messages"] if m["role"] == "tool"]
            for r in requests}
    with Store(tmp_path / "builtin") as store:
        for row in store.cases("kind = 'attacked'"):
            messages = store.trace(row["key"])["messages"]
            prompt = next(m["content"] for m in messages if m["role"] == "user")
            assert seen[prompt] == [m["content"] for m in messages if m["role"] == "tool"]


def test_python_agent_trace_matches_the_builtin_trace(tmp_path):
    for name, agent in (("builtin", ["-m", "scripted/gullible"]), ("python", ["--agent", PY_GULLIBLE])):
        assert run_cli(["run", *agent, *BANKING, "--no-benign", "-r", str(tmp_path / name)]) == 0

    def calls(name: str) -> dict[str, list[tuple[Any, ...]]]:
        with Store(tmp_path / name) as store:
            out = {}
            for row in store.cases("kind = 'attacked'"):
                msgs = store.trace(row["key"])["messages"]
                out[row["user_task"]] = [(m["role"], m.get("content", ""),
                                          [(c["function"], c.get("args")) for c in m.get("tool_calls", [])],
                                          (m.get("tool_result") or {}).get("vectors_seen")) for m in msgs]
            return out

    assert calls("python") == calls("builtin")


# -- defenses -------------------------------------------------------------------------------------

@pytest.mark.parametrize("defense", ["detector", "delimiters", "datamark", "encode", "policy",
                                     "detector[mode=abort]", "datamark+detector"])
def test_tool_boundary_defenses_guard_external_agents_as_they_guard_the_builtin_one(defense, tmp_path):
    suites = ["banking"]
    scripted = run_in_process(tmp_path / "s", "builtin", "scripted/gullible", suites, defense=defense,
                              injection_tasks=("injection_task_0", "injection_task_1"))
    # policy asks --model for its allow-list before the agent starts
    python = run_in_process(tmp_path / "p", PY_GULLIBLE, "scripted/gullible" if "policy" in defense else None,
                            suites, defense=defense, injection_tasks=("injection_task_0", "injection_task_1"))
    assert python == scripted
    if defense.startswith("detector"):
        assert not any(v[2] for v in python.values() if v[2] is not None)  # no attack got through


def test_detector_redacts_what_the_python_agent_reads(tmp_path):
    assert run_cli(["run", "--agent", PY_GULLIBLE, *BANKING, "--no-benign", "-d", "detector",
                    "-r", str(tmp_path)]) == 0
    with Store(tmp_path) as store:
        row = store.cases("kind = 'attacked' AND user_task = 'user_task_0'")[0]
        tools = [m for m in store.trace(row["key"])["messages"] if m["role"] == "tool"]
    assert row["injection_seen"] == 1 and row["attack_succeeded"] == 0
    assert any(m["content"] == REDACTED for m in tools)
    assert any("withheld" in a for m in tools for a in m.get("annotations", []))


@pytest.mark.parametrize(("defense", "why"), [
    ("tool_filter", "chooses the tools"), ("sandwich", "rewrites what the model reads"),
    ("plan_then_execute", "replaces the agent's loop"), ("detector+sandwich", "rewrites what the model reads")])
def test_defenses_that_drive_the_model_refuse_external_agents(defense, why, tmp_path, capsys):
    assert run_cli(["run", "--agent", PY_ORACLE, *BANKING, "-d", defense, "-r", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("randori: error: defense ") and why in err and "\n" not in err


def test_policy_with_an_external_agent_needs_a_model(tmp_path, capsys):
    assert run_cli(["run", "--agent", PY_ORACLE, *BANKING, "-d", "policy", "-r", str(tmp_path)]) == 2
    assert "give --model" in capsys.readouterr().err


# -- failures: crash and timeout are errors, never scored, retried --------------------------------

async def flaky_agent(case: Any) -> str:
    if os.environ.get("RANDORI_TEST_CRASH"):
        raise RuntimeError("boom")
    return await __import__("tests.fakes.replay", fromlist=["x"]).oracle_agent(case)


async def slow_agent(case: Any) -> str:
    await asyncio.sleep(30)
    return ""


def test_a_crashing_python_agent_is_an_error_and_the_next_run_retries_it(tmp_path, monkeypatch):
    args = ["run", "--agent", f"{__name__}:flaky_agent", *BANKING, "--no-attack", "-r", str(tmp_path)]
    monkeypatch.setenv("RANDORI_TEST_CRASH", "1")
    assert run_cli(args) == 1  # every case failed
    with Store(tmp_path) as store:
        rows = store.cases()
    assert {(r["status"], r["error_category"], r["utility"]) for r in rows} == {("error", "agent_crash", None)}
    assert "RuntimeError: boom" in rows[0]["error_message"]
    monkeypatch.delenv("RANDORI_TEST_CRASH")
    assert run_cli(args) == 0
    with Store(tmp_path) as store:
        assert {(r["status"], r["utility"]) for r in store.cases()} == {("ok", 1)}
        assert {r["key"] for r in store.cases()} == {r["key"] for r in rows}


def test_a_python_agent_past_its_time_limit_is_an_agent_timeout(tmp_path):
    assert run_cli(["run", "--agent", f"{__name__}:slow_agent", *BANKING, "--no-attack", "--agent-timeout", "0.3",
                    "-r", str(tmp_path)]) == 1
    with Store(tmp_path) as store:
        assert {(r["status"], r["error_category"]) for r in store.cases()} == {("error", "agent_timeout")}


def test_an_mcp_agent_that_fails_is_an_agent_crash_with_its_stderr(tmp_path):
    proc = randori("run", "--agent", "mcp:sh -c 'echo the model is down >&2; exit 3'", *BANKING, "--no-attack",
                   "-r", str(tmp_path))
    assert proc.returncode == 1
    with Store(tmp_path) as store:
        rows = store.cases()
    assert {(r["status"], r["error_category"]) for r in rows} == {("error", "agent_crash")}
    assert "exited with status 3" in rows[0]["error_message"] and "the model is down" in rows[0]["error_message"]


def test_an_mcp_agent_past_its_limit_is_stopped_with_every_process_it_started(tmp_path):
    # The agent starts a child that would outlive it, then hangs. (This run once hung in CI: the limit
    # fired while the process was being started, and what it had started was never killed.)
    marker = "300.0301"
    command = f"mcp:sh -c 'sleep {marker} & sleep {marker}'"
    proc = randori("run", "--agent", command, "-s", "banking", "-u", "user_task_0", "--no-attack",
                   "--agent-timeout", "1", "-r", str(tmp_path / "r"))
    assert proc.returncode == 1
    with Store(tmp_path / "r") as store:
        assert {(r["status"], r["error_category"]) for r in store.cases()} == {("error", "agent_timeout")}
    assert alive_with(marker) == []


def test_children_an_mcp_agent_leaves_behind_are_killed_after_it_answers(tmp_path):
    marker = "300.0302"
    command = f"mcp:sh -c 'sleep {marker} > /dev/null 2>&1 & echo my answer'"
    proc = randori("run", "--agent", command, "-s", "banking", "-u", "user_task_0", "--no-attack",
                   "-r", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    with Store(tmp_path / "r") as store:
        rows = store.cases()
        answers = [store.trace(r["key"])["messages"][-1] for r in rows]
    assert {r["status"] for r in rows} == {"ok"}
    assert all(a == {"role": "assistant", "content": "my answer"} for a in answers)
    assert alive_with(marker) == []


@pytest.mark.parametrize(("agent", "message"), [
    ("mcp:no-such-agent-binary --x", "no executable 'no-such-agent-binary'"),
    ("mcp:", "names no command"),
    ("nosuchmodule_xyz:agent", "cannot import nosuchmodule_xyz"),
    ("tests.fakes.replay:nothing_here", "has no attribute 'nothing_here'"),
    ("tests.fakes.replay:REPO", "no attribute"),
    ("tests.fakes.replay:Replay.policy", None),
    ("just-a-name", "unknown agent 'just-a-name'"),
])
def test_agent_spec_mistakes_are_one_line(agent, message, tmp_path, capsys):
    code = run_cli(["run", "--agent", agent, *BANKING, "--no-attack", "-r", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    if message is None:  # a callable of the wrong shape fails per case, as a crash of the agent
        assert code == 1 and "agent_crash" in err
        return
    assert code == 2 and err.startswith("randori: error: ") and message in err and "\n" not in err


def test_agent_version_without_an_external_agent_is_refused(tmp_path, capsys):
    assert run_cli(["run", *BANKING, "--agent-version", "3", "-r", str(tmp_path)]) == 2
    assert "--agent-version" in capsys.readouterr().err


def test_a_key_on_an_mcp_command_line_is_not_stored(tmp_path):
    key = "sk-test-5f0a9c3e7b21d4"
    proc = randori("run", "--agent", f"mcp:sh -c 'echo fine' {key}", *BANKING, "--no-attack", "-r", str(tmp_path),
                   env={"OPENAI_API_KEY": key})
    assert proc.returncode == 0, proc.stderr
    data = (tmp_path / "randori.sqlite").read_bytes()
    assert key.encode() not in data and key[:10].encode() not in data
    with Store(tmp_path) as store:
        assert {r["agent"] for r in store.cases()} == {"mcp:sh -c 'echo fine' ***"}


def test_a_store_from_before_pluggable_agents_reads_as_builtin_and_resumes(tmp_path):
    args = ["run", "-m", "scripted/gullible", *BANKING, "-r", str(tmp_path)]
    assert run_cli(args) == 0
    con = sqlite3.connect(tmp_path / "randori.sqlite")
    con.executescript("ALTER TABLE cases DROP COLUMN agent; ALTER TABLE cases DROP COLUMN agent_version;")
    con.close()
    with Store(tmp_path, readonly=True) as store:
        assert {(c["agent"], c["agent_version"]) for c in store.cases()} == {("builtin", None)}
    again = randori(*args[:-2], "-r", str(tmp_path))
    assert again.returncode == 0 and "5 already in" in again.stderr and "0 to run" in again.stderr


def test_an_agent_installed_as_an_entry_point_runs_by_its_name(tmp_path):
    site = tmp_path / "site"
    (site / "randori_demo_agent-0.1.dist-info").mkdir(parents=True)
    (site / "randori_demo_agent.py").write_text(
        "from tests.fakes.replay import oracle_agent\n\nasync def run(case):\n    return await oracle_agent(case)\n")
    (site / "randori_demo_agent-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: randori-demo-agent\nVersion: 0.1\n")
    (site / "randori_demo_agent-0.1.dist-info" / "entry_points.txt").write_text(
        "[randori.agents]\ndemo = randori_demo_agent:run\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    proc = randori("run", "--agent", "demo", *BANKING, "--no-attack", "-r", str(tmp_path / "r"), env=env)
    assert proc.returncode == 0, proc.stderr
    with Store(tmp_path / "r") as store:
        assert {(r["agent"], r["status"], r["utility"]) for r in store.cases()} == {("demo", "ok", 1)}
    unknown = randori("run", "--agent", "demo", *BANKING, "-r", str(tmp_path / "r"))
    assert unknown.returncode == 2 and "unknown agent 'demo'" in unknown.stderr
