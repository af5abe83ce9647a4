"""`randori mcp`: serve one case's tools over MCP to a client started by hand."""

from __future__ import annotations

import typer

from randori.cli.common import DEFAULT_RESULTS, RESULTS_HELP, _check_port, _load_suites, _results_dir

mcp_app = typer.Typer(help="Serve a case's tools over MCP to a client you start yourself.", no_args_is_help=True)


@mcp_app.command("serve")
def mcp_serve(
    suite: str = typer.Option(..., "--suite", "-s", help="Suite of the case."),
    user_task: str = typer.Option(..., "--user-task", "-u", help="The user task."),
    injection_task: str | None = typer.Option(None, "--injection-task", "-i",
                                              help="The attacker's goal (an attacked case; without it: benign)."),
    attack: str | None = typer.Option(None, "--attack", "-a", help="Attack writing the injection. Default: "
                                      "important_instructions."),
    defense: str = typer.Option("none", "--defense", "-d", help="A defense at the tool boundary (see "
                                "`randori defenses list`)."),
    model: str | None = typer.Option(None, "--model", "-m", help="Model a defense asks before the agent starts "
                                     "(policy)."),
    port: int = typer.Option(0, "--port", "-p", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one)."),
    agent_version: str | None = typer.Option(None, help="Names the client you connect (e.g. claude-desktop-1.2): "
                                             "part of the case key and report rows."),
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP),
) -> None:
    """Serve one case over MCP (streamable HTTP on 127.0.0.1) to any client, started by hand. Prints
    the URL, the instructions and the user's request; Ctrl-C or SIGTERM ends the case. The agent's
    final answer is then read from stdin (paste it, or pipe it in), and the case is scored, printed
    and stored like any other (each session is a new repeat)."""
    import asyncio

    from randori.agents.external.mcp import ManualAgent
    from randori.agents.models import get_model
    from randori.bench.manual import pick_case, serve_case, verdict
    from randori.bench.store import Store

    results_dir = _results_dir(results)
    if port:
        _check_port(port)
    [s] = _load_suites([suite])
    chat_model = get_model(model) if model else None
    with Store(results_dir) as store:
        agent = ManualAgent(agent_version)
        case = pick_case(s, user_task, injection_task, attack, defense, chat_model, agent, store.done_keys())

        def say(text: str) -> None:
            typer.echo(text)

        result = asyncio.run(serve_case(s, case, store, agent, port=port, model=chat_model, say=say))
        calls = sum(len(m.get("tool_calls") or []) for m in result.messages or [] if m.get("role") == "assistant")
        typer.echo("\n".join(verdict(case, result, calls)))
        typer.echo(f"Stored in {store.path}.")
