"""The viewer's pages: its own templates in the report's environment (they include the report's
stylesheet), with the filters only they use."""

from __future__ import annotations

import functools
from typing import Any


@functools.lru_cache(maxsize=1)
def jinja_env() -> Any:
    from randori.report.templating import environment

    env = environment("randori.viewer")
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
