"""Name -> "module:attribute" tables extended by entry points: one mechanism for suites, models,
attacks and defenses, so third-party packages plug in without a fork."""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import entry_points
from typing import Any

from randori.errors import UserError


@functools.cache
def _plugins(group: str) -> tuple[tuple[str, str], ...]:
    # Scanning installed distributions costs milliseconds; do it once per process, not per case.
    return tuple((ep.name, ep.value) for ep in entry_points(group=group))


class Registry:
    def __init__(self, kind: str, group: str, builtin: dict[str, str]):
        self.kind = kind
        self.group = group
        self.builtin = builtin  # mutable on purpose: tests and embedders may add entries

    def table(self) -> dict[str, str]:
        table = dict(self.builtin)
        for name, value in _plugins(self.group):
            table.setdefault(name, value)
        return table

    def names(self) -> list[str]:
        return sorted(self.table())

    def load(self, name: str) -> Any:
        """The object registered under `name`; a UserError naming the known ones otherwise."""
        table = self.table()
        if name not in table:
            raise UserError(f"unknown {self.kind} '{name}' (known: {', '.join(sorted(table))})")
        try:
            return _import(table[name])
        except (ImportError, AttributeError) as e:  # a broken plugin: say which, don't crash
            raise UserError(f"{self.kind} '{name}' cannot be loaded from {table[name]}: {e}") from None


@functools.cache
def _import(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj
