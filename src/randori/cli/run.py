"""`randori run`: plan a benchmark, run it with a progress bar, summarise it."""

from __future__ import annotations

import math
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import typer

from randori.cli.common import (
    DEFAULT_MODEL,
    DEFAULT_RESULTS,
    MAX_BUDGET,
    MAX_REPEATS,
    MAX_RETRIES,
    MAX_TEMPERATURE,
    MAX_TIMEOUT,
    MAX_TOOL_CALLS_CAP,
    RESULTS_HELP,
    _check_base_url,
    _choice,
    _load_suites,
    _number_in,
    _one_line,
    _results_dir,
    _use_prices,
    warn,
)
from randori.errors import FatalModelError, UserError, clip, scrub_secrets

# `run --help` groups its options in these panels.
WHAT = "What to run"
MODEL = "Model settings"
ATTACKS = "Attacks and defenses"
LIMITS = "Limits and spend"
OUTPUT = "Output"


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
    concurrency: int = typer.Option(8, min=1, help="Cases in flight at once (over all workers).",
                                    rich_help_panel=LIMITS),
    executor: str = typer.Option(
        "inprocess", "--executor", metavar="EXECUTOR", help="Where cases run: inprocess, processes\\[=N] (N worker "
        "processes, default one per core) or ray\\[=ADDRESS] (a local Ray cluster, or an existing one; needs "
        "randori\\[ray]). See docs/guides/cluster.md.", rich_help_panel=LIMITS),
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
    max_tool_calls: int | None = typer.Option(
        None, "--max-tool-calls", min=1, max=MAX_TOOL_CALLS_CAP, help="Tool calls the built-in agent runs from one "
        "model reply; the rest are answered with an error the model sees. Default: 32.", rich_help_panel=LIMITS),
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
        "case's tools over MCP). See docs/guides/your-own-agent.md.", rich_help_panel=WHAT),
    agent_version: str | None = typer.Option(None, help="Version of an external agent, part of every case key "
                                             "and report row.", rich_help_panel=WHAT),
    agent_timeout: float = typer.Option(600.0, help="Seconds one case of an external agent may take (wall clock).",
                                        callback=_number_in("--agent-timeout", 0.001, MAX_TIMEOUT, " of seconds"),
                                        rich_help_panel=LIMITS),
    agent_in_process: bool = typer.Option(False, "--agent-in-process", help="Run a Python agent in randori's own "
                                          "process (for debugging): its results are marked as judged in reach of "
                                          "the agent.", rich_help_panel=WHAT),
    agent_reuse: int | None = typer.Option(None, "--agent-reuse", min=1, help="Cases one agent process serves in "
                                           "turn, a fresh MCP session each (the process must read cases on stdin; "
                                           "see docs/guides/your-own-agent.md). Default: 1 for an MCP agent, "
                                           "100 for a Python agent's worker.", rich_help_panel=WHAT),
    agent_network: str = typer.Option("open", "--agent-network", help="open (the agent reaches its provider) or "
                                      "none (loopback only: the case's MCP server).", rich_help_panel=WHAT),
    agent_bind: list[str] = typer.Option([], "--agent-bind", help="A folder or file an external agent may read "
                                         "besides its own installation and the current folder; PATH:rw to let it "
                                         "write there too (repeatable).",
                                         rich_help_panel=WHAT),
    results: str = typer.Option(DEFAULT_RESULTS, "--results", "-r", help=RESULTS_HELP, rich_help_panel=OUTPUT),
    otel: str | None = typer.Option(None, "--otel", metavar="TARGET", help="Also emit each finished case as "
                                    "OpenTelemetry GenAI spans: to an OTLP/HTTP endpoint (http://HOST:4318) or "
                                    "appended to a JSON lines FILE. Needs randori\\[otel].", rich_help_panel=OUTPUT),
) -> None:
    """Run a benchmark: benign cases, injection tasks alone, and every user x injection task under
    each attack, for each model and defense. Finished cases in the results store are skipped, so
    re-running resumes.

    Two runs on one results directory share the work: a case another live run has claimed is left to it."""
    from rich.console import Console

    from randori.agents.external import get_agent
    from randori.agents.external.container import NETWORKS
    from randori.agents.models import ModelSettings, get_model
    from randori.bench.executors import get_executor
    from randori.bench.report import print_summary
    from randori.bench.runner import Selection, plan
    from randori.bench.store import Store
    from randori.cli import plan as cli_plan

    results_dir = _results_dir(results)
    first_executor = get_executor(executor)  # a bad --executor is one line now, before any planning
    _choice(agent_network, NETWORKS, "--agent-network")
    for path in agent_bind:
        if not os.path.exists(path.removesuffix(":rw")):
            raise UserError(f"--agent-bind {path}: no such file or folder")
    agent_spec = get_agent(agent, agent_version, agent_timeout, in_process=agent_in_process, reuse=agent_reuse,
                           network=agent_network, binds=agent_bind, hidden=[str(results_dir)])
    if max_tool_calls is not None:
        if agent_spec.external:
            raise UserError(f"--max-tool-calls caps the built-in agent; --agent {agent_spec.name} runs its own loop")
        agent_spec = agent_spec.capped(max_tool_calls)
    if agent_spec.isolation().get("agent_isolation_note"):
        warn(f"the agent's container: {agent_spec.isolation()['agent_isolation_note']}")
    for url in base_url:
        _check_base_url("--base-url", url)
    _check_base_url("--attacker-base-url", attacker_base_url)
    settings = ModelSettings(temperature=_temperature(temperature), seed=seed, max_tokens=max_tokens,
                             reasoning_effort=reasoning_effort)
    _use_prices(prices)
    if otel:
        from randori.export.otel import check as check_otel

        check_otel(otel)
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
    if not dry_run:  # worker processes start now and load the suites while this process plans
        from randori.suites import suite_names

        first_executor.warm(list(dict.fromkeys(suite)) or suite_names(), [m for m in model_names if m])
    chat_models = [get_model(name, settings, timeout=timeout, max_retries=max_retries, concurrency=provider_concurrency,
                             adaptive=adaptive, **options, **(_placeholder_key(name) if dry_run else {}))
                   if name else None for name in model_names]
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
                  **agent_spec.isolation(),
                  "settings": settings.key_fields(), "attacks": [] if no_attack else attack,
                  "defenses": list(defense), "repeats": repeats, "argv": _safe_argv(),
                  **({"max_tool_calls": max_tool_calls} if max_tool_calls is not None else {}),
                  **_plugin_goals(suites),
                  **_subset_config(sample, sample_seed, limit, max_cost)}
        spans = _otel_sink(otel) if otel else None
        run_id = store.start_run(config)
        status = "interrupted"
        keep = {c.key for c in todo}
        for b in batches:
            b.cases = [c for c in b.cases if c.key in keep]
        interrupted = False
        try:
            tally = _run_with_progress(batches, by_name, store, run_id,
                                       concurrency, max_steps, attacker_url, cap, agent_spec, spans,
                                       executor, first_executor)
            status = "cost_cap" if cap is not None and cap.stopped else "finished"
        except KeyboardInterrupt:
            interrupted = True
            _second_interrupt_quits()
        except FatalModelError as e:
            status = "auth_error" if e.category == "auth" else "stopped"
            raise
        finally:
            store.finish_run(run_id, status)
            if spans is not None:
                spans.close()
        keys = {c.key for c in cases}
        rows = [r for r in store.iter_cases() if r["key"] in keys]
    print_summary(rows)
    if interrupted:
        console.print(f"Interrupted: {len(rows)} of {len(cases)} cases are saved in {results_dir}; run the same "
                      "command to resume.", highlight=False, soft_wrap=True)
        raise typer.Exit(130)
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
        first = clip(_one_line(_first_line(tally["first_error"])), 300)
        typer.echo(f"randori: error: every case of this run failed ({kinds}); the errors are stored and the "
                   f"next run retries them. First error: {first}", err=True)
        raise typer.Exit(1)


