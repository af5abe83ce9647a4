"""`ToolAgent`: the model <-> tools loop with defense hooks (see agents/defenses/base.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

from randori.agents.defenses.base import Defense, DefenseAbort
from randori.agents.models.base import ChatModel
from randori.tools.function import Tool
from randori.tools.runtime import run_tool
from randori.vocabulary import Message, ToolCall, ToolResult, Trace


class ToolSource(Protocol):
    """Tool descriptions that may change while a case runs (a third-party tool's description, a rug
    pull): see randori.tasks.tool_vectors.CaseTools."""

    def at(self, calls_made: int) -> list[Tool]: ...

    def vectors_at(self, calls_made: int) -> dict[str, str]: ...

    def changes_at(self, calls_made: int) -> bool: ...


# Tool calls run per model turn; the rest are answered with an error. A reply asking for thousands
# would otherwise all run, and the next request would carry every result (megabytes).
MAX_TOOL_CALLS = 32


def blocked(call: ToolCall, by: str, reason: str) -> ToolResult:
    """The result of a call a defense stopped before it ran: an error the model reads."""
    return ToolResult(call_id=call.id, function=call.function, blocked_by=by,
                      error=f"This call was blocked by a security policy: {reason}")


class ToolAgent:
    def __init__(self, model: ChatModel, tools: list[Tool], system_prompt: str,
                 defense: Defense | None = None, *, max_steps: int = 20, fmt: str = "yaml",
                 tool_source: ToolSource | None = None, max_tool_calls: int = MAX_TOOL_CALLS):
        self.model = model
        self.tool_source = tool_source
        self.tools = tool_source.at(0) if tool_source is not None else tools
        self.active_tools = self.tools  # what select_tools left (set per run)
        self.system_prompt = system_prompt
        self.defense = defense or Defense()
        self.max_steps = max_steps
        self.max_tool_calls = max_tool_calls
        self.fmt = fmt
        self.calls_made = 0  # tool calls so far: a rug pull changes descriptions after the first
        self._shown: dict[str, str] = {}  # tool name -> description last shown to the model
        self._pending: list[str] = []  # harness notes for the next recorded message
        self._tool_turn = asyncio.Lock()  # one tool call at a time per case (see Tool.runs_code)

    async def run(self, env: Any, prompt: str, *, watch: Mapping[str, str] | None = None,
                  trace: Trace | None = None) -> Trace:
        """Run until the model answers without tool calls, a defense aborts, or `max_steps`.
        Model errors propagate (the runner records them); tool errors go back to the model."""
        trace = trace if trace is not None else Trace()
        try:
            await self.start(trace, prompt)
            await self.steps(env, trace, watch)
        except DefenseAbort as e:
            self.record(trace, Message(role="assistant", content="",
                                       annotations=[f"aborted by defense {self.defense.name}: {e}"]))
        return trace

    async def start(self, trace: Trace, prompt: str) -> None:
        d = self.defense
        with d.timed():
            system = d.system_prompt(self.system_prompt)
        trace.messages += [Message.system(system), Message.user(prompt)]
        with d.timed():
            # Runs before any tool output exists: the only moment a defense can ask the model a
            # question the attacker cannot influence.
            self.active_tools = await d.select_tools(prompt, self.tools, self.model)

    async def steps(self, env: Any, trace: Trace, watch: Mapping[str, str] | None) -> None:
        tool_map = {t.name: t for t in self.active_tools}
        for _ in range(self.max_steps):
            reply = await self.ask(trace, self.active_tools)
            self.record(trace, reply)
            if not reply.tool_calls:
                return
            for i, call in enumerate(reply.tool_calls):
                if i < self.max_tool_calls:
                    result = await self.execute(env, call, tool_map, watch)
                else:  # each call still needs its answer, or the provider refuses the next request
                    result = ToolResult(call_id=call.id, function=call.function,
                                        error=f"Not run: at most {self.max_tool_calls} tool calls per turn.")
                self.record(trace, Message.tool(result))
        self.record(trace, Message(role="assistant", content="",
                                   annotations=[f"stopped after {self.max_steps} steps"]))

    async def ask(self, trace: Trace, tools: list[Tool], extra: list[Message] | None = None) -> Message:
        """One model turn on the trace so far (plus `extra` messages that are shown, not stored)."""
        with self.defense.timed():
            messages = self.defense.before_model(trace.messages)
        return await self.model.complete([*messages, *(extra or [])], self.current(trace, tools))

    def current(self, trace: Trace, tools: list[Tool]) -> list[Tool]:
        """`tools` with the descriptions they have now, noting in the trace which injected
        descriptions the model is shown and when a description changed since the last turn."""
        if self.tool_source is None:
            return tools
        now = {t.name: t for t in self.tool_source.at(self.calls_made)}
        tools = [now.get(t.name, t) for t in tools]
        changed = [t.name for t in tools if t.name in self._shown and self._shown[t.name] != t.description]
        if changed:
            self._pending.append(f"tool list changed after {self.calls_made} tool call(s): new description of "
                                 + ", ".join(changed))
        self._shown.update({t.name: t.description for t in tools})
        shown = {t.name for t in tools}
        for vid, tool in self.tool_source.vectors_at(self.calls_made).items():
            if tool in shown and vid not in trace.description_vectors:
                trace.description_vectors.append(vid)
                self._pending.append(f"injected text of {vid} is in the description of {tool}")
        return tools

    async def execute(self, env: Any, call: ToolCall, tool_map: Mapping[str, Tool],
                      watch: Mapping[str, str] | None) -> ToolResult:
        d = self.defense
        self.calls_made += 1
        with d.timed():
            reason = await d.check_call(call)
        if reason:
            d.note(f"blocked {call.function}: {reason}")
            return blocked(call, d.name, reason)
        async with self._tool_turn:
            t = tool_map.get(call.function)
            if t is not None and t.runs_code:
                # Off the event loop (other cases go on); the lock keeps this case's other calls from
                # changing the environment while the thread reads it.
                result = await asyncio.to_thread(run_tool, tool_map, env, call, watch=watch, fmt=self.fmt)
            else:
                result = run_tool(tool_map, env, call, watch=watch, fmt=self.fmt)
        if call.function not in tool_map and any(t.name == call.function for t in self.tools):
            # The tool exists but the defense did not offer it (select_tools): the defense stopped the call.
            result.blocked_by = d.name
        with d.timed():
            return await d.on_tool_result(call, result)

    def record(self, trace: Trace, message: Message) -> None:
        """Append `message`, carrying the notes the defense made since the last message."""
        notes = [*self._pending, *self.defense.take_notes()]
        self._pending = []
        if notes:
            message.annotations = [*notes, *message.annotations]
        trace.messages.append(message)
