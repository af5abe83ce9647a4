"""The agent under test, as the runner sees it: something that builds, for one case, an object whose
`run(env, prompt, watch=..., trace=...)` fills the case's trace. The built-in `ToolAgent` (driven by
`--model`) is one; a user's Python callable and an MCP client process are others
(`agents/external/`). The runner, the store, the report and the viewer treat them all alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from randori.vocabulary import Trace

if TYPE_CHECKING:
    from randori.agents.defenses.base import Defense
    from randori.agents.loop import ToolSource
    from randori.agents.models.base import ChatModel
    from randori.tools.function import Tool

BUILTIN_NAME = "builtin"


class CaseAgent(Protocol):
    async def run(self, env: Any, prompt: str, *, watch: Mapping[str, str] | None = None,
                  trace: Trace | None = None) -> Trace: ...


class AgentSpec:
    """The built-in agent: `ToolAgent` with the defense's hooks (or the agent a defense brings)."""

    name = BUILTIN_NAME
    version: str | None = None
    external = False
    max_tool_calls: int | None = None  # the built-in loop's cap on tool calls per reply (None: its default)

    @classmethod
    def capped(cls, max_tool_calls: int | None) -> AgentSpec:
        """The built-in agent running at most `max_tool_calls` tool calls per reply (None: the default)."""
        if max_tool_calls is None:
            return BUILTIN
        spec = cls()
        spec.max_tool_calls = max_tool_calls
        return spec

    @property
    def label(self) -> str:
        """How results name this agent in place of a model: `NAME` or `NAME@VERSION`."""
        return f"{self.name}@{self.version}" if self.version else self.name

    def build(self, model: ChatModel | None, tools: list[Tool], system_prompt: str, defense: Defense, *,
              max_steps: int, tool_source: ToolSource | None = None) -> CaseAgent:
        """`tool_source`: the case's tool descriptions when an attack writes into them (they may
        change during the case: a rug pull)."""
        from randori.agents.loop import MAX_TOOL_CALLS, ToolAgent

        assert model is not None, "the built-in agent needs a model"
        return defense.agent(ToolAgent(model, tools, system_prompt, defense, max_steps=max_steps,
                                       tool_source=tool_source, max_tool_calls=self.max_tool_calls or MAX_TOOL_CALLS))


    def isolation(self) -> dict[str, Any]:
        """How the agent is kept from its verdict, as the run records it (nothing to say for the built-in one)."""
        return {}

    async def aclose(self) -> None:
        """The run is over: end what the agent kept between cases (an MCP agent's reused processes)."""


BUILTIN = AgentSpec()
