"""Built-in suites. Each is a package exposing `suite`; third-party suites register through the
`randori.suites` entry point group."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from randori.errors import UserError
from randori.tasks.suite import TaskSuite

BUILTIN: dict[str, str] = {
    "banking": "randori.suites.banking:suite",
}


def _table() -> dict[str, str]:
    table = dict(BUILTIN)
    for ep in entry_points(group="randori.suites"):
        table.setdefault(ep.name, ep.value)
    return table


def suite_names() -> list[str]:
    return sorted(_table())


def get_suite(name: str) -> TaskSuite[Any]:
    table = _table()
    if name not in table:
        raise UserError(f"unknown suite '{name}' (known: {', '.join(sorted(table))})")
    module_name, _, attr = table[name].partition(":")
    return getattr(importlib.import_module(module_name), attr)  # type: ignore[no-any-return]
