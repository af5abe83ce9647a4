"""One AgentDojo suite (at one benchmark version) behind randori's `TaskSuite` interface.

The environment, tools, tasks, vectors and checks are the installed package's own objects. What
randori changes is how a case's environment is made. AgentDojo pastes each case's text into its
YAML source and parses it all again; here the source is parsed once with a placeholder in every
vector, and each case fills a copy of that data, which the suite's own models then validate (so what
they derive from the text, such as a file's size, is derived again). So that a vector holds exactly
what AgentDojo's loader would have made of a text (its YAML folds line breaks and reads escapes),
each distinct text is passed once through that loader and its reading reused. Where the loader fails
on a text (a `{` or a quote breaks it), the text goes in as written.
"""

from __future__ import annotations

import copy
import functools
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from randori.suites.agentdojo.marks import marks_for
from randori.suites.agentdojo.tasks import AgentDojoInjectionTask, AgentDojoUserTask
from randori.suites.agentdojo.tools import wrap
from randori.tasks.environment import PLACEHOLDER
from randori.tasks.environment import _place as place
from randori.tasks.suite import TaskSuite, Vector
from randori.tasks.tool_vectors import ToolVector
from randori.tools.function import Tool

# Distinct injected texts whose AgentDojo reading is kept (an adaptive attack makes one per try), and
# validated environments per set of injections (workspace's e-mail addresses take 0.1 s to validate;
# a fixed attack makes about one set per injection task and group of reached vectors).
_TEXT_CACHE = 512
# AgentDojo's reading of texts: fields holding one vector, whole, by path; and each vector's own text.
Reading = tuple[dict[tuple[Any, ...], str], dict[str, str]]
_ENV_CACHE = 256


