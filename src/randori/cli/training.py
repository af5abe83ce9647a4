"""`randori training ...`: the rows a trainer samples episodes from (docs/guides/training.md)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from randori.cli.common import _load_suites

training_app = typer.Typer(help="randori's cases as environments for reinforcement-learning trainers.",
                           no_args_is_help=True)


@training_app.command("dataset")
def training_dataset(
        suites: list[str] = typer.Argument(..., help="Suites to take episodes from (e.g. banking workspace)."),
        split: str | None = typer.Option(None, "--split", help="train, val or test: only the cases whose user task "
                                         "and injection task are both in it (see `randori suites splits`). "
                                         "Default: every case."),
        split_seed: str | None = typer.Option(None, "--split-seed", metavar="SEED",
                                              help="Seed the splits are cut with. Default: randori's fixed seed."),
        attacks: list[str] = typer.Option(["important_instructions"], "--attack", "-a",
                                          help="Static attack of the attacked rows. Repeatable."),
        defense: str = typer.Option("none", "--defense", "-d", help="Defense at the tool boundary in every row."),
        benign: bool = typer.Option(True, "--benign/--no-benign", help="Also a row per user task alone."),
        repeats: int = typer.Option(1, "--repeats", min=1, max=1000, help="Rows per case, seeds 0..N-1."),
        output: Path = typer.Option(..., "--output", "-o", help="JSON lines file to write (one row per line)."),
) -> None:
    """Write the rows of an episode dataset: each has `prompt` (the system and user message the episode
    starts with) and the episode's spec (suite, user_task, injection_task, attack, defense, seed, split,
    split_seed), which `reset(**row)` of randori.training.trl's environments reads back. Load it with
    `datasets.load_dataset("json", data_files=PATH)`."""
    from randori.errors import UserError
    from randori.tasks.splits import DEFAULT_SEED
    from randori.training import dataset

    names = [s.name for s in _load_suites(suites)]
    specs = [spec for name in names
             for spec in dataset.specs(name, split=split, split_seed=split_seed or DEFAULT_SEED, attacks=attacks,
                                       defense=defense, benign=benign, repeats=repeats)]
    if not specs:
        raise UserError("no episode in this selection (an empty split, or --no-benign and no attacked case)")
    rows = dataset.rows(specs)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".partial")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(output)  # a crash leaves no half-written dataset under the name
    attacked = sum(r["injection_task"] is not None for r in rows)
    typer.echo(f"{len(rows)} rows ({len(rows) - attacked} benign, {attacked} attacked) from "
               f"{', '.join(names)}{f' split {split}' if split else ''} -> {output}")
