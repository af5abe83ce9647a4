"""The `randori` command line."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from randori.errors import FatalModelError, UserError, clip, scrub_secrets

app = typer.Typer(
    help="randori: measure how safely LLM agents behave when the data they touch is hostile.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


def _version(value: bool) -> None:
    if value:
        import randori

        typer.echo(f"randori {randori.__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Print randori's version and exit.")) -> None:
    pass


suites_app = typer.Typer(help="List, inspect and validate task suites.", no_args_is_help=True)
app.add_typer(suites_app, name="suites")

DEFAULT_MODEL = "scripted/gullible"
DEFAULT_RESULTS = "results"
RESULTS_HELP = "Results directory (holds randori.sqlite)."
# Bounds that catch a typo before it costs hours or memory; each error message states its bound.
MAX_REPEATS = 1000
MAX_RETRIES = 100
MAX_BUDGET = 1000  # the bound randori.attacks.adaptive puts on a spec's budget too
MAX_TIMEOUT = 86400.0
MAX_TEMPERATURE = 2.0


def _echo_json(obj: Any) -> None:
    typer.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def warn(message: str) -> None:
    typer.echo(f"randori: warning: {_one_line(scrub_secrets(message))}", err=True)


def _load_suites(names: list[str], prepare: bool = True) -> list[Any]:
    """The suites named, or every installed one. An unloadable suite that was asked for by name is an
    error; one that merely is installed (a broken plugin) is a warning, and the others go on."""
    from randori.registry import each_loadable
    from randori.suites import ready_suite, suite_names

    load: Callable[[str], Any] = ready_suite if prepare else _with_vectors
    if names:
        return [load(n) for n in names]
    suites = list(each_loadable(suite_names(), load, warn))
    if not suites:
        raise UserError("no suite can be loaded (see the warnings above)")
    return suites


def _with_vectors(name: str) -> Any:
    from randori.suites import get_suite

    suite = get_suite(name)
    suite.vectors  # noqa: B018  (reads vectors.yaml: a malformed one is reported now, as this suite's problem)
    return suite


def _results_dir(text: str) -> Path:
    if not text.strip():
        raise UserError("--results must name a directory (an empty name would write into the current one)")
    return Path(text)


def _choice(value: str, allowed: tuple[str, ...], option: str = "--format") -> str:
    if value not in allowed:
        raise UserError(f"unknown {option.lstrip('-')} '{value}' for {option} (use {', '.join(allowed)})")
    return value


def _number_in(option: str, low: float, high: float, unit: str = "") -> Callable[[Any], Any]:
    """An option callback refusing nan, inf and values outside [low, high], naming the range."""
    def check(value: Any) -> Any:
        if value is not None and (not math.isfinite(value) or not low <= value <= high):
            raise typer.BadParameter(f"must be a number{unit} from {low:g} to {high:g}, not {value}",
                                     param_hint=option)
        return value
    return check


def _check_base_url(option: str, url: str | None) -> None:
    if url is not None:
        from randori.agents.models.base import check_base_url

        check_base_url(url, option)


# `run --help` groups its options in these panels.
WHAT = "What to run"
MODEL = "Model settings"
ATTACKS = "Attacks and defenses"
LIMITS = "Limits and spend"
OUTPUT = "Output"


@app.command(short_help="Run a benchmark (resumes where the store left off).")
def run(
    suite: list[str] = typer.Option([], "--suite", "-s", metavar="SUITE",
                                    help="Suite to run (repeatable). Default: all.", rich_help_panel=WHAT),
    model: list[str] = typer.Option(
        [], "--model", "-m", metavar="MODEL", help="provider/model, e.g. openai/gpt-4o-mini or scripted/oracle "
        f"(repeatable: each model its own cases and rows). Default: $RANDORI_MODEL, else {DEFAULT_MODEL}.",
        rich_help_panel=MODEL),
    base_url: list[str] = typer.Option(
        [], "--base-url", help="Endpoint of an OpenAI-compatible server. Repeatable: the same model served at "
        "several addresses; each request goes to the least loaded, a failing one is left out for a while.",
        rich_help_panel=MODEL),
    attack: list[str] = typer.Option(["important_instructions"], "--attack", "-a",
                                     help="Attack (repeatable), NAME or NAME\\[key=value,...]; see `randori attacks "
                                     "list`. With 2+ attacks the report adds a 'max' row.", rich_help_panel=ATTACKS),
    defense: list[str] = typer.Option(["none"], "--defense", "-d",
                                      help="Defense (repeatable: one report row each). A+B stacks defenses; "
                                      "NAME\\[key=value] sets parameters; see `randori defenses list`.",
                                      rich_help_panel=ATTACKS),
    attacker_model: str | None = typer.Option(
        None, help="Attacker model of --attack adaptive (provider/model). Default: scripted/attacker for "
        "scripted agents, else the agent's own model.", rich_help_panel=ATTACKS),
    attacker_budget: int | None = typer.Option(None, min=1, max=MAX_BUDGET,
                                               help="Agent runs per case for --attack adaptive (default 10) and "
                                               "search (default 20).", rich_help_panel=ATTACKS),
    attacker_sees_trace: bool = typer.Option(False, "--attacker-sees-trace",
                                             help="The adaptive attacker also sees each try's tool calls and outputs.",
                                             rich_help_panel=ATTACKS),
    attacker_base_url: str | None = typer.Option(None, help="Endpoint of an OpenAI-compatible server for the "
                                                 "attacker model.", rich_help_panel=ATTACKS),
    user_task: list[str] = typer.Option([], "--user-task", "-u", help="Only these user tasks (repeatable).",
                                        rich_help_panel=WHAT),
    injection_task: list[str] = typer.Option([], "--injection-task", "-i",
                                             help="Only these injection tasks (repeatable).", rich_help_panel=WHAT),
    benign: bool = typer.Option(True, "--benign/--no-benign", help="Also run user tasks with no attack.",
                                rich_help_panel=WHAT),
    no_attack: bool = typer.Option(False, "--no-attack", help="Run no attacked cases at all.", rich_help_panel=WHAT),
    repeats: int = typer.Option(1, min=1, max=MAX_REPEATS, help="Run every case this many times.",
                                rich_help_panel=WHAT),
    concurrency: int = typer.Option(8, min=1, help="Cases in flight at once.", rich_help_panel=LIMITS),
    limit: int | None = typer.Option(None, "--limit", min=1, metavar="N",
                                     help="Run at most N of the cases not yet in the store (whole task pairs first, "
                                     "in seeded order); rerun to continue.", rich_help_panel=LIMITS),
    sample: float | None = typer.Option(
        None, "--sample", metavar="FRACTION", help="Run a FRACTION (0-1] of the plan, stratified by suite and "
        "user task and seeded; a larger fraction or a full run later reuses every case already stored.",
        callback=_number_in("--sample", 1e-9, 1.0), rich_help_panel=LIMITS),
    sample_seed: int = typer.Option(0, "--sample-seed", metavar="SEED", help="Seed of --sample and --limit.",
                                    rich_help_panel=LIMITS),
    max_cost: float | None = typer.Option(
        None, "--max-cost", metavar="USD", help="Stop cleanly before this run spends more than USD (at the price "
        "table's prices); rerun to continue.", callback=_number_in("--max-cost", 0.0, 1e9, " of dollars"),
        rich_help_panel=LIMITS),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and its estimated tokens and cost; "
                                 "run nothing.", rich_help_panel=LIMITS),
    temperature: str = typer.Option("0.0", help="Sampling temperature, sent as given; 'none' sends none "
                                    "(for models that reject the parameter).", rich_help_panel=MODEL),
    seed: int | None = typer.Option(None, help="Sampling seed, sent as given.", rich_help_panel=MODEL),
    max_tokens: int | None = typer.Option(None, min=1, help="Max output tokens per model call.",
                                          rich_help_panel=MODEL),
    reasoning_effort: str | None = typer.Option(
        None, help="Reasoning effort (e.g. low, medium, high), sent as given to providers that take it.",
        rich_help_panel=MODEL),
    max_steps: int = typer.Option(20, min=1, help="Model turns per case before the agent is stopped.",
                                  rich_help_panel=MODEL),
    timeout: float = typer.Option(120.0, help="Seconds one model request may take.",
                                  callback=_number_in("--timeout", 0.001, MAX_TIMEOUT, " of seconds"),
                                  rich_help_panel=MODEL),
    max_retries: int = typer.Option(
        4, min=0, max=MAX_RETRIES, help="Retries of a request after a rate limit, server error, timeout or "
        "dropped connection (exponential backoff with jitter; Retry-After is obeyed).", rich_help_panel=MODEL),
    provider_concurrency: int | None = typer.Option(
        None, min=1, help="Most requests in flight at once per server. Default: the provider's own "
        "(see `randori models`).", rich_help_panel=MODEL),
    adaptive: bool = typer.Option(
        True, "--adaptive/--no-adaptive", help="Adapt the requests in flight to rate limits and overload "
        "(halve on HTTP 429/529, grow back on success; pace by rate-limit headers), up to "
        "--provider-concurrency. --no-adaptive keeps that number fixed.", rich_help_panel=MODEL),
    prices: Path | None = typer.Option(None, "--prices", dir_okay=False,
                                       help="TOML price table overriding the built-in one (see docs).",
                                       rich_help_panel=OUTPUT),
    agent: str = typer.Option(
        "builtin", "--agent", help="The agent under test: builtin (driven by --model), MODULE:CALLABLE or a "
        "randori.agents entry point (a Python agent), or \"mcp:COMMAND ARGS...\" (a process that uses the "
        "case's tools over MCP). See README, 'Your own agent'.", rich_help_panel=WHAT),
    agent_version: str | None = typer.Option(None, help="Version of an external agent, part of every case key "
                                             "and report row.", rich_help_panel=WHAT),
    agent_timeout: float = typer.Option(600.0, help="Seconds one case of an external agent may take (wall clock).",
                                        callback=_number_in("--agent-timeout", 0.001, MAX_TIMEOUT, " of seconds"),
                                        rich_help_panel=LIMITS),
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP, rich_help_panel=OUTPUT),
) -> None:
    """Run a benchmark: benign cases, injection tasks alone, and every user x injection task under
    each attack, for each model and defense. Finished cases in the results store are skipped, so
    re-running resumes.

    Two runs on one results directory share the work: a case another live run has claimed is left to it."""
    from rich.console import Console

    from randori import cli_plan
    from randori.agents.external import get_agent
    from randori.agents.models import ModelSettings, get_model
    from randori.bench.report import print_summary
    from randori.bench.runner import Selection, plan
    from randori.bench.store import Store

    results_dir = _results_dir(results)
    agent_spec = get_agent(agent, agent_version, agent_timeout)
    for url in base_url:
        _check_base_url("--base-url", url)
    _check_base_url("--attacker-base-url", attacker_base_url)
    settings = ModelSettings(temperature=_temperature(temperature), seed=seed, max_tokens=max_tokens,
                             reasoning_effort=reasoning_effort)
    _use_prices(prices)
    console = Console(stderr=True)
    model_names = list(dict.fromkeys(model)) or [os.environ.get("RANDORI_MODEL") or ""]
    if agent_spec.external:
        if len(model_names) > 1:
            raise UserError(f"--agent {agent_spec.name} is the agent under test: give at most one --model (it "
                            "serves the defenses that ask a model)")
        model_names = [_defense_model(model[0] if model else None, model_names[0] or None, defense,
                                      agent_spec.name) or ""]
    elif not model_names[0]:
        model_names = [DEFAULT_MODEL]
        console.print(f"No --model given and RANDORI_MODEL unset: using {DEFAULT_MODEL} "
                      "(a scripted agent that obeys every injection; no API key needed).")
    if max_cost is not None:
        # An external agent's cases are priced under its own name (its reported tokens and its defense's).
        cli_plan.check_prices([agent_spec.label] if agent_spec.external else [m for m in model_names if m],
                              "--max-cost")
    # Several servers of one model: the case key names the model, never a server, so results do
    # not depend on which server answered and a run with more servers resumes one with fewer.
    options: dict[str, Any] = {"base_url": base_url if len(base_url) > 1 else base_url[0]} if base_url else {}
    chat_models = [get_model(name, settings, timeout=timeout, max_retries=max_retries, concurrency=provider_concurrency,
                             adaptive=adaptive, **options) if name else None for name in model_names]
    suites = _load_suites(suite)
    # The default attacker is the agent's own model, so it is served where the agent is.
    attacker_url = attacker_base_url or (base_url[0] if base_url and attacker_model is None else None)
    batches = []
    for chat_model in chat_models:
        sel = Selection(suites=suites, model=chat_model, attacks=[] if no_attack else attack, defenses=defense,
                        user_tasks=user_task, injection_tasks=injection_task, benign=benign,
                        repeats=repeats, attack_defaults={"attacker": attacker_model, "budget": attacker_budget,
                                                          "trace": attacker_sees_trace},
                        attacker_base_url=attacker_url, agent=agent_spec)
        batches.append(cli_plan.Batch(chat_model, cli_plan.subset(plan(sel), fraction=sample, seed=sample_seed)))
    cases = [c for b in batches for c in b.cases]
    by_name = {s.name: s for s in suites}
    subset_note = f" (a {sample:g} sample, seed {sample_seed})" if sample is not None else ""
    if dry_run:
        _dry_run(console, results_dir, batches, by_name, limit, sample_seed, subset_note)
        return
    with Store(results_dir) as store:
        done = store.done_keys()
        todo = cli_plan.limited([c for c in cases if c.key not in done], limit, sample_seed)
        console.print(f"{len(cases)} cases planned{subset_note}, {len(cases) - len(todo)} already in {store.path}"
                      + (f" or left for later (--limit {limit})" if limit is not None else "")
                      + f", {len(todo)} to run.", highlight=False, soft_wrap=True)
        cap = cli_plan.spend_cap(max_cost, cli_plan.estimator(store, by_name, chat_models), todo)
        names = [m for m in model_names if m]
        config = {"suites": [f"{s.name}@{s.version}" for s in suites], "model": ", ".join(names) or None,
                  "models": names,
                  **({"agent": agent_spec.name, "agent_version": agent_spec.version} if agent_spec.external else {}),
                  "settings": settings.key_fields(), "attacks": [] if no_attack else attack,
                  "defenses": list(defense), "repeats": repeats, "argv": _safe_argv(),
                  **_subset_config(sample, sample_seed, limit, max_cost)}
        run_id = store.start_run(config)
        status = "interrupted"
        keep = {c.key for c in todo}
        for b in batches:
            b.cases = [c for c in b.cases if c.key in keep]
        try:
            tally = _run_with_progress(batches, by_name, store, run_id,
                                       concurrency, max_steps, attacker_url, cap, agent_spec)
            status = "cost_cap" if cap is not None and cap.stopped else "finished"
        except KeyboardInterrupt:
            console.print("Interrupted: finished cases are saved; run the same command to resume.")
            raise typer.Exit(130) from None
        except FatalModelError as e:
            status = "auth_error" if e.category == "auth" else "stopped"
            raise
        finally:
            store.finish_run(run_id, status)
        keys = {c.key for c in cases}
        rows = [r for r in store.iter_cases() if r["key"] in keys]
    print_summary(rows)
    if tally["elsewhere"]:
        console.print(f"{tally['elsewhere']} case(s) were being run by another randori run on {results_dir}; "
                      "they are not in this summary.", highlight=False, soft_wrap=True)
    if cap is not None and cap.stopped:
        console.print(cli_plan.cap_message(cap, len(todo) - tally["ran"] - tally["elsewhere"]), highlight=False,
                      soft_wrap=True)
    compare_by = "defense" if len(set(defense)) > 1 else "model" if len(model_names) > 1 else None
    console.print(cli_plan.next_steps(results_dir, compare_by), highlight=False, soft_wrap=True)
    if tally["ran"] and tally["errors"] == tally["ran"]:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(tally["categories"].items()))
        typer.echo(f"randori: error: every case of this run failed ({kinds}); the errors are stored and the "
                   f"next run retries them. First error: {clip(_one_line(tally['first_error']), 300)}", err=True)
        raise typer.Exit(1)


def _subset_config(sample: float | None, seed: int, limit: int | None, max_cost: float | None) -> dict[str, Any]:
    from randori.bench.sample import describe

    out = describe(sample, seed, limit)
    if max_cost is not None:
        out["max_cost_usd"] = max_cost
    return out


def _dry_run(console: Any, results_dir: Path, batches: list[Any], suites: dict[str, Any], limit: int | None,
             seed: int, subset_note: str) -> None:
    """--dry-run: read the store if there is one (never create it) and print the plan with its cost."""
    from randori import cli_plan
    from randori.bench.store import STORE_FILE, open_existing

    cases = [c for b in batches for c in b.cases]
    store = open_existing(results_dir, readonly=True) if (results_dir / STORE_FILE).exists() else None
    try:
        done = store.done_keys() if store is not None else set()
        todo = cli_plan.limited([c for c in cases if c.key not in done], limit, seed)
        est = cli_plan.estimator(store, suites, [b.model for b in batches])
        cli_plan.print_dry_run(console, len(cases), len(cases) - len(todo), todo, est, subset_note)
    finally:
        if store is not None:
            store.close()
    import asyncio

    async def close() -> None:
        for b in batches:
            if b.model is not None:
                await b.model.aclose()

    asyncio.run(close())


def _defense_model(given: str | None, model_name: str | None, defenses: list[str], agent: str) -> str | None:
    """With an external agent, --model serves only defenses that ask a model before the agent starts
    (policy); it is loaded only for them."""
    from randori.agents.defenses import get_defense
    from randori.agents.external import asks_model

    if any(asks_model(get_defense(d)) for d in defenses):
        return model_name
    if given:
        warn(f"--model {given} is not used: the agent under test is {agent}, and no defense of this run asks a model")
    return None


def _use_prices(path: Path | None) -> None:
    """--prices FILE: checked now (a bad file is a user error before any work), then read by every
    cost computation of this process through RANDORI_PRICES."""
    if path is None:
        return
    from randori.bench.pricing import PRICES_ENV, load_prices

    load_prices(path)
    os.environ[PRICES_ENV] = str(path)


def _temperature(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= MAX_TEMPERATURE):
        raise UserError(f"--temperature must be a number from 0 to {MAX_TEMPERATURE:g}, or 'none', not '{text}'")
    return value


def _safe_argv() -> list[str]:
    # Keys may be passed on the command line by mistake; never store anything after --api-key, nor
    # the password of a URL (http://user:password@host), nor any secret the environment holds.
    out, skip = [], False
    for a in sys.argv[1:]:
        if skip:
            out.append("***")
            skip = False
        elif a.startswith("--api-key"):
            out.append("--api-key" if "=" not in a else "--api-key=***")
            skip = "=" not in a
        else:
            out.append(scrub_secrets(_URL_PASSWORD.sub(r"\1***@", a)))
    return out


_URL_PASSWORD = re.compile(r"(://[^/:@\s]*:)[^/@\s]*@")


def _run_with_progress(batches: list[Any], suites: dict[str, Any], store: Any, run_id: int, concurrency: int,
                       max_steps: int, attacker_base_url: str | None = None, cap: Any = None,
                       agent: Any = None) -> dict[str, Any]:
    """Run each model's cases (one model after another) under one progress bar; returns what this
    process did: cases run, errors (by category, and the first message) and cases left to another
    run that had claimed them. `cap` (a SpendCap) admits each case before it starts."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from randori.agents.agent import BUILTIN
    from randori.bench.runner import run_cases
    from randori.cli_plan import Meter

    total = sum(len(b.cases) for b in batches)
    meter = Meter()
    with Progress(BarColumn(bar_width=10), MofNCompleteColumn(),
                  TextColumn("{task.fields[status]}"), TimeRemainingColumn(),
                  transient=False, disable=not total) as progress:
        bar = progress.add_task("cases", total=total, status="")
        counts = {"errors": 0, "attacks": 0}
        tally: dict[str, Any] = {"ran": 0, "errors": 0, "elsewhere": 0, "categories": {}, "first_error": ""}

        def on_result(res: Any) -> None:
            if cap is not None:
                cap.record(res)
            if res is None:  # claimed or finished by another run on the same store
                tally["elsewhere"] += 1
                progress.update(bar, advance=1)
                return
            tally["ran"] += 1
            if res.status != "ok":
                tally["errors"] += 1
                tally["categories"][res.error_category] = tally["categories"].get(res.error_category, 0) + 1
                tally["first_error"] = tally["first_error"] or res.error_message or ""
            counts["errors"] += res.status != "ok"
            counts["attacks"] += bool(res.attack_succeeded)
            meter.add(res)
            status = f"{counts['attacks']} attacks succeeded, {counts['errors']} errors, {meter.text()}"
            load = getattr(current["model"], "status", None)  # issue 17: the requests in flight and rate limits
            if callable(load) and load():
                status += f"\n{load()}"
            progress.update(bar, advance=1, status=status)

        current: dict[str, Any] = {"model": None}

        async def go() -> None:
            for b in batches:
                current["model"] = b.model
                try:
                    if b.cases and (cap is None or not cap.stopped):
                        await run_cases(b.cases, suites, b.model, store, run_id, concurrency=concurrency,
                                        max_steps=max_steps, on_result=on_result,
                                        attacker_base_url=attacker_base_url, agent=agent or BUILTIN,
                                        admit=cap.admit if cap is not None else None)
                finally:
                    if b.model is not None:
                        await b.model.aclose()

        import asyncio  # lazy: keeps `randori --help` fast

        asyncio.run(go())
    return tally


