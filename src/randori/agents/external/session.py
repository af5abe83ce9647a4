"""An external agent's case: what it is given (`AgentCase`) and the agent that runs it for the runner
(`ExternalAgent`). Every tool call goes through the built-in agent's own path (the defense's call
check, the tool runtime and its rendering, the defense's output hooks) and is recorded in the trace
as the built-in agent's calls are, so injection, `injection_seen`, the checks and the viewer cannot
tell the routes apart."""

from __future__ import annotations

import asyncio
import json
import traceback
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from randori.agents.agent import AgentSpec
from randori.agents.defenses.base import Defense, DefenseAbort
from randori.agents.loop import ToolAgent, ToolSource
from randori.errors import AgentFailure
from randori.registry import describe_exception
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, Trace, Usage

if TYPE_CHECKING:
    from randori.agents.models.base import ChatModel


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a model is shown it: name, description and the JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


class CaseStopped(Exception):
    """Raised into an agent's tool call when the case is over (a defense aborted it, or its time ran out)."""


# name, arguments -> (what the model would read, whether the tool failed)
Invoke = Callable[[str, Any], Awaitable[tuple[str, bool]]]


class AgentCase:
    """One case, as an external agent gets it.

    - `prompt`: the user's request;
    - `instructions`: the system prompt the built-in agent would run with (who the user is, and what
      a defense such as `delimiters` tells the model); use it as, or in, your agent's own;
    - `tools`: the tools (`ToolSpec`: name, description, JSON schema) as they are when the case starts;
    - `current_tools()`: the tools as they are now. Under a rug pull a description changes after the
      agent's first tool call, so this differs from `tools` from then on: ask it before every model
      turn, as the built-in agent does. What it returns counts as shown to the agent (the trace notes
      injected descriptions and the change);
    - `on_tools_changed(callback)`: `await callback()` runs after a tool call that changed the list,
      before that call returns (the MCP route sends `notifications/tools/list_changed` from it);
    - `await call(name, arguments)`: run a tool in the case's environment; returns exactly the text a
      model reads (tool errors too, as `Error: ...`). `arguments` is a dict or a JSON object string;
    - `add_usage(input_tokens, output_tokens, ...)`: what the agent's own model calls used, so that the
      report can show its tokens and, with a price for the agent, its cost (randori cannot see those
      calls). Call it once per model call, or once with the totals and `calls=N`."""

    def __init__(self, prompt: str, instructions: str, tools: list[ToolSpec], invoke: Invoke,
                 timeout: float | None, current: Callable[[], list[ToolSpec]] | None = None):
        self.prompt = prompt
        self.instructions = instructions
        self.tools = tools
        self.timeout = timeout  # seconds the agent has for this case (None: no limit)
        self._invoke = invoke
        self._current = current
        self._listeners: list[Callable[[], Awaitable[None]]] = []
        self.usage = Usage()  # what the agent reported with add_usage

    def add_usage(self, input_tokens: int, output_tokens: int, *, cached_input_tokens: int = 0,
                  cache_write_tokens: int = 0, calls: int = 1) -> None:
        """Count model calls the agent made: `input_tokens` counts every input token, of which
        `cached_input_tokens` were read from the provider's prompt cache and `cache_write_tokens`
        written to it. A ValueError for a count that is not a whole number >= 0."""
        self.usage = self.usage + usage_of({"input_tokens": input_tokens, "output_tokens": output_tokens,
                                            "cached_input_tokens": cached_input_tokens,
                                            "cache_write_tokens": cache_write_tokens, "calls": calls})

    def current_tools(self) -> list[ToolSpec]:
        return self._current() if self._current is not None else self.tools

    def on_tools_changed(self, callback: Callable[[], Awaitable[None]]) -> None:
        self._listeners.append(callback)

    async def _tell_listeners(self) -> bool:
        """Run every `on_tools_changed` callback; whether there was any."""
        for callback in list(self._listeners):
            await callback()
        return bool(self._listeners)

    async def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> str:
        text, _ = await self._invoke(name, arguments)
        return text

    async def call_result(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> tuple[str, bool]:
        """Like `call`, and whether the tool failed (MCP's `isError`)."""
        return await self._invoke(name, arguments)


CLEANUP_WAIT = 30.0  # seconds an agent stopped by its time limit or a defense has to clean up

USAGE_FIELDS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens", "calls")


def usage_of(counts: Mapping[str, Any]) -> Usage:
    """A `Usage` from an agent's report ({input_tokens, output_tokens[, cached_input_tokens,
    cache_write_tokens, calls]}; `calls` defaults to 1). ValueError says what is wrong."""
    unknown = sorted(set(counts) - set(USAGE_FIELDS))
    if unknown:
        raise ValueError(f"unknown usage field {unknown[0]!r} (known: {', '.join(USAGE_FIELDS)})")
    for need in USAGE_FIELDS[:2]:
        if need not in counts:
            raise ValueError(f"usage needs {need}")
    values = {"calls": 1, **counts}
    for k, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"usage {k} must be a whole number >= 0, not {v!r}")
    if values.get("cached_input_tokens", 0) + values.get("cache_write_tokens", 0) > values["input_tokens"]:
        raise ValueError("usage cached_input_tokens and cache_write_tokens are parts of input_tokens: "
                         "together they cannot exceed it")
    return Usage(model_calls=values["calls"], input_tokens=values["input_tokens"],
                 output_tokens=values["output_tokens"], cached_input_tokens=values.get("cached_input_tokens", 0),
                 cache_write_tokens=values.get("cache_write_tokens", 0))


