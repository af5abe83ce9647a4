"""`ToolAgent`: the model <-> tools loop with defense hooks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from randori.agents.defenses.base import Defense, DefenseAbort
from randori.agents.messages import Message, Trace
from randori.agents.models.base import ChatModel
from randori.tools.function import Tool
from randori.tools.runtime import run_tool


class ToolAgent:
    def __init__(self, model: ChatModel, tools: list[Tool], system_prompt: str,
                 defense: Defense | None = None, *, max_steps: int = 20, fmt: str = "yaml"):
        self.model = model
        self.tools = tools
        self.system_prompt = system_prompt
        self.defense = defense or Defense()
        self.max_steps = max_steps
        self.fmt = fmt

    async def run(self, env: Any, prompt: str, *, watch: Mapping[str, str] | None = None,
                  trace: Trace | None = None) -> Trace:
        """Run until the model answers without tool calls, a defense aborts, or `max_steps`.
        Model errors propagate (the runner records them); tool errors go back to the model."""
        d = self.defense
        trace = trace if trace is not None else Trace()
        trace.messages += [Message.system(d.system_prompt(self.system_prompt)), Message.user(prompt)]
        tools = await d.select_tools(prompt, self.tools, self.model)
        tool_map = {t.name: t for t in tools}
        try:
            for _ in range(self.max_steps):
                reply = await self.model.complete(d.before_model(trace.messages), tools)
                trace.messages.append(reply)
                if not reply.tool_calls:
                    return trace
                for call in reply.tool_calls:
                    result = run_tool(tool_map, env, call, watch=watch, fmt=self.fmt)
                    result = await d.on_tool_result(call, result)
                    trace.messages.append(Message.tool(result))
            trace.messages.append(Message(role="assistant", content="",
                                          annotations=[f"stopped after {self.max_steps} steps"]))
        except DefenseAbort as e:
            trace.messages.append(Message(role="assistant", content="",
                                          annotations=[f"aborted by defense {d.name}: {e}"]))
        return trace
