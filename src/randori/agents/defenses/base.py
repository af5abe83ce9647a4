"""The defense interface: optional hooks on one object. The base class is the `none` defense."""

from __future__ import annotations

from typing import TYPE_CHECKING

from randori.agents.messages import Message, ToolCall, ToolResult, Usage
from randori.tools.function import Tool

if TYPE_CHECKING:
    from randori.agents.loop import ToolAgent
    from randori.agents.models.base import ChatModel


class DefenseAbort(Exception):
    """Raised by a hook to stop the agent; the case is scored as it stands, not counted as an error."""


class Defense:
    name = "none"
    description = "No defense."

    def __init__(self) -> None:
        # Model calls a defense makes on its own (a filter or detector) are its cost.
        self.usage = Usage()

    def system_prompt(self, text: str) -> str:
        return text

    async def select_tools(self, task: str, tools: list[Tool], model: ChatModel) -> list[Tool]:
        return tools

    async def on_tool_result(self, call: ToolCall, result: ToolResult) -> ToolResult:
        return result

    def before_model(self, messages: list[Message]) -> list[Message]:
        return messages

    def agent(self, base: ToolAgent) -> ToolAgent:
        """Defenses that change the agent's architecture return their own agent here."""
        return base

    def fresh(self) -> Defense:
        """A per-case copy, so state and usage never leak between cases."""
        d = type(self)()
        d.name = self.name
        return d
