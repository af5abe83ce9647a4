"""AgentDojo's suites, from its installed package, as randori suites: names and versions, a clean error
without the extra, environments, tools, rendering and vectors as AgentDojo makes them, its attacks by
name, the MCP route, the audit and the report."""

from __future__ import annotations

import importlib.util
import json
import sqlite3

import pytest

pytest.importorskip("agentdojo")

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str  # noqa: E402
from agentdojo.attacks import load_attack  # noqa: E402
from agentdojo.functions_runtime import FunctionsRuntime  # noqa: E402

from randori.attacks import get_attack  # noqa: E402
from randori.attacks.base import AttackContext  # noqa: E402
from randori.cli import run_cli  # noqa: E402
from randori.suites import agentdojo, get_suite  # noqa: E402
from randori.suites.agentdojo.pipeline import target  # noqa: E402
from randori.tools.runtime import run_tool  # noqa: E402
from randori.vocabulary import ToolCall  # noqa: E402
from tests.agents.test_external import MCP_AGENT, outcomes  # noqa: E402
from tests.fakes import replay  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.helpers import randori  # noqa: E402

NAMES = ["agentdojo:workspace", "agentdojo:travel", "agentdojo:banking", "agentdojo:slack"]


def test_suites_list_shows_agentdojos_suites_at_v1_2_2(capsys):
    assert run_cli(["suites", "list", "--format", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert {n: rows[n]["version"] for n in NAMES} == dict.fromkeys(NAMES, "v1.2.2")
    assert [rows[n]["user_tasks"] for n in NAMES] == [40, 20, 16, 21]
    assert [rows[n]["injection_tasks"] for n in NAMES] == [14, 7, 9, 5]
    assert sum(rows[n]["attacked_cases"] for n in NAMES) == 949


def test_every_version_the_package_ships_is_selectable():
    assert {"v1", "v1.1.2", "v1.2.2"} <= set(agentdojo.versions())
    old = get_suite("agentdojo:banking@v1.1.2")
    assert (old.name, old.version) == ("agentdojo:banking@v1.1.2", "v1.1.2")
    assert get_suite("agentdojo:banking@v1.2.2") is get_suite("agentdojo:banking")


@pytest.mark.parametrize("name,says", [("agentdojo:banking@v9", "no benchmark version 'v9'"),
                                       ("agentdojo:bank", "no suite 'bank'")])
def test_a_wrong_name_or_version_is_one_clean_line(capsys, name, says):
    assert run_cli(["run", "-s", name, "-m", "scripted/oracle", "--dry-run"]) != 0
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_without_the_extra_naming_one_says_how_to_install_it(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "agentdojo" else real(name, *a))
    assert run_cli(["run", "-s", "agentdojo:banking", "-m", "scripted/oracle", "-r", "unused"]) != 0
    err = capsys.readouterr().err
    # This checkout was installed editable (make install): the hint says how, from it.
    assert "pip install -e '.[agentdojo]'" in err and "Traceback" not in err
    assert run_cli(["suites", "list", "--format", "json"]) == 0
    assert not any(r["name"].startswith("agentdojo:") for r in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("name", NAMES)
def test_environments_are_agentdojos_own_with_and_without_attack_text(name):
    suite = get_suite(name)
    source = suite.source
    assert suite.load_env().model_dump() == source.load_and_inject_default_environment({}).model_dump()
    attack = load_attack("important_instructions", source, target("GPT-4"))
    ut = next(iter(source.user_tasks.values()))
    for it in source.injection_tasks.values():
        injections = attack.attack(ut, it)
        assert suite.load_env(injections).model_dump() == \
            source.load_and_inject_default_environment(injections).model_dump()


@pytest.mark.parametrize("name", ["agentdojo:banking", "agentdojo:slack"])
def test_vectors_reached_and_attack_text_are_agentdojos(name):
    suite = get_suite(name)
    source = suite.source
    theirs = load_attack("important_instructions", source, target("GPT-4"))
    ours = get_attack("agentdojo:important_instructions")
    it = next(iter(suite.injection_tasks.values()))
    for tid, ut in suite.user_tasks.items():
        assert set(suite.reachable_vectors(tid)) == set(theirs.get_injection_candidates(ut.task))
        ctx = AttackContext(vectors=suite.reachable_vectors(tid), user_name=suite.user_name, model_name="GPT-4")
        assert ours.injections(ut, it, ctx) == theirs.attack(ut.task, it.task)


def test_tools_keep_their_schemas_and_results_render_as_agentdojo_renders_them():
    suite = get_suite("agentdojo:workspace")
    functions = {f.name: f for f in suite.source.tools}
    assert [t.name for t in suite.tools] == list(functions)
    for tool in suite.tools:
        assert tool.parameters == functions[tool.name].parameters.model_json_schema()
        assert tool.description == functions[tool.name].description
    env, theirs = suite.load_env(), suite.load_env()
    call = ToolCall(function="search_emails", args={"query": "meeting"})
    value, error = FunctionsRuntime(suite.source.tools).run_function(theirs, call.function, call.args)
    assert error is None
    assert run_tool(suite.tool_map, env, call).content == tool_result_to_str(value)
    failed = run_tool(suite.tool_map, env, ToolCall(function="get_file_by_id", args={"file_id": "nope"}))
    assert failed.error == FunctionsRuntime(suite.source.tools).run_function(theirs, "get_file_by_id",
                                                                             {"file_id": "nope"})[1]


def test_agentdojo_attacks_run_on_agentdojo_suites_only(capsys):
    assert run_cli(["run", "-s", "banking", "-m", "scripted/oracle", "-a", "agentdojo:important_instructions",
                    "--dry-run"]) != 0
    assert "runs on AgentDojo's suites only" in capsys.readouterr().err
    assert run_cli(["run", "-s", "agentdojo:banking", "-m", "scripted/oracle", "-a", "agentdojo:nope",
                    "--dry-run"]) != 0
    assert "agentdojo:important_instructions" in capsys.readouterr().err


@pytest.fixture
def agentdojo_replay():
    replay.EXTRA_SUITES.append("agentdojo:banking")
    try:
        with FakeOpenAIServer(replay.Replay(gullible=True).policy) as server:
            yield server
    finally:
        replay.EXTRA_SUITES.remove("agentdojo:banking")


def test_banking_under_attack_gives_the_same_outcomes_through_an_mcp_agent(tmp_path, agentdojo_replay):
    run = ["run", "--suite", "agentdojo:banking", "--attack", "important_instructions"]
    builtin = randori(*run, "--model", "scripted/gullible", "-r", str(tmp_path / "builtin"), timeout=600)
    assert builtin.returncode == 0, builtin.stderr[-2000:]
    mcp = randori(*run, "--agent", MCP_AGENT, "-r", str(tmp_path / "mcp"), "--concurrency", "8",
                  env={"MODEL_BASE_URL": agentdojo_replay.base_url}, timeout=900)
    assert mcp.returncode == 0, mcp.stderr[-2000:]
    ours, theirs = outcomes(tmp_path / "builtin"), outcomes(tmp_path / "mcp")
    assert len(ours) == 16 + 9 + 16 * 9
    assert ours == theirs
    attacked = [v for k, v in ours.items() if k[0] == "attacked"]
    assert all(v[0] == "ok" and v[3] for v in attacked)  # every case saw the injection...
    assert sum(v[2] for v in attacked) > len(attacked) // 2  # ...and the gullible agent mostly obeyed


def test_the_report_sets_agentdojos_utility_beside_randoris(tmp_path, capsys):
    results = str(tmp_path / "r")
    assert run_cli(["run", "-s", "agentdojo:slack", "-m", "scripted/gullible", "-a", "agentdojo:important_instructions",
                    "-u", "user_task_0", "-u", "user_task_1", "-r", results]) == 0
    capsys.readouterr()
    assert run_cli(["report", "-r", results]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "AgentDojo's (user task done, whatever the attacker got" in out
    con = sqlite3.connect(tmp_path / "r" / "randori.sqlite")
    rows = con.execute("SELECT utility, attack_succeeded FROM cases WHERE kind = 'attacked'").fetchall()
    con.close()
    assert run_cli(["report", "-r", results, "--format", "json"]) == 0
    headline = json.loads(capsys.readouterr().out)
    row = next(r for r in headline[next(iter(headline))] if r.get("attack") == "agentdojo:important_instructions")
    assert row["utility_under_attack_agentdojo"]["n"] == len(rows)
    assert row["utility_under_attack_agentdojo"]["rate"] == sum(u for u, _ in rows) / len(rows)
    assert row["utility_under_attack"]["rate"] == sum(u and not a for u, a in rows) / len(rows)


def test_audit_names_task_rule_and_the_accepted_wrong_trajectory(capsys):
    assert run_cli(["suites", "check", "agentdojo:banking", "--audit", "--format", "json"]) == 0
    [audit] = json.loads(capsys.readouterr().out)
    assert (audit["suite"], audit["version"]) == ("agentdojo:banking", "v1.2.2")
    assert audit["findings"] and audit["tried"]["side_effects"] > 0
    for f in audit["findings"]:
        assert f["task"] and f["rule"] in ("side_effects", "plausible", "dropped", "raw_outputs", "literal", "refusal")
        assert f["what"] and isinstance(f["calls"], list)
    suite = get_suite("agentdojo:banking")
    # A finding is real: its trajectory, replayed, passes the task's own check and differs from the ground truth.
    f = next(f for f in audit["findings"] if f["rule"] == "side_effects")
    ut = suite.user_tasks[f["task"]]
    pre, env = suite.load_env(), suite.load_env()
    calls = [ToolCall(**c) for c in f["calls"]]
    results = suite.replay(env, calls)
    from randori.validity.audit import _trace

    assert ut.utility(f["answer"], pre, env, _trace(calls, results, f["answer"]))
    assert len(calls) == len(ut.ground_truth(suite.load_env())) + 1
    assert run_cli(["suites", "check", "agentdojo:banking"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("agentdojo:banking@v1.2.2: ") and all(len(line) <= 100 for line in text.splitlines())
