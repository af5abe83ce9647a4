"""Attacks: what text goes into the injection vectors. Registry + `randori.attacks` entry points."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from randori.attacks.base import Attack, AttackContext, model_display_name
from randori.errors import UserError

ATTACKS: dict[str, str] = {
    "important_instructions": "randori.attacks.templates:ImportantInstructions",
    "direct": "randori.attacks.templates:Direct",
}


def _table() -> dict[str, str]:
    table = dict(ATTACKS)
    for ep in entry_points(group="randori.attacks"):
        table.setdefault(ep.name, ep.value)
    return table


def attack_names() -> list[str]:
    return sorted(_table())


def get_attack(name: str) -> Attack:
    table = _table()
    if name not in table:
        raise UserError(f"unknown attack '{name}' (known: {', '.join(sorted(table))})")
    module_name, _, cls_name = table[name].partition(":")
    attack = getattr(importlib.import_module(module_name), cls_name)()
    attack.name = name
    return attack  # type: ignore[no-any-return]


__all__ = ["ATTACKS", "Attack", "AttackContext", "attack_names", "get_attack", "model_display_name"]