@app.command(short_help="Summarise a results store: table, pivot, HTML report, json and csv.")
def report(
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP),
    fmt: str = typer.Option("table", "--format", "-f",
                            help="table, json (every table) or csv (one table, see --table)."),
    table: str = typer.Option("headline", "--table", "-t",
                              help="With --format csv: headline, pivot, tasks, budget, dos, detection, "
                              "code_rounds or code_cwe."),
    html: Path | None = typer.Option(None, "--html", help="Also write a self-contained HTML report to this file.",
                                     dir_okay=False),
    all_versions: bool = typer.Option(False, "--all-versions",
                                      help="Include results of suite versions other than the installed ones."),
    prices: Path | None = typer.Option(None, "--prices", dir_okay=False,
                                       help="TOML price table overriding the built-in one (see docs)."),
    wide: bool = typer.Option(False, "--wide", help="The full table: every rate with n and one decimal, and costs "
                              "per case (about 230 columns)."),
) -> None:
    """Summarise a results store: one row per (model, defense, attack, suite), plus pooled rows,
    in 80 columns (`--wide` for every column), and a model x defense pivot.
    `--html FILE` writes the report with figures; `--format json|csv` exports the tables for pandas.

    The store is opened read-only: a report never changes it."""
    from randori.bench.report import EXPORT_TABLES, JSON_KEYS, current_rows, export_tables, print_summary
    from randori.bench.store import open_existing

    results_dir = _results_dir(results)
    _choice(fmt, ("table", "json", "csv"))
    _use_prices(prices)
    _choice(table, tuple(EXPORT_TABLES), "--table")
    if html is not None and not html.parent.is_dir():
        raise UserError(f"cannot write {html}: directory {html.parent} does not exist")
    with open_existing(results_dir, readonly=True) as store:
        rows = list(store.iter_cases())
        runs = store.runs()
    kept, dropped = (rows, 0) if all_versions else current_rows(rows)
    tables = export_tables(kept, results_dir) if fmt != "table" or html is not None else None
    if html is not None:
        _write_html_report(html, kept, results_dir, dropped, runs, tables)
    if fmt == "json":
        assert tables is not None
        _echo_json({**{JSON_KEYS[k]: v for k, v in tables.items()}, "excluded_old_version_cases": dropped})
    elif fmt == "csv":
        from randori.bench.report import write_csv

        assert tables is not None
        write_csv(tables[table], sys.stdout)
    elif html is None:
        print_summary(kept, wide=wide)
        if dropped:
            typer.echo(f"({dropped} cases from other suite versions not shown; use --all-versions)")


