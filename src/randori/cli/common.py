"""What the command modules share: defaults and bounds of options, checks of user input, output
helpers, loading suites."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand

from randori.errors import UserError, scrub_secrets

DEFAULT_MODEL = "scripted/gullible"
DEFAULT_RESULTS = "results"
RESULTS_HELP = "Results directory (holds randori.sqlite)."
ALL_VERSIONS_HELP = ("Include results of every suite version (default: the installed version of a built-in suite, "
                     "the latest results' version of a plugin's).")
# Bounds that catch a typo before it costs hours or memory; each error message states its bound.
MAX_REPEATS = 1000
MAX_RETRIES = 100
MAX_TOOL_CALLS_CAP = 10_000  # the highest --max-tool-calls (per model reply)
MAX_BUDGET = 1000  # the bound randori.attacks.adaptive puts on a spec's budget too
MAX_TIMEOUT = 86400.0
MAX_TEMPERATURE = 2.0


def _echo_json(obj: Any) -> None:
    from randori.terminal import printable_data

    typer.echo(json.dumps(printable_data(obj), indent=2, ensure_ascii=False, default=str))


def warn(message: str) -> None:
    typer.echo(f"randori: warning: {_one_line(scrub_secrets(message))}", err=True)


def _load_suites(names: list[str], prepare: bool = True) -> list[Any]:
    """The suites named, or every installed one. An unloadable suite that was asked for by name is an
    error; one that merely is installed (a broken plugin) is a warning, and the others go on."""
    from randori.registry import each_loadable
    from randori.suites import ready_suite, suite_names

    load: Callable[[str], Any] = ready_suite if prepare else _with_vectors
    if names:
        return [load(n) for n in names]
    suites = list(each_loadable(suite_names(), load, warn))
    if not suites:
        raise UserError("no suite can be loaded (see the warnings above)")
    return suites


def _with_vectors(name: str) -> Any:
    from randori.suites import get_suite

    suite = get_suite(name)
    # Read the data files now: a malformed one is this suite's warning, naming the file.
    suite.vectors  # noqa: B018
    suite.template  # noqa: B018
    suite.tool_vectors  # noqa: B018
    return suite


def _results_dir(text: str) -> Path:
    if not text.strip():
        raise UserError("--results must name a directory (an empty name would write into the current one)")
    return Path(text)


def _choice(value: str, allowed: tuple[str, ...], option: str = "--format") -> str:
    if value not in allowed:
        import difflib

        close = difflib.get_close_matches(value, allowed, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise UserError(f"unknown {option.lstrip('-')} '{value}' for {option} ({hint}use {', '.join(allowed)})")
    return value


def _number_in(option: str, low: float, high: float, unit: str = "") -> Callable[[Any], Any]:
    """An option callback refusing nan, inf and values outside [low, high], naming the range."""
    def check(value: Any) -> Any:
        if value is not None and (not math.isfinite(value) or not low <= value <= high):
            raise typer.BadParameter(f"must be a number{unit} from {low:g} to {high:g}, not {value}",
                                     param_hint=option)
        return value
    return check


def _check_base_url(option: str, url: str | None) -> None:
    if url is not None:
        from randori.agents.models.base import check_base_url

        check_base_url(url, option)


def _use_prices(path: Path | None) -> None:
    """--prices FILE: checked now (a bad file is a user error before any work), then read by every
    cost computation of this process through RANDORI_PRICES."""
    if path is None:
        return
    from randori.bench.pricing import PRICES_ENV, load_prices

    load_prices(path)
    os.environ[PRICES_ENV] = str(path)


def _check_port(port: int, host: str = "127.0.0.1") -> None:
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        raise UserError(f"--host {host}: not an address or name of this machine ({e.strerror or e})") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family) as probe:
        try:
            probe.bind(address)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise UserError(f"port {port} on {host} is in use; pick another with --port") from None
            raise UserError(f"cannot serve on {host} port {port}: {e.strerror or e}") from None


def _listing(entries: list[tuple[str, str]]) -> None:
    """Names and descriptions in two columns, descriptions wrapped at word boundaries to the terminal.
    A name wider than its column (a third of the width) stands on its own line above its description;
    in a terminal too narrow for two columns, every description goes under its name."""
    from randori.text import terminal_width, wrap

    width = terminal_width()
    name_w = min(max(len(n) for n, _ in entries), max(12, width // 3)) + 2
    if width - name_w < 30:
        name_w = 4
    for name, text in entries:
        if len(name) < name_w - 1:
            typer.echo(wrap(f"{name:{name_w - 1}} {text}", width, "", " " * name_w))
        else:
            typer.echo(name)
            typer.echo(wrap(text, width, " " * name_w, " " * name_w))


def _one_line(text: str) -> str:
    return " ".join(text.split())


class PanelledHelp(TyperCommand):
    """`--help` as plain text grouped by the options' panels: click wraps it to the terminal (80
    columns at most), never cuts an option's name or default, and shows no type labels."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.rich_markup_mode = None
        super().format_help(ctx, formatter)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        groups: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            if param.metavar is None and not getattr(param, "is_flag", False):
                param.metavar = _metavar(param)
            record = param.get_help_record(ctx)
            if record is not None:
                name, text = record
                groups.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(
                    (name, text.replace("\\[", "[")))
        for panel, records in groups.items():
            with formatter.section(panel):
                formatter.write_dl(records, col_max=34)


def _metavar(param: Any) -> str:
    """A value's name for help, instead of a type label: N for a count, else the option's last word."""
    kind = param.bare_type() if hasattr(param, "bare_type") else getattr(getattr(param, "type", None), "name", "")
    if kind in ("int", "integer"):
        return "N"
    if kind == "float":
        return "NUMBER"
    long = max(param.opts, key=len)
    return long.lstrip("-").rsplit("-", 1)[-1].upper()
