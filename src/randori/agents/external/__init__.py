"""Agents randori does not drive: a Python callable (`python.py`) or an MCP client process
(`mcp.py`). `get_agent` reads an `--agent` spec; `check_defense` says which defenses can guard them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from randori.agents.agent import BUILTIN, BUILTIN_NAME, AgentSpec
from randori.errors import UserError

if TYPE_CHECKING:
    from randori.agents.defenses.base import Defense

DEFAULT_LIMIT = 600.0  # seconds one case of an external agent may take


def get_agent(spec: str, version: str | None = None, limit: float = DEFAULT_LIMIT, *, in_process: bool = False,
              reuse: int | None = None, network: str = "open", binds: Sequence[str] = (),
              hidden: Sequence[str] = ()) -> AgentSpec:
    """`builtin`, `mcp:COMMAND ARGS...`, `MODULE:CALLABLE`, or the name of a `randori.agents` entry point.
    `in_process`: a Python agent runs in randori's process; `reuse`: cases one agent process serves;
    `network` ("open" or "none"), `binds` (more folders it may read) and `hidden` (the results store)
    shape its container."""
    spec = spec.strip()
    version = version.strip() if version else None
    agent = _make(spec, version, limit, in_process=in_process, reuse=reuse, network=network, binds=binds, hidden=hidden)
    if agent.external:  # how another process (an executor's worker) builds the same agent again
        options = {"in_process": in_process, "reuse": reuse, "network": network, "binds": list(binds),
                   "hidden": list(hidden)}
        agent.made_with = (spec, version, limit, options)  # type: ignore[attr-defined]
    return agent


def _make(spec: str, version: str | None, limit: float, *, in_process: bool, reuse: int | None, network: str,
          binds: Sequence[str], hidden: Sequence[str]) -> AgentSpec:
    if spec in ("", BUILTIN_NAME):
        if version:
            raise UserError("--agent-version names a version of an external agent; the built-in agent is "
                            "named by --model")
        return BUILTIN
    options = {"network": network, "binds": binds, "hidden": hidden}
    if spec.startswith("mcp:"):
        from randori.agents.external.mcp_agent import McpAgent

        if in_process:
            raise UserError("--agent-in-process is for a Python agent; an MCP agent is a process of its own")
        return McpAgent(spec[len("mcp:"):], version, limit, reuse=reuse or 1, **options)
    from randori.agents.external.python import REGISTRY, InProcessAgent, PythonAgent

    if ":" not in spec and spec not in REGISTRY.table():
        known = ", ".join(REGISTRY.names()) or "none installed"
        raise UserError(f"unknown agent '{spec}': use builtin, MODULE:CALLABLE, \"mcp:COMMAND ARGS...\" or the name "
                        f"of a randori.agents entry point ({known})")
    if in_process:
        if reuse or network != "open" or binds:
            raise UserError("--agent-in-process runs the agent in randori's own process: --agent-reuse, "
                            "--agent-network and --agent-bind shape an agent's container, and it has none")
        return InProcessAgent(spec, version, limit)
    return PythonAgent(spec, version, limit, reuse=reuse, **options)


# Hooks that need randori to drive the model, which an external agent does itself.
_MODEL_HOOKS = {
    "agent": "it replaces the agent's loop",
    "before_model": "it rewrites what the model reads on each turn",
    "select_tools": "it chooses the tools the agent's model is offered",
}
_BOUNDARY_HOOKS = ("check_call", "on_tool_result")


def _overrides(d: Defense, hook: str) -> bool:
    from randori.agents.defenses.base import Defense

    return getattr(type(d), hook) is not getattr(Defense, hook)


def _members(defense: Defense) -> list[Defense]:
    from randori.agents.defenses.stack import Stack

    return list(defense.members) if isinstance(defense, Stack) else [defense]


def external_refusal(defense: Defense) -> str | None:
    """Why `defense` cannot guard an external agent (it would need to drive the agent's model), or
    None when it can. Defenses at the tool boundary (a call check, rewriting tool output) apply
    unchanged; their system-prompt text reaches the agent as its instructions."""
    for d in _members(defense):
        allowed = type(d).external_agents
        reason = None
        if allowed is None:
            reason = next((why for hook, why in _MODEL_HOOKS.items() if _overrides(d, hook)), None)
            if reason is None and _overrides(d, "system_prompt") and not any(_overrides(d, h) for h in _BOUNDARY_HOOKS):
                reason = "it only changes the system prompt, which an external agent writes itself"
        elif not allowed:
            reason = "it says it cannot guard an agent randori does not drive"
        if reason:
            return f"{d.name}: {reason}"
    return None


def check_defense(defense: Defense, agent: str) -> None:
    """A UserError when `defense` cannot guard an external agent (see `external_refusal`)."""
    refusal = external_refusal(defense)
    if refusal:
        name, reason = refusal.split(": ", 1)
        raise UserError(f"defense {name} cannot guard the external agent {agent}: {reason} (tool-boundary "
                        "defenses work: detector, delimiters, datamark, encode, policy, confirm)")


def asks_model(defense: Defense) -> bool:
    """Whether `defense` asks a model a question before the agent starts (policy's allow-list)."""
    return any(_overrides(d, "select_tools") for d in _members(defense))
