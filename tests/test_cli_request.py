"""A command whose options are one typed request (`randori.cli.request.takes`): the dataclass's fields
are the command's options, in their order and with their defaults, and its body gets one object."""

from dataclasses import dataclass, field
from typing import Annotated

import typer
from typer.testing import CliRunner

from randori.cli.request import takes


@dataclass(frozen=True)
class Greeting:
    name: Annotated[str, typer.Argument(help="Who is greeted.")]
    times: Annotated[int, typer.Option("--times", "-n", min=1, help="How often.")] = 1
    tags: Annotated[list[str], typer.Option("--tag", help="A tag (repeatable).")] = field(default_factory=list)
    loud: Annotated[bool, typer.Option("--loud/--quiet", help="Shout.")] = False


def test_the_fields_are_the_options_and_the_body_gets_them_as_one_request():
    got: list[Greeting] = []
    app = typer.Typer()

    @app.command()
    @takes(Greeting)
    def greet(request: Greeting) -> None:
        """Say hello."""
        got.append(request)

    runner = CliRunner()
    assert runner.invoke(app, ["ann", "-n", "2", "--tag", "a", "--tag", "b", "--loud"]).exit_code == 0
    assert runner.invoke(app, ["bob"]).exit_code == 0
    assert got == [Greeting("ann", 2, ["a", "b"], True), Greeting("bob")]
    bad = runner.invoke(app, ["cy", "-n", "0"])
    assert bad.exit_code == 2 and "--times" in bad.output and len(got) == 2
    shown = runner.invoke(app, ["--help"]).output
    assert "Say hello." in shown
    assert shown.index("--times") < shown.index("--tag") < shown.index("--loud")