def _first_line(error: str) -> str:
    """A stored error without the traceback after it (its first line says what failed, and where)."""
    return error.split("\nTraceback (most recent call last):", 1)[0]


def _plugin_goals(suites: list[Any]) -> dict[str, Any]:
    """The injection goals of plugin suites, kept with the run: the viewer shows them without
    importing the plugin."""
    from randori.suites import is_plugin

    goals = {f"{s.name}@{s.version}": {tid: t.goal for tid, t in s.injection_tasks.items()}
             for s in suites if is_plugin(s.name)}
    return {"goals": goals} if goals else {}


def _subset_config(sample: float | None, seed: int, limit: int | None, max_cost: float | None) -> dict[str, Any]:
    from randori.bench.sample import describe

    out = describe(sample, seed, limit)
    if max_cost is not None:
        out["max_cost_usd"] = max_cost
    return out


def _dry_run(console: Any, results_dir: Path, batches: list[Any], suites: dict[str, Any], limit: int | None,
             seed: int, subset_note: str) -> None:
    """--dry-run: read the store if there is one (never create it) and print the plan with its cost."""
    from randori.bench.store import STORE_FILE, open_existing
    from randori.cli import plan as cli_plan

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


def _placeholder_key(name: str) -> dict[str, Any]:
    """--dry-run sends no request: a provider that reads an API key gets a random placeholder, so a
    plan and its cost can be seen before there is a key (only the run itself needs one)."""
    import secrets

    from randori.agents.models import PROVIDER_INFO

    info = PROVIDER_INFO.get(name.partition("/")[0])
    return {"api_key": secrets.token_hex(16)} if info and any(v.endswith("API_KEY") for v in info.env) else {}


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


