"""`randori export`: a results store as Inspect logs, Every Eval Ever records, parquet tables or OTel spans."""

from __future__ import annotations

import typer

from randori.cli.common import ALL_VERSIONS_HELP


def export(
    fmt: str = typer.Option(..., "--format", "-f", help="inspect (Inspect .eval logs), eee (Every Eval Ever "
                            "records), parquet (cases, tool calls, rates) or otel-json (OpenTelemetry spans)."),
    out: str = typer.Option(..., "--out", "-o", help="Directory to write (a file for otel-json)."),
    results: str = typer.Option("results", "--results", "-r", help="Results directory."),
    all_versions: bool = typer.Option(False, "--all-versions",
                                      help=ALL_VERSIONS_HELP),
) -> None:
    """Export a results store for the tools the field already reads: `inspect view` opens the
    Inspect logs; EEE records validate against that project's schema; the parquet tables load
    in pandas or `datasets`. Rates are the ones `randori report --format json` prints.

    The store is opened read-only. Each format needs its extra: pip install 'randori\\[inspect]'
    (or eee, parquet, otel)."""
    from randori.export import export as run_export
    from randori.terminal import live_console

    with live_console().status(f"exporting {results} as {fmt}..."):
        summary = run_export(results, fmt, out, all_versions)
    typer.echo(summary)
