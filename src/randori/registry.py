"""Name -> "module:attribute" tables extended by entry points: one mechanism for suites, models,
attacks and defenses, so third-party packages plug in without a fork.

A plugin that cannot be loaded (any exception on import, or an object of the wrong kind) is a
one-line `UserError` naming it and its error; listings skip it with a warning, so one broken
plugin never takes the others down."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any

from randori.errors import UserError


@functools.cache
def _plugins(group: str) -> tuple[tuple[str, str], ...]:
    # Scanning installed distributions costs milliseconds; do it once per process, not per case.
    return tuple((ep.name, ep.value) for ep in entry_points(group=group))


def describe_exception(e: BaseException) -> str:
    """`ValueError: bad thing` in one line."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


class Registry:
    """`check(obj)` returns what is wrong with a loaded object (None: it is of the right kind)."""

    def __init__(self, kind: str, group: str, builtin: dict[str, str],
                 check: Callable[[Any], str | None] | None = None):
        self.kind = kind
        self.group = group
        self.builtin = builtin  # mutable on purpose: tests and embedders may add entries
        self.check = check

    def table(self) -> dict[str, str]:
        table = dict(self.builtin)
        for name, value in _plugins(self.group):
            table.setdefault(name, value)
        return table

    def names(self) -> list[str]:
        return sorted(self.table())

    def load(self, name: str) -> Any:
        """The object registered under `name`; a UserError naming the known ones otherwise, or naming
        the plugin and its error when it cannot be loaded."""
        table = self.table()
        if name not in table:
            raise UserError(f"unknown {self.kind} '{name}' (known: {', '.join(sorted(table))})")
        try:
            obj = _import(table[name])
        except Exception as e:  # a plugin may raise anything on import; say which, don't crash
            raise UserError(f"{self.kind} '{name}' cannot be loaded from {table[name]}: "
                            f"{describe_exception(e)}") from None
        problem = self.check(obj) if self.check is not None else None
        if problem:
            raise UserError(f"{self.kind} '{name}' from {table[name]} {problem}")
        return obj


def each_loadable(names: list[str], load: Callable[[str], Any], warn: Callable[[str], None]) -> Iterator[Any]:
    """`load(name)` for each name; one that fails is reported through `warn` and skipped."""
    for name in names:
        try:
            yield load(name)
        except UserError as e:
            warn(str(e))


def start_plugin(what: str, cls: type, params: dict[str, Any]) -> Any:
    """`cls(**params)`: an exception from a class's own constructor (a plugin's) is one line naming it."""
    try:
        return cls(**params) if params else cls()
    except UserError:
        raise
    except Exception as e:
        raise UserError(f"{what} failed to start: {describe_exception(e)}") from None


def not_a_subclass(base: type, what: str) -> Callable[[Any], str | None]:
    def check(obj: Any) -> str | None:
        if isinstance(obj, type) and issubclass(obj, base):
            return None
        return f"is not {what} (it is {_kind_of(obj)})"
    return check


def _kind_of(obj: Any) -> str:
    return f"the class {obj.__name__}" if isinstance(obj, type) else f"a {type(obj).__name__}"


@functools.cache
def _import(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj
