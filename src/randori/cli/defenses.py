"""`randori defenses`: list the defenses."""

from __future__ import annotations

import typer

from randori.cli.common import _listing, _terminal_width, warn

defenses_app = typer.Typer(help="Defenses an agent can run with.", no_args_is_help=True)


@defenses_app.command("list")
def defenses_list() -> None:
    """Every registered defense (built-in and from plugins) with a one-line description."""
    from randori.agents.defenses import defense_names, get_defense
    from randori.registry import each_loadable

    _listing([(d.name, d.description) for d in each_loadable(defense_names(), get_defense, warn)])
    from randori.bench.text import wrap

    typer.echo(wrap("Stack defenses with A+B (e.g. tool_filter+detector); set parameters with NAME[key=value] "
                    "(e.g. detector[mode=abort]).", _terminal_width(), "", ""))
