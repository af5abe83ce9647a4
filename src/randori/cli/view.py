"""`randori view`: the web viewer over a results store."""

from __future__ import annotations

import re

import typer

from randori.cli.common import DEFAULT_RESULTS, RESULTS_HELP, _check_port, _results_dir, warn
from randori.errors import UserError, install_hint


def view(
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP),
    port: int = typer.Option(8765, "--port", "-p", min=1, max=65535, help="Port to serve on."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address or name to serve on. The viewer answers only "
                             "requests for 127.0.0.1, localhost and this host (a page on another site cannot "
                             "read it through DNS rebinding); anyone who reaches the address can read every trace."),
) -> None:
    """Browse a results store in a local web app: runs, a grid of cases coloured by outcome, and each
    case's trace with the injected text marked and the environment's changes. Serves 127.0.0.1 only
    unless --host says otherwise.

    The store is opened read-only."""
    from randori.bench.store import open_existing

    results_dir = _results_dir(results)
    open_existing(results_dir, readonly=True).close()
    try:
        import uvicorn

        from randori.viewer.app import create_app
    except ImportError as e:
        raise UserError(f"the viewer needs its extra: {install_hint('viewer')} ({e.name} is missing)") from None
    bind, names = _host(host)
    _check_port(port, bind)
    if bind not in ("127.0.0.1", "::1", "localhost"):
        warn(f"serving on {host}: anyone who can reach it can read every case of {results_dir}")
    shown = f"[{bind}]" if ":" in bind else bind
    typer.echo(f"randori viewer for {results_dir} on http://{shown}:{port}/ (Ctrl+C to stop)", err=True)
    uvicorn.run(create_app(results_dir, hosts=names), host=bind, port=port, log_level="warning")


def _host(host: str) -> tuple[str, tuple[str, ...]]:
    """The address to bind for `--host`, and the names a request's Host header may carry for it."""
    bind = host.strip().removeprefix("[").removesuffix("]").lower()
    if not re.fullmatch(r"[a-z0-9.:_-]+", bind):
        raise UserError(f"--host {host!r}: give an address (192.168.1.5, ::1) or a name (mybox.lan)")
    if bind.strip(":0.") == "":  # 0.0.0.0, ::
        raise UserError(f"--host {host} listens on every address, but the viewer answers only requests naming "
                        "the host it was started for: give this machine's address or name (e.g. --host "
                        "192.168.1.5)")
    return bind, (f"[{bind}]",) if ":" in bind else (bind,)