def _write_html_report(path: Path, rows: list[dict[str, Any]], results: Path, dropped: int,
                       runs: list[dict[str, Any]], tables: Any) -> None:
    from rich.console import Console

    from randori.bench.report import render_html

    console = Console(stderr=True)
    with console.status(f"drawing figures for {len(rows)} cases..."):
        text = render_html(rows, results_dir=results, excluded=dropped, runs=runs, tables=tables)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}") from None
    console.print(f"Wrote {path} ({len(text) // 1024} KiB, {len(rows)} cases).")


@app.command(short_help="Browse a results store in a local web app.")
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
        raise UserError(f"the viewer needs its extra: pip install 'randori[viewer]' ({e.name} is missing)") from None
    _check_port(port)
    typer.echo(f"randori viewer for {results_dir} on http://127.0.0.1:{port}/ (Ctrl+C to stop)", err=True)
    uvicorn.run(create_app(results_dir), host="127.0.0.1", port=port, log_level="warning")


def _check_port(port: int) -> None:
    import socket

    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise UserError(f"port {port} on 127.0.0.1 is in use; pick another with --port") from None


@suites_app.command("list")
def suites_list(fmt: str = typer.Option("table", "--format", "-f", help="table or json.")) -> None:
    """Suites with their version and counts of tools, tasks, vectors and attacked cases."""
    from randori.bench.report import suite_counts

    _choice(fmt, ("table", "json"))
    rows = [suite_counts(s) for s in _load_suites([], prepare=False)]
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
    from randori.bench.text import wrap

    [s] = _load_suites([name], prepare=False)
    width = _terminal_width()

    def say(text: str, indent: str = "  ", more: str = "      ") -> None:
        typer.echo(wrap(text, width, indent, more))

    typer.echo(f"{s.name}@{s.version}  (user: {s.user_name})")
    typer.echo("\nUser tasks:")
    for tid, t in s.user_tasks.items():
        say(f"{tid} [{t.difficulty}] {t.prompt}")
        if t.distractors:
            say(f"wrong answers it rejects: {', '.join(map(str, t.distractors))}", "      ", "        ")
        for extra in t.tolerated_extras:
            what = extra.function + (f"({', '.join(f'{k}={v!r}' for k, v in extra.args.items())})"
                                     if extra.args else "")
            say(f"tolerates an extra {what}: {extra.reason}", "      ", "        ")
    typer.echo("\nInjection tasks:")
    for tid, it in s.injection_tasks.items():
        say(f"{tid} [{it.difficulty}] {it.goal}")
    typer.echo()
    say("Tools: " + ", ".join(s.tool_map), "", "  ")
    for v in s.tool_vectors.values():
        say(f"Tool-description vector {v.id} (in {v.tool}): {v.description}", "", "  ")


