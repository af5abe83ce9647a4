"""The defense interface: optional hooks on one object. The base class is the `none` defense.

Hooks, in the order the agent loop calls them:
- `begin(ctx)`: the harness tells the defense of the case before the agent runs (its suite, the live
  environment, the user task). Only a defense that simulates the user may read it (confirm's
  approver, who knows what they asked for); nothing of it may reach a model;
- `system_prompt(text)`: rewrite the system prompt;
- `select_tools(task, tools, model)`: runs before any data is seen (may ask the model a structured
  question: tool_filter, policy);
- `before_model(messages)`: what the model is shown on each turn (the stored trace is not changed);
- `check_call(call)`: return a reason to block a tool call (it then fails with that reason);
- `on_tool_result(call, result)`: rewrite, redact, or raise `DefenseAbort`;
- `agent(base)`: defenses that change the agent's architecture return their own agent.

Cost: model calls a defense makes itself are added to `usage`; the agent adds the wall time spent
inside hooks to `time_s`. Both are stored per case (`defense_*` columns).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, ToolResult, Trace, Usage

if TYPE_CHECKING:
    from randori.agents.models.base import CaseContext, ChatModel
    from randori.tasks.suite import TaskSuite
    from randori.tasks.task import InjectionTask, UserTask


# What a detector-type defense counts per case: tool outputs by whether they held injected text
# (the runtime's finding, not the defense's) and whether the defense flagged them.
DETECTION_KEYS = ("injected_flagged", "injected_passed", "benign_flagged", "benign_passed")


def detection_key(held_injection: bool, flagged: bool) -> str:
    return f"{'injected' if held_injection else 'benign'}_{'flagged' if flagged else 'passed'}"


class LoopAgent(Protocol):
    """What the `agent` hook receives and returns: the built-in loop (`randori.agents.loop.ToolAgent`,
    which drives these hooks, so this module names it by its shape rather than importing it) or an
    agent a defense builds from it."""

    model: ChatModel
    tools: list[Tool]
    system_prompt: str
    defense: Defense
    max_steps: int
    max_tool_calls: int
    fmt: str

    async def run(self, env: Any, prompt: str, *, watch: Mapping[str, str] | None = None,
                  trace: Trace | None = None) -> Trace: ...


class DefenseAbort(Exception):
    """Raised by a hook to stop the agent; the case is scored as it stands, not counted as an error."""


class Defense:
    name = "none"
    description = "No defense."
    # `name[key=value]` parameters this defense accepts, with their types (see get_defense).
    parameters: ClassVar[dict[str, type]] = {}
    # Class-level fallbacks keep a plugin working even if its __init__ skips ours.
    params: dict[str, Any] = {}
    # Whether this defense can guard an agent randori does not drive (an external agent runs its own
    # model loop). None: derived from the hooks the class overrides (see randori.agents.external).
    external_agents: ClassVar[bool | None] = None
    # The kinds of attacker goal this defense is designed to stop (randori.agents.defenses.coverage:
    # "sensitive", "call", "answer"); None: it states none. See `outside_design` for single cases.
    covers: ClassVar[frozenset[str] | None] = None
    usage = Usage()
    time_s = 0.0

    def __init__(self, **params: Any) -> None:
        self.params = params
        # Model calls a defense makes on its own (a filter, a planner, a detector) are its cost.
        self.usage = Usage()
        self.time_s = 0.0

    # -- hooks ----------------------------------------------------------------------------------
    def begin(self, ctx: CaseContext) -> None:
        return None

    def system_prompt(self, text: str) -> str:
        return text

    async def select_tools(self, task: str, tools: list[Tool], model: ChatModel) -> list[Tool]:
        return tools

    def before_model(self, messages: list[Message]) -> list[Message]:
        return messages

    async def check_call(self, call: ToolCall) -> str | None:
        return None

    async def on_tool_result(self, call: ToolCall, result: ToolResult) -> ToolResult:
        return result

    def agent(self, base: LoopAgent) -> LoopAgent:
        """Defenses that change the agent's architecture return their own agent here."""
        return base

    def outside_design(self, suite: TaskSuite[Any], user_task: UserTask, injection_task: InjectionTask) -> str | None:
        """Why this case's goal is outside the design although its kind is covered (None: inside)."""
        return None

    # -- bookkeeping ----------------------------------------------------------------------------
    def note(self, text: str) -> None:
        """Attach a note (what was redacted or blocked, and why) to the next message in the trace."""
        self.__dict__.setdefault("_notes", []).append(f"{self.name}: {text}")

    def take_notes(self) -> list[str]:
        return self.__dict__.pop("_notes", [])

    @contextmanager
    def timed(self) -> Iterator[None]:
        if type(self) is Defense:  # `none`: its hooks return what they are given; timing them would
            yield                  # charge it the machine's load (and make "+0" depend on it)
            return
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.time_s += time.perf_counter() - t0

    def total_usage(self) -> Usage:
        return self.usage

    def detections(self) -> dict[str, int] | None:
        """Detector-type defenses: tool outputs judged this case, by DETECTION_KEYS; None otherwise."""
        return None

    def approvals(self) -> dict[str, int] | None:
        """Defenses that ask the user (confirm): {"asked", "refused"} this case; None for the others."""
        return None

    def fresh(self) -> Defense:
        """A per-case copy, so state and usage never leak between cases."""
        d = type(self)(**self.params) if self.params else type(self)()
        d.name = self.name
        return d
