"""Injection vectors in tool descriptions: text an attacker controls because a tool comes from a third
party (an MCP server, a plugin) whose author writes its description.

A suite declares them in `data/tool_vectors.yaml`: vector id -> {tool, description, default}. The
default is the benign suffix (usually empty: the description as the suite ships it), so a suite that
gains a tool vector shows its tools exactly as before to every case that does not attack it.

`CaseTools` is what one case shows its agent: the suite's tools with the injected suffixes in place,
as they stand after a number of tool calls. A rug pull is a description that changes after the agent
first used the tools (`after` calls); the built-in agent asks `at(calls_made)` before every model
turn, an external agent's `AgentCase.current_tools()` does the same, and one served over MCP is sent
`notifications/tools/list_changed` when `changes_at` says so.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from randori.errors import UserError
from randori.tools.function import Tool


@dataclass(frozen=True)
class ToolVector:
    id: str
    tool: str  # the tool whose description carries the text
    description: str  # who writes it, as vectors.yaml says for data vectors
    default: str  # the benign suffix ("" = the description unchanged)


def read_tool_vectors(suite: str, path: Path, raw: Any, tools: Mapping[str, Tool],
                      data_vectors: Mapping[str, Any]) -> dict[str, ToolVector]:
    """`tool_vectors.yaml` as parsed YAML -> vectors; a malformed entry is one UserError naming it."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise UserError(f"suite {suite}: {path}: expected a mapping of vector id to {{tool, description, default}}, "
                        f"not a {type(raw).__name__}")
    out: dict[str, ToolVector] = {}
    for vid, v in raw.items():
        where = f"suite {suite}: {path}: tool vector '{vid}'"
        if not isinstance(vid, str) or not vid.replace("_", "").isalnum():
            raise UserError(f"{where}: an id may hold only letters, digits and _")
        if vid in data_vectors:
            raise UserError(f"{where}: vectors.yaml already has a data vector of that name")
        if not isinstance(v, dict) or not isinstance(v.get("tool"), str):
            raise UserError(f"{where} names no 'tool' (the tool whose description carries the text)")
        if v["tool"] not in tools:
            raise UserError(f"{where}: the suite has no tool '{v['tool']}'")
        default = v.get("default", "")
        if not isinstance(default, str):
            raise UserError(f"{where}: 'default' must be text, not a {type(default).__name__}")
        out[vid] = ToolVector(vid, v["tool"], str(v.get("description", "")), default)
    return out


def with_suffix(tool: Tool, suffix: str) -> Tool:
    """`tool` with `suffix` after its description. A shallow copy keeps the JSON schema already built."""
    if not suffix:
        return tool
    changed = copy.copy(tool)
    changed.description = f"{tool.description}\n\n{suffix}" if tool.description else suffix
    return changed


class CaseTools:
    """The tools of one case as its agent sees them after `calls_made` tool calls. Injected text of a
    tool vector replaces its default from the start, or, for a rug pull, only once `after` tool calls
    have been made (before that the tool shows its benign description)."""

    def __init__(self, tools: list[Tool], vectors: Mapping[str, ToolVector], injections: Mapping[str, str],
                 after: int = 0) -> None:
        self.after = after
        self.injected = {vid: injections[vid] for vid in vectors if injections.get(vid)}
        self._vectors = dict(vectors)
        self._before = self._build(tools, {})
        self._after = self._build(tools, self.injected)

    def _build(self, tools: list[Tool], texts: Mapping[str, str]) -> list[Tool]:
        suffixes: dict[str, list[str]] = {}
        for vid, v in self._vectors.items():
            text = texts.get(vid, v.default)
            if text:
                suffixes.setdefault(v.tool, []).append(text)
        return [with_suffix(t, "\n\n".join(suffixes.get(t.name, []))) for t in tools]

    def at(self, calls_made: int) -> list[Tool]:
        """The tool list (with descriptions) to show after `calls_made` tool calls."""
        return self._after if calls_made >= self.after else self._before

    def vectors_at(self, calls_made: int) -> dict[str, str]:
        """Tool vectors whose injected text the descriptions hold after `calls_made` tool calls, each
        with its tool's name."""
        if calls_made < self.after:
            return {}
        return {vid: self._vectors[vid].tool for vid in sorted(self.injected)}

    def changes_at(self, calls_made: int) -> bool:
        """True when the list after `calls_made` calls differs from the one just before: the moment an
        MCP server sends `notifications/tools/list_changed`."""
        return bool(self.injected) and calls_made == self.after and self.after > 0
