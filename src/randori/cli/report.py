"""`randori report`: summarise a results store as a table, json, csv or an HTML report."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import typer

from randori.cli.common import (
    ALL_VERSIONS_HELP,
    DEFAULT_RESULTS,
    RESULTS_HELP,
    _choice,
    _echo_json,
    _results_dir,
    _use_prices,
)
from randori.errors import UserError


def report(
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP),
    fmt: str = typer.Option("table", "--format", "-f",
                            help="table, json (every table) or csv (one table, see --table)."),
    table: str = typer.Option("headline", "--table", "-t",
                              help="With --format csv: headline, pivot, tasks, budget, dos, detection, weaknesses, "
                              "robustness, code_rounds or code_cwe."),
    html: Path | None = typer.Option(None, "--html", help="Also write a self-contained HTML report to this file.",
                                     dir_okay=False),
    all_versions: bool = typer.Option(False, "--all-versions",
                                      help=ALL_VERSIONS_HELP),
    prices: Path | None = typer.Option(None, "--prices", dir_okay=False,
                                       help="TOML price table overriding the built-in one (see docs)."),
    wide: bool = typer.Option(False, "--wide", help="The full table: every rate with n and one decimal, and costs "
                              "per case (about 230 columns)."),
) -> None:
    """Summarise a results store: one row per (model, defense, attack, suite), plus pooled rows,
    in 80 columns (`--wide` for every column), and a model x defense pivot.
    `--html FILE` writes the report with figures; `--format json|csv` exports the tables for pandas.

    The store is opened read-only: a report never changes it."""
    from randori.bench.store import open_existing
    from randori.report.tables import EXPORT_TABLES, JSON_KEYS, export_tables
    from randori.report.terminal import print_summary
    from randori.report.versions import current_rows

    results_dir = _results_dir(results)
    _choice(fmt, ("table", "json", "csv"))
    _use_prices(prices)
    _choice(table, tuple(EXPORT_TABLES), "--table")
    if html is not None and not html.parent.is_dir():
        raise UserError(f"cannot write {html}: directory {html.parent} does not exist")
    from randori.report.agent_notes import agent_notes

    with open_existing(results_dir, readonly=True) as store:
        rows = list(store.iter_cases())
        runs = store.runs()
    kept, dropped = (rows, 0) if all_versions else current_rows(rows)
    tables = export_tables(kept, results_dir) if fmt != "table" or html is not None else None
    if html is not None:
        _write_html_report(html, kept, results_dir, dropped, runs, tables)
    if fmt == "json":
        assert tables is not None
        _echo_json({**{JSON_KEYS[k]: v for k, v in tables.items()}, "excluded_old_version_cases": dropped,
                    "agent_notes": agent_notes(kept, runs)})
    elif fmt == "csv":
        from randori.report.tables import write_csv

        assert tables is not None
        write_csv(tables[table], sys.stdout)
    elif html is None:
        print_summary(kept, wide=wide)
        if dropped:
            typer.echo(f"({dropped} cases from other suite versions not shown; use --all-versions)")
        for note in agent_notes(kept, runs):
            typer.echo(textwrap.fill(f"Note: {note}.", width=80))


def _write_html_report(path: Path, rows: list[dict[str, Any]], results: Path, dropped: int,
                       runs: list[dict[str, Any]], tables: Any) -> None:
    from randori.report.html import render_html
    from randori.terminal import live_console

    with live_console().status(f"drawing figures for {len(rows)} cases..."):
        text = render_html(rows, results_dir=results, excluded=dropped, runs=runs, tables=tables)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}") from None
    typer.echo(f"Wrote {path} ({len(text) // 1024} KiB, {len(rows)} cases).", err=True)
