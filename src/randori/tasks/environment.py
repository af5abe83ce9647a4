"""Environment state, loaded once from YAML, with `{vector_id}` placeholders filled per case.

The YAML is parsed and validated once. Placeholders are located in the parsed data, and each case
gets a deep copy in which only those strings are rewritten with `str.replace`: braces in attack text
or in the data itself can never break loading (AgentDojo formats the raw YAML and does break).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import datetime as dt
import enum
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]+)\}")


class Environment(BaseModel):
    """Base class of every suite's state. Tools mutate it in place."""

    model_config = ConfigDict(validate_assignment=False)


E = TypeVar("E", bound=Environment)
PathPart = str | int


class EnvironmentTemplate(Generic[E]):
    """A parsed environment whose strings may contain placeholders for known vector ids."""

    def __init__(self, env_cls: type[E], data: Any, vector_ids: set[str]):
        self.env_cls = env_cls
        self.vector_ids = vector_ids
        self.base: E = env_cls.model_validate(data)
        self.locations: list[tuple[tuple[PathPart, ...], str]] = []
        self._find(self.base, ())
        # Validating a cached dump (pydantic-core, in Rust) copies a large state ~4x faster than
        # deepcopy. Fields typed Any would be shared with the dump rather than copied; then (and only
        # then) fall back to deepcopy.
        self._data = self.base.model_dump(round_trip=True)
        self._fast = not _shares_containers(env_cls.model_validate(self._data), self._data)
        unknown = {m for _, s in self.locations for m in PLACEHOLDER.findall(s)} - vector_ids
        if unknown:
            # A placeholder that names no vector is data that happens to contain braces; leave it.
            self.locations = [(p, s) for p, s in self.locations
                              if set(PLACEHOLDER.findall(s)) & vector_ids]

    def _find(self, obj: Any, path: tuple[PathPart, ...]) -> None:
        if isinstance(obj, str):
            if PLACEHOLDER.search(obj):
                self.locations.append((path, obj))
        elif isinstance(obj, BaseModel):
            for name in type(obj).model_fields:
                self._find(getattr(obj, name), (*path, name))
        elif isinstance(obj, Mapping):
            for k, v in obj.items():
                self._find(v, (*path, k))
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                self._find(v, (*path, i))

    @property
    def placeholders(self) -> set[str]:
        return {m for _, s in self.locations for m in PLACEHOLDER.findall(s)} & self.vector_ids

    def instantiate(self, values: Mapping[str, str], around: Mapping[str, str] | None = None,
                    at: str = "start") -> E:
        """A fresh environment with every placeholder replaced by `values[vector_id]`. Texts in
        `around` are put at the start (`at="start"`) or end (`at="end"`) of each field holding their
        vector: the position ablation of where injected text sits in a tool's output."""
        env = self.env_cls.model_validate(self._data) if self._fast else copy.deepcopy(self.base)
        for path, template in self.locations:
            filled = PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0))
                                     if m.group(1) in self.vector_ids else m.group(0), template)
            if around:
                filled = _place(filled, [around[v] for v in PLACEHOLDER.findall(template) if v in around], at)
            _set(env, path, filled)
        return env


    def snapshot(self, env: E) -> Any:
        """`env`'s state, to be restored many times (validation replays thousands of variants)."""
        return env.model_dump(round_trip=True) if self._fast else copy.deepcopy(env)

    def restore(self, snapshot: Any) -> E:
        return self.env_cls.model_validate(snapshot) if self._fast else copy.deepcopy(snapshot)


_COPY_BY_DUMP: dict[type, bool] = {}


def copy_state(env: E) -> E:
    """A deep copy of `env` (a task's ground truth reads a copy of the state: it must not change the
    case's). Validating a fresh dump is ~3x faster than deepcopy; only for classes whose copy, so made,
    shares nothing mutable with the original (decided once per class, on its first instance: a field
    holding an object pydantic does not copy, say, takes deepcopy)."""
    cls = type(env)
    fast = _COPY_BY_DUMP.get(cls)
    if fast is False:
        return copy.deepcopy(env)
    out = cls.model_validate(env.model_dump(round_trip=True))
    if fast is None:
        _COPY_BY_DUMP[cls] = fast = not _shares_containers(out, env)
        if not fast:
            return copy.deepcopy(env)
    return out


def _place(field: str, texts: list[str], at: str) -> str:
    if not texts:
        return field
    sep = "\n" if "\n" in field else " "
    return sep.join([*texts, field] if at == "start" else [field, *texts])


