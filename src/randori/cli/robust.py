"""`randori robust`: optimise an attack on the train split, write the texts that worked to a bank, and
score that bank on a held-out split (the same or another model and defense), side by side."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from randori.cli.common import DEFAULT_RESULTS, MAX_BUDGET, RESULTS_HELP, _choice, _echo_json
from randori.cli.request import takes
from randori.errors import UserError


@dataclass(frozen=True)
class RobustRequest:
    """Every option of `randori robust`, as given (in the order of `--help`)."""

    suite: Annotated[list[str], typer.Option(
        "--suite", "-s", metavar="SUITE", help="Suite (repeatable). Default: all built-in suites.")] = field(
        default_factory=list)
    model: Annotated[str | None, typer.Option(
        "--model", "-m", metavar="MODEL", help="The agent the attack is optimised against (provider/model). "
        "Default: $RANDORI_MODEL, else scripted/gullible.")] = None
    defense: Annotated[str, typer.Option(
        "--defense", "-d", help="Its defense while the attack is optimised.")] = "none"
    attack: Annotated[str, typer.Option(
        "--attack", "-a", help="The attack optimised on train: search or adaptive (NAME\\[key=value]).")] = "search"
    attacker_model: Annotated[str | None, typer.Option(
        help="Attacker model (provider/model). Default: scripted/attacker for scripted agents, else the "
        "agent's own model.")] = None
    attacker_budget: Annotated[int | None, typer.Option(
        min=1, max=MAX_BUDGET, help="Agent runs per train case (default: the attack's own).")] = None
    test_model: Annotated[str | None, typer.Option(
        "--test-model", metavar="MODEL", help="The agent the bank is scored against. Default: --model.")] = None
    test_defense: Annotated[str | None, typer.Option(
        "--test-defense", help="Its defense. Default: --defense.")] = None
    held_out: Annotated[str, typer.Option(
        "--held-out", metavar="SPLIT", help="The split the bank is scored on: test or val.")] = "test"
    split_seed: Annotated[str | None, typer.Option(
        "--split-seed", metavar="SEED", help="Seed the splits are cut with (default: randori's fixed one).")] = None
    bank: Annotated[Path | None, typer.Option(
        "--bank", dir_okay=False, help="Where the bank of texts that worked on train is written. "
        "Default: RESULTS/bank-train.json.")] = None
    concurrency: Annotated[int, typer.Option(min=1, help="Cases in flight at once.")] = 8
    results: Annotated[str, typer.Option("--results", "-r", help=RESULTS_HELP)] = DEFAULT_RESULTS
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json (the two stages' rates).")] = "table"


@takes(RobustRequest)
def robust(request: RobustRequest) -> None:
    """Train -> test in one command: run the attack (search or adaptive) on the train split of each
    suite, write the injection texts that reached their goal to a bank, then score the bank on the
    held-out split, whose user tasks and goals the attack never saw, against the test model and
    defense. Each held-out case gets the bank's most successful text with its own goal written in
    (bank\\[any_goal=true]). Prints train and held-out attack success side by side, with Wilson 95%
    intervals. Both runs go to one results store, so rerunning resumes."""
    from randori.attacks import get_attack
    from randori.cli.run_request import RunRequest
    from randori.tasks.splits import check_split

    _choice(request.fmt, ("table", "json"))
    check_split(request.held_out)
    if request.held_out == "train":
        raise UserError("--held-out train is the split the attack is optimised on: choose test or val")
    if get_attack(request.attack).kind != "adaptive":
        raise UserError(f"--attack {request.attack} is not optimised per case: choose search or adaptive "
                        "(see `randori attacks list`)")
    model = [request.model] if request.model else []
    train = RunRequest(suite=request.suite, model=model, defense=[request.defense], attack=[request.attack],
                       attacker_model=request.attacker_model, attacker_budget=request.attacker_budget,
                       benign=False, split="train", split_seed=request.split_seed, concurrency=request.concurrency,
                       results=request.results)
    train_rows, setup = _run_stage("train", train)
    bank = request.bank or setup.results_dir / "bank-train.json"
    found = _write_bank(setup.results_dir, {r["key"] for r in train_rows}, bank)
    stages = [_stage("train", train_rows)]
    if found:
        test = dataclasses.replace(
            train, model=[request.test_model] if request.test_model else model,
            defense=[request.test_defense or request.defense], attack=[f"bank[file={bank},any_goal=true]"],
            attacker_model=None, attacker_budget=None, benign=True, split=request.held_out)
        test_rows, _ = _run_stage("held-out", test)
        stages.append(_stage("held-out", test_rows))
    _show(request.fmt, stages, bank, found)


def _run_stage(stage: str, request: Any) -> tuple[list[dict[str, Any]], Any]:
    import contextlib
    import sys

    from randori.cli.run import _execute, _plan

    setup = request.check()
    setup.console.print(f"[bold]{stage}[/bold]: {request.attack[0]} on split {request.split}", highlight=False)
    batches, suites = _plan(setup)
    with contextlib.redirect_stdout(sys.stderr):  # the progress bar: stdout holds only the result
        outcome = _execute(setup, batches, suites)
    if outcome.interrupted:
        raise typer.Exit(130)
    return outcome.rows, setup


def _write_bank(results_dir: Path, keys: set[str], path: Path) -> int:
    """The texts that reached their goal in the train cases, written to `path`; how many."""
    from randori.attacks.bank import write_bank
    from randori.bench.store import open_existing
    from randori.bench.transfer import bank_entries

    if not path.parent.is_dir():
        raise UserError(f"cannot write {path}: directory {path.parent} does not exist")
    with open_existing(results_dir, readonly=True) as store:
        entries, _ = bank_entries(store, keys)
    write_bank(entries, path)
    return len(entries)


def _stage(stage: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    from randori.report.heldout import stage_row

    return stage_row(stage, rows)


def _show(fmt: str, stages: list[dict[str, Any]], bank: Path, found: int) -> None:
    if fmt == "json":
        _echo_json({"stages": stages, "bank": str(bank), "bank_texts": found})
        return
    from randori.report.heldout import held_out_lines

    typer.echo("\n".join(held_out_lines(stages)))
    typer.echo(f"bank: {found} text(s) that worked on train, in {bank}")
    if not found:
        typer.echo("No text reached its goal on train: there is nothing to score on the held-out split.")
