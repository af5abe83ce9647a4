"""Commands whose options are one typed request: a dataclass declares them (each field's type carries
its `typer.Option` or `typer.Argument`, its default is the option's), and the command's body gets
them as one object instead of a parameter per option."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints

Request = TypeVar("Request")


def takes(request_type: type[Request]) -> Callable[[Callable[[Request], None]], Callable[..., None]]:
    """Turn `body(request)` into a Typer command whose parameters are `request_type`'s fields, in
    their order (which is the order of `--help`)."""
    hints = get_type_hints(request_type, include_extras=True)
    signature = inspect.Signature([
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=hints[f.name], default=_default(f))
        for f in dataclasses.fields(request_type)])  # type: ignore[arg-type]

    def command_of(body: Callable[[Request], None]) -> Callable[..., None]:
        def command(**options: Any) -> None:
            body(request_type(**options))

        command.__signature__ = signature  # type: ignore[attr-defined]  # what Typer reads the options from
        for name in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(command, name, getattr(body, name))
        return command

    return command_of


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