@suites_app.command("check")
def suites_check(names: list[str] = typer.Argument(None, help="Suites to check. Default: all.")) -> None:
    """Validate suites against every rule of README 'Validity': the oracle passes and a do-nothing
    agent fails; checks reject real wrong values (exact, plausible) and one extra state-changing
    call (side_effects); answer checks accept correct answers however phrased (phrasing) and reject
    pasted data and hedged answers (distractors); a user task never achieves an attacker's goal.

    Prints, per suite and rule, how many variants held of how many tried; exits 1 on any problem,
    including an installed suite that cannot be loaded."""
    import textwrap

    from randori.suites import suite_names
    from randori.tasks.validate import RULES

    suites = _load_suites(names or [], prepare=False)
    failed = not names and len(suites) < len(suite_names())  # a broken plugin (warned about above)
    width = min(_terminal_width(), 100)
    for s, result in zip(suites, _check_in_parallel([s.name for s in suites]), strict=True):
        problems, tried, held = result
        notes = [n for n in s.placeholder_problems() if problems or "never places" in n]
        if problems:
            failed = True
            typer.echo(f"{s.name}@{s.version}: {len(problems)} problem(s)")
            for p in problems:
                typer.echo(textwrap.fill(p, width, initial_indent="  ", subsequent_indent="    "))
        else:
            typer.echo(f"{s.name}@{s.version}: ok ({len(s.user_tasks)} user tasks, "
                       f"{len(s.injection_tasks)} injection tasks)")
        if tried:
            counts = [f"{rule} {held.get(rule, 0)}/{tried[rule]}" for rule in RULES if tried.get(rule)]
            typer.echo(textwrap.fill("held/tried: " + ", ".join(counts), width, initial_indent="  ",
                                     subsequent_indent="    ", break_on_hyphens=False))
        for n in notes:
            typer.echo(f"  note: {n}")
    if failed:
        raise typer.Exit(1)


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((80, 24)).columns