class Driver(ABC):
    """What differs between routes: how the agent is given the case and how its answer comes back."""

    @abstractmethod
    async def run(self, case: AgentCase) -> Any:
        """The agent's final answer. Cancelled when the case is over; must then stop the agent."""

    async def prepare(self) -> None:  # noqa: B027 (most drivers have nothing to prepare)
        """Before the case's time starts: get the agent ready (a Python agent's worker imports it)."""


class ExternalSpec(AgentSpec, ABC):
    """An agent randori does not drive. `limit`: seconds one case may take (wall clock; None: no limit)."""

    external = True

    def __init__(self, name: str, version: str | None, limit: float | None):
        self.name = name
        self.version = version
        self.limit = limit

    @abstractmethod
    def driver(self) -> Driver: ...

    def build(self, model: ChatModel | None, tools: list[Tool], system_prompt: str, defense: Defense, *,
              max_steps: int, tool_source: ToolSource | None = None) -> ExternalAgent:
        return ExternalAgent(self.driver(), model, tools, system_prompt, defense, limit=self.limit,
                             tool_source=tool_source)


def parse_arguments(arguments: Mapping[str, Any] | str | None) -> tuple[dict[str, Any], str | None]:
    """Arguments as a dict, and what is wrong with them (the tool then answers with that error)."""
    if arguments is None:
        return {}, None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as e:
            return {}, f"not valid JSON ({e.msg} at character {e.pos})"
    if not isinstance(arguments, Mapping):
        return {}, f"expected a JSON object, got {type(arguments).__name__}"
    # A Python agent may pass anything: what JSON cannot carry, or nests deeper than the trace can be
    # stored, would fail the run's store rather than the tool call.
    if _depth(arguments) > MAX_DEPTH:
        return {}, f"nested more than {MAX_DEPTH} levels deep"
    try:
        json.dumps(arguments)
    except (TypeError, ValueError) as e:
        return {}, f"not a JSON object ({type(e).__name__}: {str(e)[:200]})"
    return dict(arguments), None


MAX_DEPTH = 64  # levels of nesting a call's arguments may have


def _depth(value: Any) -> int:
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        deepest = max(deepest, d)
        if d <= MAX_DEPTH:
            todo.extend((x, d + 1) for x in (v.values() if isinstance(v, Mapping) else v
                                             if isinstance(v, (list, tuple)) else ()))
    return deepest


