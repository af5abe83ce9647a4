"""`randori view`: the web viewer over a results store."""

from __future__ import annotations

import typer

from randori.cli.common import DEFAULT_RESULTS, RESULTS_HELP, _check_port, _results_dir
from randori.errors import UserError, install_hint


def view(
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP),
    port: int = typer.Option(8765, "--port", "-p", min=1, max=65535, help="Port on 127.0.0.1."),
) -> None:
    """Browse a results store in a local web app: runs, a grid of cases coloured by outcome, and each
    case's trace with the injected text marked and the environment's changes. Serves 127.0.0.1 only.

    The store is opened read-only."""
    from randori.bench.store import open_existing

    results_dir = _results_dir(results)
    open_existing(results_dir, readonly=True).close()
    try:
        import uvicorn

        from randori.viewer.app import create_app
    except ImportError as e:
        raise UserError(f"the viewer needs its extra: {install_hint('viewer')} ({e.name} is missing)") from None
    _check_port(port)
    typer.echo(f"randori viewer for {results_dir} on http://127.0.0.1:{port}/ (Ctrl+C to stop)", err=True)
    uvicorn.run(create_app(results_dir), host="127.0.0.1", port=port, log_level="warning")
