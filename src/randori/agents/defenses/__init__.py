"""Defenses: one `Defense` interface, a registry, and third-party ones through the
`randori.defenses` entry point group."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from randori.agents.defenses.base import Defense, DefenseAbort
from randori.errors import UserError

# name -> "module:Class" (imported lazily)
DEFENSES: dict[str, str] = {
    "none": "randori.agents.defenses.base:Defense",
}


def _table() -> dict[str, str]:
    table = dict(DEFENSES)
    for ep in entry_points(group="randori.defenses"):
        table.setdefault(ep.name, ep.value)
    return table


def defense_names() -> list[str]:
    return sorted(_table())


def get_defense(name: str) -> Defense:
    table = _table()
    if name not in table:
        raise UserError(f"unknown defense '{name}' (known: {', '.join(sorted(table))})")
    module_name, _, cls_name = table[name].partition(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    d = cls()
    d.name = name
    return d  # type: ignore[no-any-return]


__all__ = ["DEFENSES", "Defense", "DefenseAbort", "defense_names", "get_defense"]