CheckResult = tuple[list[str], dict[str, int], dict[str, int]]


def _check_one(name: str) -> CheckResult:
    """Every rule on one suite, as plain data (it may run in a worker process)."""
    from randori.registry import describe_exception
    from randori.suites import get_suite
    from randori.tasks.validate import check_suite

    try:
        r = check_suite(get_suite(name))
    except UserError as e:
        return [str(e)], {}, {}
    except Exception as e:  # a suite's own code (a plugin) failed: its problem, not the checker's
        return [f"cannot be checked: {describe_exception(e)}"], {}, {}
    return [str(p) for p in r.problems], dict(r.tried), dict(r.held)


def _check_in_parallel(names: list[str]) -> list[CheckResult]:
    """Suites are independent: check them in worker processes, one per core (the rules replay
    thousands of variants per suite)."""
    import multiprocessing
    import os

    workers = min(len(names), os.cpu_count() or 1)
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_check_one(n) for n in names]
    # Largest first, so the longest suite does not start last.
    order = sorted(range(len(names)), key=lambda i: names[i] != "workspace")
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        done = dict(zip(order, pool.map(_check_one, [names[i] for i in order], chunksize=1), strict=True))
    return [done[i] for i in range(len(names))]


attacks_app = typer.Typer(help="Attacks that write the injected text.", no_args_is_help=True)
defenses_app = typer.Typer(help="Defenses an agent can run with.", no_args_is_help=True)
app.add_typer(attacks_app, name="attacks")
app.add_typer(defenses_app, name="defenses")


