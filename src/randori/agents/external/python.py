"""`--agent my_pkg.mod:my_agent` (or an entry point in the `randori.agents` group): an async callable
that gets the case (`AgentCase`) and returns the final answer.

By default it runs in a worker process (`worker.py`) in the agent's container, and reaches the case's
tools over MCP as an MCP agent does: nothing of the case but its tools is in its reach. With
`--agent-in-process` it runs in randori's own process (for debugging): it could then reach the case's
environment, its trace and the results store, and its results say so."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from randori.agents.external import container
from randori.agents.external.process import ProcessAgent
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


class InProcessAgent(ExternalSpec):
    """`--agent-in-process`: the callable runs in randori's event loop."""

    def __init__(self, spec: str, version: str | None, limit: float):
        super().__init__(spec, version, limit)
        self.fn = load_callable(spec)

    def driver(self) -> Driver:
        return PythonDriver(self.fn)

    def isolation(self) -> dict[str, Any]:
        return {"agent_isolation": "in_process"}


WORKER = Path(__file__).with_name("worker.py")
WORKER_REUSE = 100  # cases a worker serves by default: a failed case ends its worker anyway


class PythonAgent(ProcessAgent):
    """The callable in a worker process, in its container."""

    def __init__(self, spec: str, version: str | None, limit: float, *, reuse: int | None = None, **options: Any):
        # As named (a virtual environment's python), so that the worker imports what randori imports.
        super().__init__(spec, [sys.executable, str(WORKER), spec], version, limit, reuse=reuse or WORKER_REUSE,
                         lines=True, handshake=True, extra_visible=container.python_paths(), **options)
        self._check(spec)

    def _check(self, spec: str) -> None:
        """The agent imported in its container, as its worker will: a mistake is one line now."""
        argv = [*self.argv[:2], "--check", spec]
        if self.contained.kind == "namespaces":
            argv = container.bwrap_command(argv, self.contained, self.visible, self.hidden)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise UserError(f"agent '{spec}': importing it took more than 120 s") from None
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            raise UserError(f"agent '{spec}': {why}")
