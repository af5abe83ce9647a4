"""`--agent my_pkg.mod:my_agent` (or an entry point in the `randori.agents` group): an async callable
that gets the case (`AgentCase`) and returns the final answer."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from randori.agents.external.session import AgentCase, Driver, ExternalSpec
from randori.errors import UserError
from randori.registry import Registry, describe_exception

ENTRY_POINTS = "randori.agents"


def _not_callable(obj: Any) -> str | None:
    return None if callable(obj) else f"is not callable (it is a {type(obj).__name__})"


REGISTRY = Registry("agent", ENTRY_POINTS, {}, _not_callable)


def load_callable(spec: str) -> Callable[..., Any]:
    """`module:attribute` imported, or the entry point named `spec`; a UserError naming what is wrong."""
    if ":" not in spec:
        return REGISTRY.load(spec)  # type: ignore[no-any-return]
    import importlib
    import os
    import sys

    # As uvicorn and gunicorn do: a module beside you is found without installing it.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise UserError(f"agent '{spec}': expected MODULE:CALLABLE, e.g. my_pkg.agent:run")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as e:  # the user's module may raise anything on import
        raise UserError(f"agent '{spec}': cannot import {module_name}: {describe_exception(e)}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UserError(f"agent '{spec}': {module_name} has no attribute '{attr}'")
        obj = getattr(obj, part)
    problem = _not_callable(obj)
    if problem:
        raise UserError(f"agent '{spec}' {problem}")
    return obj  # type: ignore[no-any-return]


class PythonDriver(Driver):
    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn

    async def run(self, case: AgentCase) -> Any:
        answer = self.fn(case)
        return await answer if inspect.isawaitable(answer) else answer


class PythonAgent(ExternalSpec):
    def __init__(self, spec: str, version: str | None, limit: float):
        super().__init__(spec, version, limit)
        self.fn = load_callable(spec)

    def driver(self) -> Driver:
        return PythonDriver(self.fn)
