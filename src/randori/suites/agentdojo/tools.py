"""AgentDojo's `Function`s as randori `Tool`s: their own names, descriptions and JSON schemas, run by
AgentDojo's own `FunctionsRuntime` and rendered by its own formatter, behind randori's runtime (so
defenses, the trace and injection detection work as for any suite)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, create_model, model_validator

from randori.sandbox.verdict import literal_eval
from randori.tools.function import Tool


@dataclass
class AgentDojoTool(Tool):
    """A tool whose schema is AgentDojo's own: its pydantic parameters model, titles and all."""

    schema_source: type[BaseModel] | None = None

    @functools.cached_property
    def parameters(self) -> dict[str, Any]:
        assert self.schema_source is not None
        return self.schema_source.model_json_schema()  # type: ignore[no-any-return]


def _string_lists(data: Any) -> Any:
    """AgentDojo's tool executor reads an argument written as a Python list ("['a', 'b']") as that
    list; a model that does so gets the same answer here."""
    if not isinstance(data, dict):
        return data
    out = {}
    for key, value in data.items():
        if isinstance(value, str):
            try:
                parsed = literal_eval(value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                parsed = None
            value = parsed if isinstance(parsed, list) else value
        out[key] = value
    return out


def _lenient(params: type[BaseModel]) -> type[BaseModel]:
    def read_lists(cls: type[BaseModel], data: Any) -> Any:
        return _string_lists(data)

    validator: Any = model_validator(mode="before")(classmethod(read_lists))  # type: ignore[arg-type]
    return create_model(  # type: ignore[call-overload,no-any-return]
        params.__name__, __base__=params, __validators__={"read_lists": validator})


def wrap(function: Any, runtime: Any, render: Any) -> AgentDojoTool:
    """`function` (an AgentDojo `Function`) run through `runtime.run_function`, which validates the
    arguments against AgentDojo's model and fills its dependencies from the environment; its result
    is shown as `render` (AgentDojo's `tool_result_to_str`) shows it. Errors are AgentDojo's own
    ("ValueError: ..."), raised so that randori's runtime records them."""
    name = function.name

    def call(_env: Any, **kwargs: Any) -> Any:
        result, _ = runtime.run_function(_env, name, kwargs, raise_on_error=True)
        return result

    return AgentDojoTool(name=name, description=function.description, fn=call,
                         args_model=_lenient(function.parameters), env_params={"_env": ""},
                         show=render, schema_source=function.parameters)