class ExternalAgent(ToolAgent):
    """Runs one case through a `Driver`. `model` is only for defenses that ask a question before the
    agent starts (policy); the agent's own model is its business."""

    def __init__(self, driver: Driver, model: ChatModel | None, tools: list[Tool], system_prompt: str,
                 defense: Defense, *, limit: float | None, tool_source: ToolSource | None = None):
        super().__init__(model, tools, system_prompt, defense, tool_source=tool_source)  # type: ignore[arg-type]
        self.driver = driver
        self.limit = limit
        self.calls = 0
        self.over = False
        self.stopped = asyncio.Event()

    async def run(self, env: Any, prompt: str, *, watch: Mapping[str, str] | None = None,
                  trace: Trace | None = None) -> Trace:
        trace = trace if trace is not None else Trace()
        await self.start(trace, prompt)
        tool_map = {t.name: t for t in self.active_tools}

        async def invoke(name: str, arguments: Any) -> tuple[str, bool]:
            return await self.invoke(env, trace, tool_map, watch, name, arguments, case=case)

        def current() -> list[ToolSpec]:
            return [ToolSpec(t.name, t.description, t.parameters) for t in self.current(trace, self.active_tools)]

        case = AgentCase(prompt, trace.messages[0].content, current(), invoke, self.limit, current)
        try:
            await self.driver.prepare()
            answer = await self.drive(case)
        except AgentFailure as e:
            if case.usage != Usage():  # spent before it failed: the case's cost keeps it
                e.usage = case.usage if e.usage is None else e.usage + case.usage
            raise
        if answer is not None:
            self.record(trace, Message.assistant(answer))
        if case.usage != Usage():
            # The agent's own model calls, as it reported them: on its last message, so the trace's
            # usage (and so the case's tokens and cost) counts them once.
            last = next((m for m in reversed(trace.messages) if m.role == "assistant"), None)
            if last is not None:  # None only for an agent stopped before it said or called anything
                last.usage = case.usage
        return trace

    async def drive(self, case: AgentCase) -> str | None:
        """The agent's answer; None when a defense stopped the case. Raises AgentFailure."""
        work = asyncio.create_task(self.driver.run(case))
        stop = asyncio.create_task(self.stopped.wait())
        try:
            done, _ = await asyncio.wait({work, stop}, timeout=self.limit, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.over = True  # from here on, no call may change the environment the checks will read
            for t in (work, stop):
                t.cancel()
            # The agent's cleanup (its process group, the case's server) is bounded: one that hangs
            # is left behind rather than holding the run.
            await asyncio.wait({work, stop}, timeout=CLEANUP_WAIT)
            for t in (work, stop):
                if t.done() and not t.cancelled():
                    t.exception()  # retrieved: a failure during cleanup is not news
        if self.stopped.is_set():
            return None
        if work not in done:
            raise AgentFailure("agent_timeout", f"the agent gave no answer within {self.limit:g} s "
                                                "(--agent-timeout); it was stopped")
        if work.cancelled():
            raise AgentFailure("agent_crash", "the agent was cancelled")
        error = work.exception()
        if isinstance(error, AgentFailure):
            raise error
        if error is not None:
            where = "".join(traceback.format_exception(type(error), error, error.__traceback__, limit=-4))
            raise AgentFailure("agent_crash", f"the agent raised {describe_exception(error)}\n{where[-1500:]}")
        answer = work.result()
        if not isinstance(answer, str):
            raise AgentFailure("agent_crash", f"the agent returned {type(answer).__name__}, not the final answer "
                                              "as a str")
        if not answer.strip():  # not an answer to score
            raise AgentFailure("agent_no_answer", "the agent finished without an answer (an empty one)")
        return answer

    async def invoke(self, env: Any, trace: Trace, tool_map: Mapping[str, Tool], watch: Mapping[str, str] | None,
                     name: str, arguments: Any, *, case: AgentCase | None = None) -> tuple[str, bool]:
        if self.over or self.stopped.is_set():
            raise CaseStopped("randori: this case is over; no more tool calls are run")
        args, problem = parse_arguments(arguments)
        self.calls += 1
        call = ToolCall(function=str(name), args=args, id=f"call_{self.calls}", parse_error=problem)
        self.record(trace, Message.assistant(tool_calls=[call]))
        # Asked before `execute` counts the call, with no await in between: concurrent calls cannot
        # both miss the one count at which the list changes.
        count = self.calls_made + 1
        changes = self.tool_source is not None and self.tool_source.changes_at(count)
        try:
            result = await self.execute(env, call, tool_map, watch)
        except DefenseAbort as e:
            self.record(trace, Message(role="assistant", content="",
                                       annotations=[f"aborted by defense {self.defense.name}: {e}"]))
            self.stopped.set()
            raise CaseStopped(f"randori: the case was stopped by a defense ({e})") from None
        message = Message.tool(result)
        self.record(trace, message)
        if changes and case is not None and await case._tell_listeners():
            self._pending.append(f"the agent was told the tool list changed after {count} tool call(s)")
        return message.content, result.error is not None
