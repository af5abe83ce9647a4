"""`randori models`: the model providers, and a quick check of one model."""

from __future__ import annotations

from typing import Any

import typer

from randori.cli.common import MAX_TIMEOUT, _check_base_url, _choice, _echo_json, _number_in
from randori.errors import scrub_secrets

models_app = typer.Typer(help="Model providers: list them (no subcommand), or check one.",
                         invoke_without_command=True)


@models_app.callback()
def models(ctx: typer.Context, fmt: str = typer.Option("table", "--format", "-f", help="table or json.")) -> None:
    """Model providers: whether each is installed, how to install it, which environment variables
    it reads (shown as set or unset, never their values) and its default request concurrency.

    `randori models check MODEL` tries one model."""
    if ctx.invoked_subcommand is not None:
        return
    from randori.agents.models import provider_status

    _choice(fmt, ("table", "json"))
    rows = provider_status()
    if fmt == "json":
        _echo_json(rows)
        return
    typer.echo("\n".join(_provider_lines(rows)))


def _provider_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One short block per provider, wrapped to the terminal (80 columns by default) without ever
    cutting a variable name, model name or install command."""
    import textwrap

    from randori.text import terminal_width

    width = max(40, min(terminal_width(), 100))

    def wrap(text: str, indent: str) -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ",
                             break_long_words=False, break_on_hyphens=False)

    out: list[str] = []
    for r in rows:
        if r["installed"]:
            state = "installed"
        else:
            state = f"not installed: {r['install'] or 'missing ' + ', '.join(r['missing'])}"
        head = f"{r['provider']}: {state}; e.g. {r['example']}"
        if r["max_concurrency"]:
            head += f"; {r['max_concurrency']} requests at once"
        out += wrap(head, "")
        out += wrap(r["description"] + (f" ({r['note']})" if r.get("note") else ""), "  ")
        if r["env"]:
            out += wrap("reads " + ", ".join(f"{k}{' (set)' if v else ''}" for k, v in r["env"].items()), "  ")
    return out


@models_app.command("check")
def models_check(
    model: str = typer.Argument(..., help="provider/model, e.g. openai/gpt-4o-mini."),
    base_url: str | None = typer.Option(None, "--base-url", help="Endpoint of an OpenAI-compatible server."),
    timeout: float = typer.Option(10.0, help="Seconds each request may take.",
                                  callback=_number_in("--timeout", 0.001, MAX_TIMEOUT, " of seconds")),
    fmt: str = typer.Option("table", "--format", "-f", help="table or json."),
) -> None:
    """Check a model in seconds: one tiny request and one tool-calling request, no retries. Prints
    each one's latency, whether the tool call came back well-formed, the rate-limit headers seen,
    and a one-line diagnosis of any failure (bad key, unknown model, unreachable URL, TLS, proxy,
    timeout). Exits 1 when a request failed."""
    import asyncio

    from randori.agents.models import get_model
    from randori.agents.models.check import check_model

    _choice(fmt, ("table", "json"))
    _check_base_url("--base-url", base_url)
    options: dict[str, Any] = {"base_url": base_url} if base_url else {}
    chat = get_model(model, timeout=timeout, max_retries=0, **options)
    inner = getattr(chat, "inner", chat)  # the provider itself: no retries or nudges in between

    async def go() -> Any:
        try:
            return await check_model(inner, timeout)
        finally:
            await chat.aclose()

    result = asyncio.run(go())
    if fmt == "json":
        _echo_json(result.as_dict())
    else:
        typer.echo(f"{result.model} at {result.where}")
        import textwrap

        for step in result.steps:
            state = "ok" if step.ok else f"FAILED ({step.failure})"
            typer.echo(f"  {step.name:13} {state:8} {step.latency_ms:8.0f} ms")
            typer.echo(textwrap.fill(scrub_secrets(step.detail), 80, initial_indent=" " * 16,
                                     subsequent_indent=" " * 16))
        for i, line in enumerate(result.rate_limits or ["no rate-limit headers in the replies"]):
            typer.echo(f"  {'rate limits' if i == 0 else '':13} {line}")
    if not result.ok:
        raise typer.Exit(1)
