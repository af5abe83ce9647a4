"""Jinja2 templates shipped in the package, shared by the static HTML report and the viewer."""

from __future__ import annotations

import functools
from typing import Any


@functools.lru_cache(maxsize=1)
def jinja_env() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("randori.viewer", "templates"),
                      autoescape=select_autoescape(["html"], default_for_string=True, default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["thousands"] = lambda v: "" if v is None else f"{v:,}"
    env.filters["datetime"] = _datetime
    env.filters["yesno"] = lambda v: "–" if v is None else ("yes" if v else "no")
    return env


def render(name: str, **context: Any) -> str:
    return str(jinja_env().get_template(name).render(**context))


def _datetime(ts: float | None) -> str:
    import datetime as dt

    if ts is None:
        return ""
    return dt.datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M:%S")
