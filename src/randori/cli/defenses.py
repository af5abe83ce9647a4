"""`randori defenses`: list the defenses, and show one: its parameters, where it applies and which
kinds of attacker goal it is designed to stop."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from randori.cli.common import _listing, _load_suites, warn
from randori.text import terminal_width

if TYPE_CHECKING:
    from randori.agents.defenses import Defense
    from randori.tasks.suite import TaskSuite

defenses_app = typer.Typer(help="Defenses an agent can run with.", no_args_is_help=True)


@defenses_app.command("list")
def defenses_list() -> None:
    """Every registered defense (built-in and from plugins) with a one-line description."""
    from randori.agents.defenses import defense_names, get_defense
    from randori.registry import each_loadable

    _listing([(d.name, d.description) for d in each_loadable(defense_names(), get_defense, warn)])
    from randori.text import wrap

    typer.echo(wrap("Stack defenses with A+B (e.g. tool_filter+detector); set parameters with NAME[key=value] "
                    "(e.g. detector[mode=abort]). `randori defenses show NAME` says what a defense covers.",
                    terminal_width(), "", ""))


@defenses_app.command("show")
def defenses_show(name: str = typer.Argument(..., help="Defense name or spec (A+B, NAME[key=value])."),
                  suites: list[str] = typer.Option([], "--suite", "-s", help="Also say, for each injection task "
                                                   "of this suite, whether its goal is covered. Repeatable.")) -> None:
    """One defense: description, parameters, whether it can guard an external agent, and the kinds of
    attacker goal it is designed to stop (the others are shown as not covered)."""
    from randori.agents.defenses import get_defense
    from randori.agents.defenses.coverage import GOAL_KINDS, declared, members
    from randori.agents.defenses.stack import changes_agent
    from randori.agents.external import external_refusal
    from randori.text import wrap

    defense = get_defense(name)
    width = terminal_width()

    def say(text: str, indent: str = "  ", more: str = "    ") -> None:
        typer.echo(wrap(text, width, indent, more))

    typer.echo(defense.name)
    for m in members(defense):
        say(f"{m.name}: {m.description}" if len(members(defense)) > 1 else m.description)
        params = getattr(type(m), "parameters", {})
        if params:
            say("parameters: " + ", ".join(f"{k} ({t.__name__})" for k, t in params.items()))
    say("replaces the agent's loop: " + ("yes (stacks only with defenses that do not)"
                                         if any(changes_agent(m) for m in members(defense)) else "no"))
    refusal = external_refusal(defense)
    say("external agents: " + (f"cannot guard them ({refusal})" if refusal else "can guard them"))
    kinds = declared(defense)
    if kinds is None:
        say("goal coverage: not declared (no claim either way)")
    else:
        for kind, text in GOAL_KINDS.items():
            say(f"{'covers' if kind in kinds else 'does NOT cover'}: {text}")
    for suite in _load_suites(suites, prepare=False) if suites else []:
        _suite_coverage(defense, suite, say)


def _suite_coverage(defense: Defense, suite: TaskSuite[Any], say: Callable[[str], None]) -> None:
    """Per injection task of `suite`: its goal kind, and in how many user tasks' cases it is covered."""
    from randori.agents.defenses.coverage import covered, goal_kind

    typer.echo(f"\n{suite.name}@{suite.version}:")
    users = list(suite.user_tasks.values())
    for it in suite.injection_tasks.values():
        whole = covered(defense, suite, it)
        if whole is None:
            verdict = "not declared"
        elif not whole:
            verdict = "not covered"
        else:
            n = sum(bool(covered(defense, suite, it, ut)) for ut in users)
            verdict = "covered" if n == len(users) else f"covered in {n} of {len(users)} user tasks' cases"
        say(f"{it.id:18} {goal_kind(suite, it):9} {verdict}")
