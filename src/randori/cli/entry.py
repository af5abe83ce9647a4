"""How the command line ends: every failure a user can cause is one line `randori: error: ...`."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer

from randori.cli.common import _one_line
from randori.errors import FatalModelError, UserError, scrub_secrets
from randori.terminal import GuardedStream, guard_output


def run_app(app: typer.Typer, argv: list[str] | None = None) -> int:
    """Run the command line and return its exit status. Every failure a user can cause ends here as
    one line `randori: error: ...` (status 2) instead of a traceback; RANDORI_DEBUG=1 shows the
    traceback of an unexpected one."""
    # Whatever a provider, a tool or a plugin said reaches the terminal only printable and secret-free.
    streams = guard_output()
    try:
        return _run(app, argv)
    finally:
        # Unless a command replaced them meanwhile (a broken pipe swaps stdout for /dev/null).
        if isinstance(sys.stdout, GuardedStream):
            sys.stdout = streams[0]
        if isinstance(sys.stderr, GuardedStream):
            sys.stderr = streams[1]


def _run(app: typer.Typer, argv: list[str] | None) -> int:
    import sqlite3

    # Typer may vendor its own copy of click: take click's exception classes from the one it uses.
    click_classes: dict[str, type[Exception]] = {
        c.__name__: c for c in typer.BadParameter.__mro__ if issubclass(c, Exception)}
    usage_error, click_exception = click_classes["UsageError"], click_classes["ClickException"]
    try:
        code = app(args=argv, prog_name="randori", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except click_exception as caught:
        if type(caught).__name__ == "NoArgsIsHelpError":
            return 2  # the help is already printed
        e: Any = caught
        message: str = e.format_message()
        if isinstance(caught, usage_error):
            ctx = getattr(caught, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            return _fail(message.rstrip(".") + hint)
        return _fail(message, e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("randori: interrupted; finished cases are saved, run the same command to resume.", err=True)
        return 130
    except (UserError, FatalModelError) as e:
        return _fail(str(e))
    except sqlite3.Error as e:
        return _fail(f"results store: {e}")
    except OSError as e:
        if isinstance(e, BrokenPipeError):  # `randori report | head`: the reader has gone, say nothing
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (Python flushes stdout at exit)
            return 1
        return _fail(f"{e.strerror or e}" + (f": {e.filename}" if e.filename else ""))
    except Exception as e:
        if os.environ.get("RANDORI_DEBUG"):
            import traceback

            typer.echo(scrub_secrets(traceback.format_exc()), err=True)
        from randori.registry import describe_exception

        return _fail(f"internal error: {describe_exception(e)} (a bug in randori or a plugin; "
                     "RANDORI_DEBUG=1 shows where)", 1)


def _fail(message: str, code: int = 2) -> int:
    typer.echo(f"randori: error: {_one_line(scrub_secrets(message))}", err=True)
    return code
