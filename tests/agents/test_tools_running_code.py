"""A tool that runs code (`@tool(runs_code=True)`, coding's `run_tests`) runs off the event loop: other
cases go on while it runs; a case's own calls still run one at a time."""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

from randori.agents.loop import ToolAgent
from randori.tools import Env, tool
from randori.vocabulary import Message, ToolCall


class Calls:
    """First turn: the given calls; second turn: a text answer."""

    def __init__(self, *calls: str):
        self.calls, self.turns = calls, 0

    async def complete(self, messages: list[Message], tools: list[Any], *args: Any, **kw: Any) -> Message:
        self.turns += 1
        if self.turns == 1:
            return Message.assistant(tool_calls=[ToolCall(function=c, id=f"c{i}", args={})
                                                 for i, c in enumerate(self.calls)])
        return Message.assistant("done")


def test_a_tool_that_runs_code_lets_other_cases_go_on():
    other_ran = threading.Event()

    @tool(runs_code=True)
    def slow_tests(env: Annotated[dict, Env()]) -> str:
        """Waits until another case's tool has run: it never does if this call holds the event loop."""
        return "saw the other case" if other_ran.wait(timeout=20) else "alone"

    @tool
    def quick(env: Annotated[dict, Env()]) -> str:
        """Runs on the event loop."""
        other_ran.set()
        return "ok"

    assert slow_tests.runs_code and not quick.runs_code

    async def both() -> list[Any]:
        a = ToolAgent(Calls("slow_tests"), [slow_tests, quick], "")  # type: ignore[arg-type]
        b = ToolAgent(Calls("quick"), [slow_tests, quick], "")  # type: ignore[arg-type]
        return await asyncio.gather(a.run({}, "hi"), b.run({}, "hi"))

    first, _ = asyncio.run(both())
    [result] = [m.tool_result for m in first.messages if m.role == "tool"]
    assert result.content == "saw the other case"


def test_a_cases_own_calls_do_not_overlap_a_tool_that_runs_code():
    seen: list[str] = []

    @tool(runs_code=True)
    def read_all(env: Annotated[dict, Env()]) -> str:
        """Reads the state on a thread."""
        seen.append(f"start {env['n']}")
        threading.Event().wait(0.05)
        seen.append(f"end {env['n']}")
        return str(env["n"])

    @tool
    def bump(env: Annotated[dict, Env()]) -> str:
        """Changes the state."""
        env["n"] += 1
        seen.append(f"bump {env['n']}")
        return "ok"

    # Two calls at once on one case, as an external agent may make them.
    agent = ToolAgent(Calls(), [read_all, bump], "")  # type: ignore[arg-type]

    async def two_at_once() -> list[Any]:
        env = {"n": 0}
        tools = {t.name: t for t in agent.tools}
        return await asyncio.gather(agent.execute(env, ToolCall(function="read_all", id="a", args={}), tools, None),
                                    agent.execute(env, ToolCall(function="bump", id="b", args={}), tools, None))

    read, bumped = asyncio.run(two_at_once())
    assert seen == ["start 0", "end 0", "bump 1"] and read.content == "0" and bumped.content == "ok"
