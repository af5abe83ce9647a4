"""The Jinja2 environment of randori's HTML: the report's templates (the page and its stylesheet), and
those of any package above that adds its own (the viewer's pages share the stylesheet)."""

from __future__ import annotations

import functools
from typing import Any


def environment(*packages: str) -> Any:
    """A new environment over the templates of `packages` (each one's `templates/` folder, first match
    wins), then the report's own."""
    from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined, select_autoescape

    loader = ChoiceLoader([PackageLoader(p, "templates") for p in (*packages, "randori.report")])
    return Environment(loader=loader, autoescape=select_autoescape(["html"], default_for_string=True, default=True),
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


@functools.lru_cache(maxsize=1)
def _report_env() -> Any:
    return environment()


def render(name: str, **context: Any) -> str:
    """The report's template `name` rendered with `context`."""
    return str(_report_env().get_template(name).render(**context))
