"""The `randori` command line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import typer

from randori.errors import AuthError, UserError

app = typer.Typer(
    help="randori: measure how safely LLM agents behave when the data they touch is hostile.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
suites_app = typer.Typer(help="List, inspect and validate task suites.", no_args_is_help=True)
app.add_typer(suites_app, name="suites")

DEFAULT_MODEL = "scripted/gullible"
DEFAULT_RESULTS = Path("results")


def _echo_json(obj: Any) -> None:
    typer.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def _load_suites(names: list[str]) -> list[Any]:
    from randori.suites import get_suite, suite_names

    return [get_suite(n) for n in (names or suite_names())]


@app.command()
def run(
    suite: list[str] = typer.Option([], "--suite", "-s", help="Suite to run (repeatable). Default: all."),
    model: str | None = typer.Option(
        None, "--model", "-m", help="provider/model, e.g. openai/gpt-4o-mini or scripted/oracle. "
        f"Default: $RANDORI_MODEL, else {DEFAULT_MODEL}."),
    base_url: str | None = typer.Option(None, help="Endpoint of an OpenAI-compatible server."),
    attack: list[str] = typer.Option(["important_instructions"], "--attack", "-a",
                                     help="Attack (repeatable); see `randori attacks list`."),
    defense: list[str] = typer.Option(["none"], "--defense", "-d",
                                      help="Defense (repeatable); see `randori defenses list`."),
    user_task: list[str] = typer.Option([], "--user-task", "-u", help="Only these user tasks (repeatable)."),
    injection_task: list[str] = typer.Option([], "--injection-task", "-i",
                                             help="Only these injection tasks (repeatable)."),
    benign: bool = typer.Option(True, "--benign/--no-benign", help="Also run user tasks with no attack."),
    no_attack: bool = typer.Option(False, "--no-attack", help="Run no attacked cases at all."),
    repeats: int = typer.Option(1, min=1, help="Run every case this many times."),
    concurrency: int = typer.Option(8, min=1, help="Cases in flight at once."),
    temperature: float | None = typer.Option(0.0, help="Sampling temperature, sent as given."),
    seed: int | None = typer.Option(None, help="Sampling seed, sent as given."),
    max_tokens: int | None = typer.Option(None, help="Max output tokens per model call."),
    max_steps: int = typer.Option(20, min=1, help="Model turns per case before the agent is stopped."),
    results: Path = typer.Option(DEFAULT_RESULTS, "--results", "-r", help="Results directory."),
) -> None:
    """Run a benchmark: benign cases, injection tasks alone, and every user x injection task under
    each attack. Finished cases in the results store are skipped, so re-running resumes."""
    from rich.console import Console

    from randori.agents.models import ModelSettings, get_model
    from randori.bench.report import print_summary
    from randori.bench.runner import Selection, plan
    from randori.bench.store import Store

    console = Console(stderr=True)
    model_name = model or os.environ.get("RANDORI_MODEL")
    if not model_name:
        model_name = DEFAULT_MODEL
        console.print(f"No --model given and RANDORI_MODEL unset: using {DEFAULT_MODEL} "
                      "(a scripted agent that obeys every injection; no API key needed).")
    settings = ModelSettings(temperature=temperature, seed=seed, max_tokens=max_tokens)
    options: dict[str, Any] = {"base_url": base_url} if base_url else {}
    chat_model = get_model(model_name, settings, **options)
    suites = _load_suites(suite)
    sel = Selection(suites=suites, model=chat_model, attacks=[] if no_attack else attack, defenses=defense,
                    user_tasks=user_task, injection_tasks=injection_task, benign=benign,
                    repeats=repeats)
    cases = plan(sel)
    with Store(results) as store:
        done = store.done_keys()
        todo = [c for c in cases if c.key not in done]
        console.print(f"{len(cases)} cases planned, {len(cases) - len(todo)} already in {store.path}, "
                      f"{len(todo)} to run.")
        config = {"suites": [f"{s.name}@{s.version}" for s in suites], "model": model_name,
                  "settings": settings.key_fields(), "attacks": list(sel.attacks),
                  "defenses": list(defense), "repeats": repeats, "argv": _safe_argv()}
        run_id = store.start_run(config)
        status = "interrupted"
        try:
            _run_with_progress(todo, {s.name: s for s in suites}, chat_model, store, run_id,
                               concurrency, max_steps)
            status = "finished"
        except KeyboardInterrupt:
            console.print("Interrupted: finished cases are saved; run the same command to resume.")
            raise typer.Exit(130) from None
        except AuthError:
            status = "auth_error"
            raise
        finally:
            store.finish_run(run_id, status)
        keys = {c.key for c in cases}
        rows = [r for r in store.iter_cases() if r["key"] in keys]
    print_summary(rows)


def _safe_argv() -> list[str]:
    # Keys may be passed on the command line by mistake; never store anything after --api-key.
    out, skip = [], False
    for a in sys.argv[1:]:
        if skip:
            out.append("***")
            skip = False
        elif a.startswith("--api-key"):
            out.append("--api-key" if "=" not in a else "--api-key=***")
            skip = "=" not in a
        else:
            out.append(a)
    return out


def _run_with_progress(todo: list[Any], suites: dict[str, Any], model: Any, store: Any, run_id: int,
                       concurrency: int, max_steps: int) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from randori.bench.runner import run_cases

    with Progress(TextColumn("[bold]running"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[status]}"), TimeRemainingColumn(),
                  transient=False, disable=not todo) as progress:
        bar = progress.add_task("cases", total=len(todo), status="")
        counts = {"errors": 0, "attacks": 0}

        def on_result(res: Any) -> None:
            counts["errors"] += res.status != "ok"
            counts["attacks"] += bool(res.attack_succeeded)
            progress.update(bar, advance=1,
                            status=f"attacks succeeded {counts['attacks']}, errors {counts['errors']}")

        async def go() -> None:
            try:
                await run_cases(todo, suites, model, store, run_id, concurrency=concurrency,
                                max_steps=max_steps, on_result=on_result)
            finally:
                await model.aclose()

        asyncio.run(go())


@app.command()
def report(
    results: Path = typer.Option(DEFAULT_RESULTS, "--results", "-r", help="Results directory."),
    fmt: str = typer.Option("table", "--format", "-f", help="table or json."),
    all_versions: bool = typer.Option(False, "--all-versions",
                                      help="Include results of suite versions other than the installed ones."),
) -> None:
    """Summarise a results store: one row per (model, defense, attack, suite), plus pooled rows."""
    from randori.bench.metrics import summarize
    from randori.bench.report import current_rows, print_summary
    from randori.bench.store import open_existing

    if fmt not in ("table", "json"):
        raise UserError(f"unknown format '{fmt}' (use table or json)")
    with open_existing(results) as store:
        rows = list(store.iter_cases())
    kept, dropped = (rows, 0) if all_versions else current_rows(rows)
    if fmt == "json":
        _echo_json({"rows": summarize(kept), "excluded_old_version_cases": dropped})
        return
    print_summary(kept)
    if dropped:
        typer.echo(f"({dropped} cases from other suite versions not shown; use --all-versions)")


@suites_app.command("list")
def suites_list(fmt: str = typer.Option("table", "--format", "-f", help="table or json.")) -> None:
    """Suites with their version and counts of tools, tasks, vectors and attacked cases."""
    from randori.bench.report import suite_counts

    rows = [suite_counts(s) for s in _load_suites([])]
    if fmt == "json":
        _echo_json(rows)
        return
    from rich.console import Console
    from rich.table import Table

    t = Table("suite", "version", "tools", "user tasks", "injection tasks", "vectors", "attacked cases")
    for r in rows:
        t.add_row(r["name"], r["version"], str(r["tools"]), str(r["user_tasks"]),
                  str(r["injection_tasks"]), str(r["vectors"]), str(r["attacked_cases"]))
    if len(rows) > 1:
        t.add_row("total", "", *(str(sum(r[k] for r in rows)) for k in
                                 ("tools", "user_tasks", "injection_tasks", "vectors", "attacked_cases")))
    Console().print(t)


@suites_app.command("show")
def suites_show(name: str = typer.Argument(..., help="Suite name.")) -> None:
    """The tasks of one suite: ids, difficulty, prompts and goals."""
    from randori.suites import get_suite

    s = get_suite(name)
    typer.echo(f"{s.name}@{s.version}  (user: {s.user_name})")
    typer.echo("\nUser tasks:")
    for tid, t in s.user_tasks.items():
        typer.echo(f"  {tid} [{t.difficulty}] {t.prompt}")
    typer.echo("\nInjection tasks:")
    for tid, it in s.injection_tasks.items():
        typer.echo(f"  {tid} [{it.difficulty}] {it.goal}")
    typer.echo("\nTools: " + ", ".join(s.tool_map))


@suites_app.command("check")
def suites_check(names: list[str] = typer.Argument(None, help="Suites to check. Default: all.")) -> None:
    """Validate suites against every rule of DESIGN.md 'Validity' (oracle passes, do-nothing fails,
    injection ground truths work, every task reaches a vector, checks compare arguments exactly)."""
    from randori.tasks.validate import validate_suite

    failed = False
    for s in _load_suites(names or []):
        problems = validate_suite(s)
        if problems:
            failed = True
            typer.echo(f"{s.name}@{s.version}: {len(problems)} problem(s)")
            for p in problems:
                typer.echo(f"  {p}")
        else:
            typer.echo(f"{s.name}@{s.version}: ok ({len(s.user_tasks)} user tasks, "
                       f"{len(s.injection_tasks)} injection tasks)")
    if failed:
        raise typer.Exit(1)


attacks_app = typer.Typer(help="Attacks that write the injected text.", no_args_is_help=True)
defenses_app = typer.Typer(help="Defenses an agent can run with.", no_args_is_help=True)
app.add_typer(attacks_app, name="attacks")
app.add_typer(defenses_app, name="defenses")


@attacks_app.command("list")
def attacks_list() -> None:
    """Every registered attack (built-in and from plugins) with a one-line description."""
    from randori.attacks import attack_names, get_attack

    for name in attack_names():
        typer.echo(f"{name:28} {get_attack(name).description}")


@defenses_app.command("list")
def defenses_list() -> None:
    """Every registered defense (built-in and from plugins) with a one-line description."""
    from randori.agents.defenses import defense_names, get_defense

    for name in defense_names():
        typer.echo(f"{name:20} {get_defense(name).description}")


def main() -> None:
    try:
        app()
    except (UserError, AuthError) as e:
        typer.echo(f"randori: error: {e}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("randori: interrupted; finished cases are saved, run the same command to resume.",
                   err=True)
        sys.exit(130)
