"""`randori compare`: paired differences between configurations of one store, or between stores."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from randori.cli.common import ALL_VERSIONS_HELP
from randori.errors import UserError

_FILTERS = ("model", "defense", "attack")


def compare(
    values: list[str] = typer.Argument(None, show_default=False, help="Configurations to compare: values of --by "
                                       "(e.g. none tool_filter). Default: every one in the results."),
    by: str | None = typer.Option(None, "--by", help="What differs between the configurations: model, defense, "
                                  "attack, or results (two or more --results). Default: the one that varies."),
    baseline: str | None = typer.Option(None, "--baseline", "-b", help="The configuration every other one is "
                                        "compared with. Default: defense 'none' when present, else the first."),
    results: list[str] = typer.Option(["results"], "--results", "-r", help="Results directory (repeatable: "
                                      "several directories compare with each other, the first as baseline)."),
    model: list[str] = typer.Option([], "--model", "-m", help="Only these models (repeatable)."),
    defense: list[str] = typer.Option([], "--defense", "-d", help="Only these defenses (repeatable)."),
    attack: list[str] = typer.Option([], "--attack", "-a", help="Only these attacks (repeatable)."),
    suite: list[str] = typer.Option([], "--suite", "-s", help="Only these suites (repeatable)."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json or csv."),
    show: int = typer.Option(5, "--show", min=0, help="Discordant pairs listed per metric and suite (table)."),
    all_versions: bool = typer.Option(False, "--all-versions",
                                      help=ALL_VERSIONS_HELP),
) -> None:
    """Paired comparison of configurations on the cases they share: for benign utility, utility under
    attack and attack success, both rates, the difference with a 95% interval, the exact McNemar
    p-value (Holm-adjusted when several configurations are compared with one baseline), and the
    discordant pairs; per suite and pooled.

    Examples: `randori compare --by defense` (each defense against none), `randori compare --by model
    openai/gpt-4o anthropic/claude-sonnet-4-5`, `randori compare -r results/a -r results/b`."""
    from randori.report.compare import DIMENSIONS, Request
    from randori.report.compare import compare as run_compare

    if fmt not in ("table", "json", "csv"):
        raise UserError(f"unknown format '{fmt}' for --format (use table, json, csv)")
    dirs = list(dict.fromkeys(results))
    if by is None and len(dirs) > 1:
        by = "results"
    if by is not None and by not in DIMENSIONS:
        raise UserError(f"cannot compare by '{by}' (use {', '.join(DIMENSIONS)})")
    if by == "results" and len(dirs) < 2:
        raise UserError("--by results compares two or more results directories: give each with --results")
    if by != "results" and by is not None and len(dirs) > 1:
        raise UserError(f"--by {by} compares configurations within one store; give one --results")
    rows = _load(dirs, all_versions)
    filters = {"model": model, "defense": defense, "attack": attack}
    if by is None:
        by = _varying(rows, filters)
    chosen = list(values or []) or (list(filters[by]) if by in filters else [])
    if by == "results":
        chosen = chosen or dirs
    rows = [r for r in rows if (not suite or r["suite"] in suite)
            and all(not want or r[f] in want or f == by for f, want in filters.items())]
    result = run_compare(rows, Request(by, tuple(chosen), baseline or (dirs[0] if by == "results" else None)))
    if fmt == "json":
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    elif fmt == "csv":
        from randori.report.compare import flat
        from randori.report.tables import write_csv

        write_csv(flat(result), sys.stdout)
    else:
        from randori.report.compare_text import render
        from randori.text import terminal_width

        typer.echo(render(result, terminal_width(), show))


def _load(dirs: list[str], all_versions: bool) -> list[dict[str, Any]]:
    from randori.bench.store import open_existing
    from randori.report.compare import RESULTS_LABEL
    from randori.report.versions import current_rows

    rows: list[dict[str, Any]] = []
    for d in dirs:
        if not d.strip():
            raise UserError("--results must name a directory")
        with open_existing(Path(d), readonly=True) as store:
            mine = list(store.iter_cases())
        for r in mine:
            r[RESULTS_LABEL] = d
        rows += mine
    return rows if all_versions else current_rows(rows)[0]


def _varying(rows: list[dict[str, Any]], filters: dict[str, list[str]]) -> str:
    """The one dimension with several values (after the filters): what the user wants compared."""
    varying = []
    for dim in ("defense", "model", "attack"):
        seen = {r[dim] for r in rows if r[dim] is not None and r["kind"] in ("benign", "attacked")
                and (not filters[dim] or r[dim] in filters[dim])}
        if len(seen) > 1:
            varying.append(f"{dim} ({', '.join(sorted(seen))})")
    if len(varying) == 1:
        return varying[0].split(" ")[0]
    if not varying:
        raise UserError("these results hold one configuration only: nothing to compare (run several with "
                        "-d/-m/-a, or give two --results)")
    raise UserError(f"several things vary: {'; '.join(varying)}; say which to compare with --by")