def _otel_sink(target: str) -> Any:
    from randori.export.otel import sink

    return sink(target)


def _run_with_progress(batches: list[Any], suites: dict[str, Any], store: Any, run_id: int, concurrency: int,
                       max_steps: int, attacker_base_url: str | None = None, cap: Any = None,
                       agent: Any = None, on_case: Any = None, executor: str = "inprocess",
                       first_executor: Any = None) -> dict[str, Any]:
    """Run each model's cases (one model after another) under one progress bar; returns what this
    process did: cases run, errors (by category, and the first message) and cases left to another
    run that had claimed them. `cap` (a SpendCap) admits each case before it starts; `on_case` is
    called with each case this process ran (`--otel`). `first_executor`, already warmed, serves the
    first model's cases; each later model gets a fresh executor."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from randori.agents.agent import BUILTIN
    from randori.bench.executors import get_executor
    from randori.bench.runner import run_cases
    from randori.cli.plan import Meter
    from randori.terminal import live_console, printable

    total = sum(len(b.cases) for b in batches)
    meter = Meter()
    with Progress(BarColumn(bar_width=10), MofNCompleteColumn(),
                  TextColumn("{task.fields[status]}", markup=False), TimeRemainingColumn(),
                  console=live_console(stderr=False), transient=False, disable=not total) as progress:
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
            if on_case is not None:
                on_case(res)
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
                status += f"\n{printable(load())}"
            if current["executor"] is not None and current["executor"].status():  # issue 32: workers alive
                status += f"\n{current['executor'].status()}"
            progress.update(bar, advance=1, status=status)

        current: dict[str, Any] = {"model": None, "executor": None}

        async def go() -> None:
            for i, b in enumerate(batches):
                current["model"] = b.model
                warm = i == 0 and first_executor is not None
                current["executor"] = first_executor if warm else get_executor(executor)
                try:
                    if b.cases and (cap is None or not cap.stopped):
                        await run_cases(b.cases, suites, b.model, store, run_id, concurrency=concurrency,
                                        max_steps=max_steps, on_result=on_result,
                                        attacker_base_url=attacker_base_url, agent=agent or BUILTIN,
                                        admit=cap.admit if cap is not None else None,
                                        executor=current["executor"])
                    elif warm:  # its workers were started for cases that turned out to be done already
                        first_executor.discard()
                finally:
                    if b.model is not None:
                        await b.model.aclose()

        import asyncio  # lazy: keeps `randori --help` fast

        asyncio.run(_stoppable(go()))
    return tally


async def _stoppable(work: Any) -> None:
    """Run `work` so that the first Ctrl-C stops it at the event loop's next turn (a scripted run
    keeps the loop busy, so Python's own handler would only act between cases much later): the
    cases in flight are cancelled, those finished are already stored. Raises KeyboardInterrupt."""
    import asyncio

    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        if interrupted:
            os._exit(130)  # a second Ctrl-C while the first is being honoured: at once, quietly
        interrupted = True
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        await task
        return
    try:
        await task
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def _second_interrupt_quits() -> None:
    """After the first Ctrl-C the run prints what it has; a second one ends the process at once,
    with no traceback (every finished case is already committed to the store)."""
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, lambda *_: os._exit(130))