def _mount_code_track() -> None:
    from randori.code.cli import code_app

    app.add_typer(code_app, name="code", help="Secure code generation: generate, analyse, test in a sandbox, repair.")


_mount_code_track()

mcp_app = typer.Typer(help="Serve a case's tools over MCP to a client you start yourself.", no_args_is_help=True)
app.add_typer(mcp_app, name="mcp")


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


def _mount_compare() -> None:
    from randori.cli_compare import compare

    app.command("compare", short_help="Paired differences between configurations, with p-values.")(compare)


_mount_compare()


@attacks_app.command("list")
def attacks_list() -> None:
    """Every registered attack (built-in and from plugins) with a one-line description."""
    from randori.attacks import attack_names, get_attack
    from randori.registry import each_loadable

    entries = [(attack.name, attack.description) for attack in each_loadable(attack_names(), get_attack, warn)]
    entries.append(("max (a report row)", "Broken if any attack of the run broke it; shown whenever 2+ attacks ran."))
    _listing(entries)


@attacks_app.command("export")
def attacks_export(
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP),
    output: Path | None = typer.Option(None, "--output", "-o", dir_okay=False,
                                       help="Write the bank to this file (default: print it)."),
) -> None:
    """Write the injection texts that succeeded in a results store as a bank (JSON), to replay them
    against another model or defense with --attack "bank[file=FILE]". The store is read-only."""
    from randori.attacks.bank import write_bank
    from randori.bench.store import open_existing
    from randori.bench.transfer import bank_entries

    if output is not None and not output.parent.is_dir():
        raise UserError(f"cannot write {output}: directory {output.parent} does not exist")
    with open_existing(_results_dir(results), readonly=True) as store:
        entries, skipped = bank_entries(store)
    text = write_bank(entries, output)
    if output is None:
        typer.echo(text)
    else:
        typer.echo(f"Wrote {len(entries)} text(s) to {output}.", err=True)
    if skipped:
        warn(f"{skipped} successful case(s) left out: their suite version is not the installed one")


