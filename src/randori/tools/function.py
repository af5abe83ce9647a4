"""`@tool`: a typed, documented Python function becomes a `Tool` with a JSON schema.

Parameters annotated `Annotated[T, Env("field")]` are filled from the environment at call time and
never shown to the model.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model


@dataclass(frozen=True)
class Env:
    """Marks a tool parameter as filled from the environment: `Env()` is the whole environment,
    `Env("inbox")` one attribute (dotted paths allowed)."""

    field: str = ""


@dataclass
class Tool:
    name: str
    description: str
    fn: Callable[..., Any]
    args_model: type[BaseModel]
    env_params: dict[str, str] = field(default_factory=dict)
    # How a result is shown to the model when not randori's YAML: a foreign suite's own formatter.
    show: Callable[[Any], str] | None = None
    # The call runs code or waits (a repository's tests in the sandbox): agents run it on a thread,
    # so other cases go on meanwhile; a case's own calls still run one at a time.
    runs_code: bool = False

    @functools.cached_property
    def parameters(self) -> dict[str, Any]:
        # Building a JSON schema costs pydantic milliseconds; every model request sends every tool.
        return _strip_titles(self.args_model.model_json_schema())  # type: ignore[no-any-return]

    def schema(self) -> dict[str, Any]:
        """The tool in the OpenAI function-calling format (used by most providers)."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": self.parameters}}


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None, runs_code: bool = False) -> Any:
    """Turn `fn` into a `Tool`. Usable as `@tool` or `@tool(name="...")`; `runs_code=True` for a tool
    that runs code or waits (it then runs off the event loop, see `Tool.runs_code`)."""

    def build(f: Callable[..., Any]) -> Tool:
        doc = docstring_parser.parse(inspect.getdoc(f) or "")
        param_docs = {p.arg_name: (p.description or "") for p in doc.params}
        hints = typing.get_type_hints(f, include_extras=True)
        fields: dict[str, Any] = {}
        env_params: dict[str, str] = {}
        for pname, param in inspect.signature(f).parameters.items():
            hint = hints.get(pname, Any)
            env_marker = _env_marker(hint)
            if env_marker is not None:
                env_params[pname] = env_marker.field
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (hint, Field(default, description=param_docs.get(pname) or None))
        # A summary wrapped over two lines comes back split in two; join it again with a space.
        sep = "\n\n" if doc.blank_after_short_description else " "
        description = sep.join(p for p in (doc.short_description, doc.long_description) if p)
        args_model = create_model(  # type: ignore[call-overload]
            f"{f.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)
        return Tool(name=name or f.__name__, description=description, fn=f,
                    args_model=args_model, env_params=env_params, runs_code=runs_code)

    return build(fn) if fn is not None else build


def _env_marker(hint: Any) -> Env | None:
    if typing.get_origin(hint) is Annotated:
        for meta in typing.get_args(hint)[1:]:
            if isinstance(meta, Env):
                return meta
    return None
