"""A reply asking for thousands of tool calls runs only the first MAX_TOOL_CALLS of them; every
other call is answered with an error result the model sees (each call id keeps its answer)."""

from __future__ import annotations

import asyncio
from typing import Any

from randori.agents.loop import MAX_TOOL_CALLS, ToolAgent
from randori.suites import get_suite
from randori.vocabulary import Message, ToolCall


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