class AgentDojoSuite(TaskSuite[Any]):
    def __init__(self, name: str, version: str, source: Any, *, user_name: str):
        from agentdojo.agent_pipeline.agent_pipeline import load_system_message
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
        from agentdojo.functions_runtime import FunctionsRuntime

        runtime = FunctionsRuntime(source.tools)
        tools: list[Tool] = [wrap(f, runtime, tool_result_to_str) for f in source.tools]
        super().__init__(name, version, source.environment_type, Path(source.data_path or "."), tools,
                         user_name=user_name, system_prompt=load_system_message(None))
        self.source = source
        self.user_tasks = {tid: AgentDojoUserTask(t, source, marks_for(source.name, tid))
                           for tid, t in source.user_tasks.items()}
        self.injection_tasks = {tid: AgentDojoInjectionTask(t) for tid, t in source.injection_tasks.items()}
        self._read = functools.lru_cache(maxsize=_TEXT_CACHE)(self._read_text)
        # Each built environment kept pickled: unpickling a copy is 6x faster than deep-copying one
        # (workspace: 1.2 ms against 7.8 ms), and the copy compares equal.
        self._built = functools.lru_cache(maxsize=_ENV_CACHE)(lambda key: pickle.dumps(self._build(key), 5))

    @functools.cached_property
    def vectors(self) -> dict[str, Vector]:
        from agentdojo.task_suite.task_suite import read_suite_file

        raw = yaml.safe_load(read_suite_file(self.source.name, "injection_vectors.yaml", self.source.data_path))
        return {vid: Vector(vid, str(v.get("description", "")), str(v["default"])) for vid, v in raw.items()}

    @functools.cached_property
    def tool_vectors(self) -> dict[str, ToolVector]:
        return {}  # AgentDojo's tools come with the package: no third party writes their descriptions

    @functools.cached_property
    def _marked(self) -> list[tuple[tuple[Any, ...], str]]:
        """Where the vectors are: each field holding one, by its path in the dumped environment, with
        its text when every vector holds `{vector_id}`."""
        env = self.source.load_and_inject_default_environment({v: "{" + v + "}" for v in self.vectors})
        found: list[tuple[tuple[Any, ...], str]] = []
        _find(env.model_dump(), (), set(self.vectors), found)
        return found

    @property
    def template(self) -> Any:
        return _Copies()

    def placeholder_problems(self) -> list[str]:
        return []

    @functools.cached_property
    def _defaults(self) -> dict[str, str]:
        read = self._as_read(self.source.load_and_inject_default_environment({}).model_dump())
        return {vid: read.get(vid, v.default) for vid, v in self.vectors.items()}

    def _read_text(self, texts: tuple[tuple[str, str], ...]) -> Reading:
        """These texts as AgentDojo's loader turns them into data: each field that holds one vector,
        whole, and each vector's own text ({} and {} when the loader fails on them)."""
        try:
            env = self.source.load_and_inject_default_environment(dict(texts))
        except Exception:  # str.format or YAML choked on the text: randori places it as written
            return {}, {}
        data = env.model_dump()
        fields = {path: _get(data, path) for path, template in self._marked
                  if len(set(PLACEHOLDER.findall(template))) == 1}
        return fields, self._as_read(data)

    def _reading(self, injections: Mapping[str, str]) -> Reading:
        """AgentDojo's reading of `injections`. The same text in many vectors (a fixed attack) is read
        once for every vector, so one load serves every case of an injection task."""
        texts = {v: t for v, t in injections.items() if v in self.vectors}
        if len(set(texts.values())) == 1:
            text = next(iter(texts.values()))
            fields, read = self._read(tuple((v, text) for v in self.vectors))
        else:
            fields, read = self._read(tuple(sorted(texts.items())))
        return fields, {v: read.get(v, t) for v, t in texts.items()}

    def _as_read(self, data: Any) -> dict[str, str]:
        """The text each vector holds in `data` (a dumped environment): the part of each templated
        field the placeholder stood for. A vector whose fields disagree is left out (then placed as
        written)."""
        found: dict[str, set[str]] = {}
        for path, template in self._marked:
            names = PLACEHOLDER.findall(template)
            if len(set(names)) != 1:
                continue
            value = _get(data, path)
            prefix, _, suffix = template.partition("{" + names[0] + "}")
            clean = (isinstance(value, str) and value.startswith(prefix) and value.endswith(suffix)
                     and len(value) >= len(prefix) + len(suffix))
            found.setdefault(names[0], set()).add(value[len(prefix):len(value) - len(suffix)] if clean else "\0")
        return {vid: next(iter(texts)) for vid, texts in found.items() if len(texts) == 1 and "\0" not in texts}

    def load_env(self, injections: Mapping[str, str] | None = None, position: str = "replace") -> Any:
        key = (tuple(sorted((injections or {}).items())), position)
        return pickle.loads(self._built(key))

    @functools.cached_property
    def _base(self) -> Any:
        return self.source.load_and_inject_default_environment({})

    def _build(self, key: tuple[tuple[tuple[str, str], ...], str]) -> Any:
        """The environment for these injections: a copy of the default one with each vector's field
        rewritten, and each model holding such a field validated again by its own class, so what it
        derives from the text (a file's size) is derived again."""
        items, position = key
        if not items:
            return self._base
        values = dict(self._defaults)
        fields, texts = self._reading(dict(items))
        around: dict[str, str] = {}
        if position == "replace":
            values.update(texts)
        else:
            around = {v: t for v, t in texts.items() if t}
        env = copy.deepcopy(self._base)
        owners: dict[int, BaseModel] = {}
        for path, template in self._marked:
            names = set(PLACEHOLDER.findall(template))
            if not names & texts.keys():
                continue  # the default environment holds AgentDojo's own reading of this field already
            if position == "replace" and len(names) == 1 and path in fields:
                filled = fields[path]  # the whole field as AgentDojo reads it (text and data fold together)
            else:
                filled = PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)
            if around:
                filled = place(filled, [around[v] for v in PLACEHOLDER.findall(template) if v in around], position)
            owner = _put(env, path, filled)
            owners[id(owner)] = owner
        for model in owners.values():
            # In place: the same object may sit in two containers (AgentDojo's files and initial_files).
            model.__dict__.update(type(model).model_validate(model.model_dump()).__dict__)
        return env


class _Copies:
    """Snapshots of an environment for replaying variants (randori's validity rules)."""

    def snapshot(self, env: Any) -> Any:
        return copy.deepcopy(env)

    def restore(self, snapshot: Any) -> Any:
        return copy.deepcopy(snapshot)


def _find(obj: Any, path: tuple[Any, ...], vectors: set[str], out: list[tuple[tuple[Any, ...], str]]) -> None:
    if isinstance(obj, str):
        if set(PLACEHOLDER.findall(obj)) & vectors:
            out.append((path, obj))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _find(v, (*path, k), vectors, out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _find(v, (*path, i), vectors, out)


def _put(env: Any, path: tuple[Any, ...], value: str) -> BaseModel:
    """Set the field at `path` (in an environment's objects) to `value`; the innermost model holding it."""
    obj, owner = env, env
    for part in path[:-1]:
        obj = obj[part] if isinstance(obj, (list, dict)) else getattr(obj, str(part))
        if isinstance(obj, BaseModel):
            owner = obj
    if isinstance(obj, (list, dict)):
        obj[path[-1]] = value
    else:
        object.__setattr__(obj, str(path[-1]), value)
    return owner


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data
