"""A reply asking for thousands of tool calls runs only the first MAX_TOOL_CALLS of them; every
other call is answered with an error result the model sees (each call id keeps its answer)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from randori.agents.loop import MAX_TOOL_CALLS, ToolAgent
from randori.bench.store import Store
from randori.suites import get_suite
from randori.vocabulary import Message, ToolCall
from tests.fakes.openai_server import FakeOpenAIServer
from tests.helpers import randori


class Flood:
    """First turn: `n` calls of one tool; second turn: a text answer."""

    def __init__(self, tool: str, n: int):
        self.tool, self.n, self.turns = tool, n, 0

    async def complete(self, messages: list[Message], tools: list[Any], *args: Any, **kw: Any) -> Message:
        self.turns += 1
        if self.turns == 1:
            return Message.assistant(tool_calls=[ToolCall(function=self.tool, id=f"c{i}", args={})
                                                 for i in range(self.n)])
        return Message.assistant("done")


def run_flood(n: int, **kw: Any):
    suite = get_suite("banking")
    tool = next(t.name for t in suite.tools if not [p for p in t.parameters.get("required", [])])
    agent = ToolAgent(Flood(tool, n), suite.tools, "", **kw)  # type: ignore[arg-type]
    return asyncio.run(agent.run(suite.load_env(), "hi")), tool


def test_calls_past_the_cap_are_answered_with_an_error_and_not_run():
    trace, tool = run_flood(10_000)
    results = [m.tool_result for m in trace.messages if m.role == "tool"]
    assert len(results) == 10_000  # every call id gets its answer
    ran = [r for r in results if not r.error]
    assert len(ran) == MAX_TOOL_CALLS and 10 <= MAX_TOOL_CALLS <= 99
    refused = results[MAX_TOOL_CALLS:]
    assert all(r.error and "at most" in r.error for r in refused)
    assert {r.call_id for r in refused} == {f"c{i}" for i in range(MAX_TOOL_CALLS, 10_000)}
    assert trace.messages[-1].content == "done"


def test_the_cap_is_configurable():
    trace, _ = run_flood(5, max_tool_calls=2)
    results = [m.tool_result for m in trace.messages if m.role == "tool"]
    assert [bool(r.error) for r in results] == [False, False, True, True, True]


def flood_policy(n: int):
    """A server whose first reply asks for `n` get_accounts calls; later replies are a text answer."""
    def policy(request):
        if not any(m.get("role") == "tool" for m in request["messages"]):
            return [("get_accounts", {})] * n
        return "Your balance is shown above."
    return policy


def tool_answers(server):
    """The tool results in the first request that carries any: what the model reads after its flood."""
    return next(a for req in server.requests if (a := [m for m in req["messages"] if m["role"] == "tool"]))


@pytest.mark.parametrize("executor", ["inprocess", "processes=1"])
def test_run_max_tool_calls_caps_each_reply_and_the_model_sees_the_refusals(tmp_path, executor):
    results = tmp_path / "results"
    with FakeOpenAIServer(flood_policy(5)) as server:
        r = randori("run", "-s", "banking", "-u", "user_task_1", "--no-attack", "-m", "openai/fake",
                    "--base-url", server.base_url, "--max-tool-calls", "2", "--executor", executor,
                    "-r", str(results), env={"OPENAI_API_KEY": "sk-test-cap"})
        assert r.returncode == 0, r.stderr
        answers = tool_answers(server)
    assert len(answers) == 5  # every call id answered, in the request the model reads next
    refused = [m for m in answers if "at most 2 tool calls" in json.dumps(m)]
    assert len(refused) == 3
    with Store(results, readonly=True) as store:
        [case] = store.cases("kind = 'benign'")
        trace = store.trace(case["key"])
        [run] = store.runs()
    results_seen = [m["tool_result"] for m in trace["messages"] if m["role"] == "tool"]
    assert [bool(t.get("error")) for t in results_seen] == [False, False, True, True, True]
    assert run["config"]["max_tool_calls"] == 2  # stored with the run


def test_without_the_flag_the_default_cap_applies(tmp_path):
    with FakeOpenAIServer(flood_policy(MAX_TOOL_CALLS + 3)) as server:
        r = randori("run", "-s", "banking", "-u", "user_task_1", "--no-attack", "-m", "openai/fake",
                    "--base-url", server.base_url, "-r", str(tmp_path / "results"), env={"OPENAI_API_KEY": "sk-x"})
        assert r.returncode == 0, r.stderr
        answers = tool_answers(server)
    assert sum(f"at most {MAX_TOOL_CALLS} tool calls" in json.dumps(m) for m in answers) == 3


@pytest.mark.parametrize("value, message", [("0", "greater than or equal to 1"), ("many", "valid integer"),
                                            ("10001", "less than or equal to 10000")])
def test_a_bad_max_tool_calls_is_one_line(tmp_path, value, message):
    r = randori("run", "-s", "banking", "-m", "scripted/gullible", "--max-tool-calls", value,
                "-r", str(tmp_path / "results"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    [line] = r.stderr.strip().splitlines()
    assert line.startswith("randori: error:") and "--max-tool-calls" in line and message in line
    assert not (tmp_path / "results").exists()


def test_max_tool_calls_is_refused_for_an_external_agent(tmp_path):
    r = randori("run", "-s", "banking", "--agent", "tests.fakes.hostile_agents:silent_agent", "--max-tool-calls", "3",
                "-r", str(tmp_path / "results"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--max-tool-calls caps the built-in agent" in r.stderr.strip().splitlines()[-1]


def test_help_states_the_default():
    r = randori("run", "--help")
    assert "--max-tool-calls" in r.stdout and f"Default: {MAX_TOOL_CALLS}." in " ".join(r.stdout.split())


@pytest.mark.parametrize("defense", ["none", "plan_then_execute"])
def test_the_cap_reaches_the_loop_a_defense_builds(defense):
    from randori.agents.agent import AgentSpec
    from randori.agents.defenses import get_defense

    suite = get_suite("banking")
    built = AgentSpec.capped(3).build(Flood("get_accounts", 1), suite.tools, "", get_defense(defense),  # type: ignore[arg-type]
                                      max_steps=5)
    assert built.max_tool_calls == 3  # type: ignore[attr-defined]
    assert AgentSpec.capped(None).build(Flood("get_accounts", 1), suite.tools, "", get_defense(defense),  # type: ignore[arg-type]
                                        max_steps=5).max_tool_calls == MAX_TOOL_CALLS  # type: ignore[attr-defined]
