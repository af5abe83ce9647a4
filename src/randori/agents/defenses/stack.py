"""Stacked defenses (`--defense tool_filter+detector`): every member's hooks run, in the order given.
At most one member may bring its own agent (plan_then_execute); the others' hooks run inside it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from randori.agents.defenses.base import DETECTION_KEYS, Defense, LoopAgent
from randori.errors import UserError
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, ToolResult, Usage

if TYPE_CHECKING:
    from randori.agents.models.base import CaseContext, ChatModel


def changes_agent(d: Defense) -> bool:
    return type(d).agent is not Defense.agent


class Stack(Defense):
    description = "Several defenses at once."

    def __init__(self, members: list[Defense]) -> None:
        super().__init__()
        if sum(changes_agent(m) for m in members) > 1:
            raise UserError("at most one stacked defense may replace the agent ("
                            + ", ".join(m.name for m in members if changes_agent(m)) + " both do)")
        self.members = members
        self.name = "+".join(m.name for m in members)

    def begin(self, ctx: CaseContext) -> None:
        for m in self.members:
            m.begin(ctx)

    def system_prompt(self, text: str) -> str:
        for m in self.members:
            text = m.system_prompt(text)
        return text

    async def select_tools(self, task: str, tools: list[Tool], model: ChatModel) -> list[Tool]:
        for m in self.members:
            tools = await m.select_tools(task, tools, model)
        return tools

    def before_model(self, messages: list[Message]) -> list[Message]:
        for m in self.members:
            messages = m.before_model(messages)
        return messages

    async def check_call(self, call: ToolCall) -> str | None:
        for m in self.members:
            reason = await m.check_call(call)
            if reason:
                return reason
        return None

    async def on_tool_result(self, call: ToolCall, result: ToolResult) -> ToolResult:
        for m in self.members:
            result = await m.on_tool_result(call, result)
        return result

    def agent(self, base: LoopAgent) -> LoopAgent:
        for m in self.members:
            if changes_agent(m):
                return m.agent(base)  # `base.defense` is this stack, so every member's hooks still run
        return base

    def take_notes(self) -> list[str]:
        return [*super().take_notes(), *(n for m in self.members for n in m.take_notes())]

    def total_usage(self) -> Usage:
        total = self.usage
        for m in self.members:
            total = total + m.total_usage()
        return total

    def detections(self) -> dict[str, int] | None:
        found = [d for d in (m.detections() for m in self.members) if d is not None]
        if not found:
            return None
        return {k: sum(d.get(k, 0) for d in found) for k in DETECTION_KEYS}

    def approvals(self) -> dict[str, int] | None:
        found = [a for a in (m.approvals() for m in self.members) if a is not None]
        if not found:
            return None
        return {k: sum(a.get(k, 0) for a in found) for k in ("asked", "refused")}

    def fresh(self) -> Stack:
        return Stack([m.fresh() for m in self.members])
