"""The `randori` command line: the Typer app, its commands and command groups (one module each) and
`main`."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from randori.cli import attacks, compare, defenses, export, mcp, models, report, robust, run, suites, training, view
from randori.cli.code import code_app
from randori.cli.common import MAX_REPEATS, PanelledHelp
from randori.cli.entry import run_app

__all__ = ["MAX_REPEATS", "app", "main", "run_cli"]

app = typer.Typer(
    help="randori: measure how safely LLM agents behave when the data they touch is hostile.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


def _version(value: bool) -> None:
    if value:
        import randori

        typer.echo(f"randori {randori.__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Print randori's version and exit.")) -> None:
    pass


app.command(short_help="Run a benchmark (resumes where the store left off).", cls=PanelledHelp)(run.run)
app.command(short_help="Summarise a results store: table, pivot, HTML report, json and csv.")(report.report)
app.command(short_help="Browse a results store in a local web app.")(view.view)
app.command("robust", short_help="Optimise an attack on the train split, score its texts on a held-out one."
            )(robust.robust)
app.command("compare", short_help="Paired differences between configurations, with p-values.")(compare.compare)
app.command("export", short_help="Results as Inspect logs, EEE records, parquet tables or OTel spans.")(export.export)
app.add_typer(suites.suites_app, name="suites")
app.add_typer(attacks.attacks_app, name="attacks")
app.add_typer(defenses.defenses_app, name="defenses")
app.add_typer(code_app, name="code", help="Secure code generation: generate, analyse, test in a sandbox, repair.")
app.add_typer(mcp.mcp_app, name="mcp")
app.add_typer(models.models_app, name="models")
app.add_typer(training.training_app, name="training")


def main(argv: list[str] | None = None) -> None:
    leave(run_cli(argv))


def leave(code: int) -> NoReturn:
    """Exit with `code` without the interpreter's teardown (`quick_exit`: the exit handlers run and
    the output is flushed first, as in an ordinary exit). The exit is the ordinary one while a thread
    the interpreter would wait for is still running, and under a profiler, a coverage tool or a
    debugger (they write their findings after the program ends)."""
    import threading

    from randori.terminal import quick_exit

    main_thread = threading.main_thread()
    if (sys.gettrace() is not None or sys.getprofile() is not None
            or any(t.is_alive() and not t.daemon and t is not main_thread for t in threading.enumerate())):
        sys.exit(code)
    quick_exit(code)


def run_cli(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit status (see `randori.cli.entry`)."""
    return run_app(app, argv)