@defenses_app.command("list")
def defenses_list() -> None:
    """Every registered defense (built-in and from plugins) with a one-line description."""
    from randori.agents.defenses import defense_names, get_defense
    from randori.registry import each_loadable

    _listing([(d.name, d.description) for d in each_loadable(defense_names(), get_defense, warn)])
    from randori.bench.text import wrap

    typer.echo(wrap("Stack defenses with A+B (e.g. tool_filter+detector); set parameters with NAME[key=value] "
                    "(e.g. detector[mode=abort]).", _terminal_width(), "", ""))


def _listing(entries: list[tuple[str, str]]) -> None:
    """Names and descriptions in two columns, descriptions wrapped at word boundaries to the terminal.
    A name wider than its column (a third of the width) stands on its own line above its description;
    in a terminal too narrow for two columns, every description goes under its name."""
    from randori.bench.text import wrap

    width = _terminal_width()
    name_w = min(max(len(n) for n, _ in entries), max(12, width // 3)) + 2
    if width - name_w < 30:
        name_w = 4
    for name, text in entries:
        if len(name) < name_w - 1:
            typer.echo(wrap(f"{name:{name_w - 1}} {text}", width, "", " " * name_w))
        else:
            typer.echo(name)
            typer.echo(wrap(text, width, " " * name_w, " " * name_w))


models_app = typer.Typer(help="Model providers: list them (no subcommand), or check one.",
                         invoke_without_command=True)
app.add_typer(models_app, name="models")


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
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table("provider", "installed", "environment", "concurrency", "example", "what it is")
    for r in rows:
        installed = "yes" if r["installed"] else f"no: {r['install'] or 'missing ' + ', '.join(r['missing'])}"
        if r.get("note"):
            installed += f" ({r['note']})"
        env = ", ".join(f"{k}{' (set)' if v else ''}" for k, v in r["env"].items()) or "-"
        t.add_row(r["provider"], escape(installed), env, str(r["max_concurrency"] or "-"), r["example"],
                  escape(r["description"]))
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    console.print(t)


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


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_cli(argv))


def run_cli(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit status. Every failure a user can cause ends here as
    one line `randori: error: ...` (status 2) instead of a traceback; RANDORI_DEBUG=1 shows the
    traceback of an unexpected one."""
    import sqlite3

    # Typer may vendor its own copy of click: take click's exception classes from the one it uses.
    click_classes: dict[str, type[Exception]] = {
        c.__name__: c for c in typer.BadParameter.__mro__ if issubclass(c, Exception)}
    usage_error, click_exception = click_classes["UsageError"], click_classes["ClickException"]
    try:
        code = app(args=argv, prog_name="randori", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except click_exception as caught:
        if type(caught).__name__ == "NoArgsIsHelpError":
            return 2  # the help is already printed
        e: Any = caught
        message: str = e.format_message()
        if isinstance(caught, usage_error):
            ctx = getattr(caught, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            return _fail(message.rstrip(".") + hint)
        return _fail(message, e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("randori: interrupted; finished cases are saved, run the same command to resume.", err=True)
        return 130
    except (UserError, FatalModelError) as e:
        return _fail(str(e))
    except sqlite3.Error as e:
        return _fail(f"results store: {e}")
    except OSError as e:
        if isinstance(e, BrokenPipeError):  # `randori report | head`: the reader has gone, say nothing
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (Python flushes stdout at exit)
            return 1
        return _fail(f"{e.strerror or e}" + (f": {e.filename}" if e.filename else ""))
    except Exception as e:
        if os.environ.get("RANDORI_DEBUG"):
            import traceback

            typer.echo(scrub_secrets(traceback.format_exc()), err=True)
        from randori.registry import describe_exception

        return _fail(f"internal error: {describe_exception(e)} (a bug in randori or a plugin; "
                     "RANDORI_DEBUG=1 shows where)", 1)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _fail(message: str, code: int = 2) -> int:
    typer.echo(f"randori: error: {_one_line(scrub_secrets(message))}", err=True)
    return code
