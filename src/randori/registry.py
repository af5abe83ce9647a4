"""Name -> "module:attribute" tables extended by entry points: one mechanism for suites, models,
attacks and defenses, so third-party packages plug in without a fork.

A plugin that cannot be loaded (any exception on import, or an object of the wrong kind) is a
one-line `UserError` naming it and its error; listings skip it with a warning, so one broken
plugin never takes the others down.

Attacks and defenses are named `NAME[key=value,...]`: `parse_spec`, `format_spec` and
`coerce_params` read and write those specs."""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator
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


def raised_at(e: BaseException) -> str | None:
    """`file:line` where `e` was raised: the innermost frame outside Python's own library (the
    plugin's line that called json, not json's), the file relative to the current folder when in it."""
    import os
    import sysconfig
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return None
    stdlib = tuple(p for p in {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")} if p)
    frame = next((f for f in reversed(frames) if not f.filename.startswith(stdlib)), frames[-1])
    name = frame.filename
    if os.path.isabs(name) and name.startswith(os.getcwd() + os.sep):
        name = os.path.relpath(name)
    return f"{name}:{frame.lineno}"


def describe_failure(e: BaseException) -> str:
    """`ValueError: bad thing (at plugin.py:12)` in one line: an exception in someone's code, and where."""
    where = raised_at(e)
    return f"{describe_exception(e)} (at {where})" if where else describe_exception(e)


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
            raise unknown(self.kind, name, table)
        try:
            obj = _quietly_import(self.kind, name, table[name])
        except Exception as e:  # a plugin may raise anything on import; say which, don't crash
            raise UserError(f"{self.kind} '{name}' cannot be loaded from {table[name]}: "
                            f"{describe_exception(e)}") from None
        problem = self.check(obj) if self.check is not None else None
        if problem:
            raise UserError(f"{self.kind} '{name}' from {table[name]} {problem}")
        return obj


def unknown(kind: str, name: str, known: Iterable[str]) -> UserError:
    """The error for a name the user mistyped: the closest known names first, then all of them."""
    import difflib

    names = sorted(known)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    return UserError(f"unknown {kind} '{name}' ({hint}known: {', '.join(names)})")


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


def _quietly_import(kind: str, name: str, spec: str) -> Any:
    """`_import(spec)` with what the import prints to stdout held back: stdout is randori's output
    (a JSON or CSV report); what a plugin said goes to stderr as one warning line."""
    held = io.StringIO()
    with contextlib.redirect_stdout(held):
        obj = _import(spec)
    said = " ".join(held.getvalue().split())
    if said:
        print(f"randori: warning: {kind} '{name}' printed while loading: {said[:200]}", file=sys.stderr)
    return obj


@functools.cache
def _import(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


# -- specs ------------------------------------------------------------------------------------------
_SPEC = re.compile(r"^\s*([A-Za-z0-9_.\-]+(?::[A-Za-z0-9_.\-]+)?)\s*(?:\[(.*)\])?\s*$")  # agentdojo:NAME too


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """'adaptive[attacker=openai/gpt-4o,budget=5,trace]' -> ('adaptive', {...}); a bare key means true."""
    m = _SPEC.match(spec)
    if not m:
        raise UserError(f"cannot read '{spec}': expected NAME or NAME[key=value,...]")
    params: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (m.group(2) or "").split(","))):
        key, sep, value = part.partition("=")
        if not key.strip():
            raise UserError(f"cannot read '{spec}': empty parameter name")
        params[key.strip()] = value.strip() if sep else "true"
    return m.group(1), params


def format_spec(name: str, params: dict[str, Any]) -> str:
    if not params:
        return name
    parts = []
    for k in sorted(params):
        v = params[k]
        parts.append(k if v is True else f"{k}={str(v).lower() if isinstance(v, bool) else v}")
    return f"{name}[{','.join(parts)}]"


def coerce_params(what: str, raw: dict[str, str], accepted: dict[str, type]) -> dict[str, Any]:
    """String parameters from a spec -> typed values, refusing unknown names with a clear error."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in accepted:
            known = ", ".join(sorted(accepted)) or "none"
            raise UserError(f"{what} has no parameter '{key}' (parameters: {known})")
        typ = accepted[key]
        try:
            if typ is bool:
                if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                out[key] = value.lower() in ("true", "1", "yes")
            else:
                out[key] = typ(value)
                if typ is float and not math.isfinite(out[key]):
                    raise ValueError(value)
        except ValueError:
            raise UserError(f"{what}: parameter '{key}' must be {typ.__name__}, got '{value}'") from None
    return out