_IMMUTABLE = (str, bytes, int, float, complex, type(None), dt.date, dt.time, dt.timedelta, enum.Enum, tuple,
              frozenset)


def _containers(obj: Any, out: set[int]) -> set[int]:
    """The ids of every mutable object in `obj` but its models: lists, dicts, and any other object that is
    not a known immutable value."""
    if isinstance(obj, BaseModel):
        for name in type(obj).model_fields:
            _containers(getattr(obj, name), out)
    elif isinstance(obj, (list, dict)):
        out.add(id(obj))
        for v in obj.values() if isinstance(obj, dict) else obj:
            _containers(v, out)
    elif not isinstance(obj, _IMMUTABLE):
        out.add(id(obj))
    return out


def _shares_containers(model: BaseModel, data: Any) -> bool:
    return bool(_containers(model, set()) & _containers(data, set()))


def _set(root: Any, path: tuple[PathPart, ...], value: Any) -> None:
    obj: Any = root
    for part in path[:-1]:
        obj = obj[part] if isinstance(obj, (list, dict)) else getattr(obj, str(part))  # type: ignore[index]
    last = path[-1]
    if isinstance(obj, (list, dict)):
        obj[last] = value  # type: ignore[index]
    elif isinstance(obj, BaseModel):
        object.__setattr__(obj, str(last), value)
    else:
        setattr(obj, str(last), value)


_SETTLED: contextvars.ContextVar[dict[int, Any] | None] = contextvars.ContextVar("settled", default=None)


@contextlib.contextmanager
def settled(*envs: BaseModel, dumps: Mapping[int, Any] | None = None) -> Iterator[None]:
    """While the agent is done and checks run, states do not change: dump each once, not once per
    `only_changed` call of every check. Only valid while nothing mutates `envs`. `dumps` passes
    dumps already made, by `id(env)` (validation checks thousands of states against one pre-state)."""
    known = dict(dumps or {})
    token = _SETTLED.set({**{id(e): e.model_dump(mode="json") for e in envs if id(e) not in known}, **known})
    try:
        yield
    finally:
        _SETTLED.reset(token)


def _dump(env: BaseModel) -> Any:
    cache = _SETTLED.get()
    if cache is not None and id(env) in cache:
        return cache[id(env)]
    return env.model_dump(mode="json")


_SIMPLE_KEY = re.compile(r'[^.\[\]"]+')


def diff_path(*keys: object) -> str:
    """The path `state_diff` writes for a location: keys joined by ".", except that a key with a
    dot, bracket or quote in it (a file name, an e-mail address, a URL) is written `["key"]`, so no
    path is ever the prefix of an unrelated one ("files.a.md" vs "files.a.md.bak"). Every part is a
    key (a record's id counts as one: `diff_path("files", 23)` is "files.23").
    diff_path("branches", "main", "files", "README.md") -> 'branches.main.files["README.md"]'."""
    path = ""
    for key in keys:
        path = _child(path, str(key))
    return path


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):  # a position in a list whose items have no ids
        return f"{path}[{key}]"
    if _SIMPLE_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def state_diff(pre: BaseModel, post: BaseModel) -> list[dict[str, Any]]:
    """Changes from `pre` to `post` as a list of {path, before, after}; lists of records with an
    `id` are compared by id so that one insertion does not show as every later item changing.
    Paths are written as `diff_path` writes them."""
    out: list[dict[str, Any]] = []
    _diff(_dump(pre), _dump(post), "", out)
    return out


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    if items and all(isinstance(i, dict) and "id" in i for i in items):
        keys = [str(i["id"]) for i in items]
        if len(set(keys)) == len(keys):
            return dict(zip(keys, items, strict=True))
    return None


def _diff(a: Any, b: Any, path: str, out: list[dict[str, Any]]) -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            sub = _child(path, str(k))
            if k not in b:
                out.append({"path": sub, "before": a[k], "after": None})
            elif k not in a:
                out.append({"path": sub, "before": None, "after": b[k]})
            else:
                _diff(a[k], b[k], sub, out)
        return
    if isinstance(a, list) and isinstance(b, list):
        ka, kb = _keyed(a), _keyed(b)
        if (ka is not None or not a) and (kb is not None or not b):
            _diff(ka or {}, kb or {}, path, out)
            return
        if len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                _diff(x, y, _child(path, i), out)
            return
    out.append({"path": path, "before": a, "after": b})
