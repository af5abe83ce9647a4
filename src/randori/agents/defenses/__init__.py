"""Defenses: one `Defense` interface, a registry, and third-party ones through the
`randori.defenses` entry point group.

A defense is named `NAME` or `NAME[key=value,...]` (parameters, e.g. `detector[mode=abort]`);
`A+B` stacks defenses into one. The canonical form is what the store, the report and the case key
use. Several `--defense` options are separate runs, one report row each."""

from __future__ import annotations

import re

from randori.agents.defenses.base import Defense, DefenseAbort
from randori.errors import UserError
from randori.registry import Registry, coerce_params, format_spec, not_a_subclass, parse_spec, start_plugin

_D = "randori.agents.defenses."
# name -> "module:Class" (imported lazily)
DEFENSES: dict[str, str] = {
    "none": _D + "base:Defense",
    "delimiters": _D + "delimiters:Delimiters",
    "datamark": _D + "datamark:Datamark",
    "encode": _D + "encode:Encode",
    "sandwich": _D + "sandwich:Sandwich",
    "tool_filter": _D + "tool_filter:ToolFilter",
    "detector": _D + "detector:Detector",
    "plan_then_execute": _D + "plan_then_execute:PlanThenExecute",
    "policy": _D + "policy:Policy",
    "capabilities": _D + "capabilities:Capabilities",
    "reexecution": _D + "reexecution:Reexecution",
    "memory_gate": _D + "memory_gate:MemoryGate",
    "confirm": _D + "confirm:Confirm",
}


REGISTRY = Registry("defense", "randori.defenses", DEFENSES, not_a_subclass(Defense, "a Defense subclass"))


def defense_names() -> list[str]:
    return REGISTRY.names()


def _split_stack(spec: str) -> list[str]:
    """'a+b[x=1+2]' -> ['a', 'b[x=1+2]']: '+' inside brackets belongs to a parameter."""
    return [p.strip() for p in re.split(r"\+(?![^\[]*\])", spec)]


def get_defense(spec: str) -> Defense:
    parts = _split_stack(spec)
    if not any(parts):
        raise UserError("empty defense name (see `randori defenses list`)")
    if not all(parts):
        raise UserError(f"empty defense in '{spec}': stack defenses as A+B, e.g. tool_filter+detector")
    members: list[Defense] = []
    for part in parts:
        name, raw = parse_spec(part)
        cls = REGISTRY.load(name)
        params = coerce_params(f"defense '{name}'", raw, getattr(cls, "parameters", {}))
        d = start_plugin(f"defense '{name}'", cls, params)
        d.name = format_spec(name, getattr(d, "params", None) or {})
        members.append(d)
    if len(members) == 1:
        return members[0]
    from randori.agents.defenses.stack import Stack

    return Stack(members)


__all__ = ["DEFENSES", "Defense", "DefenseAbort", "defense_names", "get_defense"]
