"""`randori code ...`: run the code track, check a data set's references, report stored results."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from randori.errors import FatalModelError, UserError
from randori.terminal import live_console, printable

code_app = typer.Typer(help="Secure code generation: generate, analyse, test in a sandbox, repair.",
                       no_args_is_help=True)

DEFAULT_MODEL = "scripted/insecure-then-secure"
SHARED_HELP = ("Count items whose tests must run in the code's own process (where the code could forge "
               "its verdict). Default: counted apart, out of the headline rates.")
out = Console()
err = Console(stderr=True)


class Prompt(str, Enum):
    plain = "plain"
    aware = "aware"


class Fmt(str, Enum):
    table = "table"
    json = "json"


class Severity(str, Enum):
    low = "low"
    medium = "medium"
    high = "high"


def _fail(message: str, code: int = 2) -> typer.Exit:
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _sandbox(timeout: float) -> Any:
    from randori.sandbox.runner import Limits, Sandbox, SandboxUnavailable

    if timeout <= 0:
        raise UserError("--timeout must be positive")
    sb = Sandbox(Limits(wall_s=timeout, cpu_s=max(1, int(timeout))))
    try:
        sb.mode  # noqa: B018 - probing the kernel happens here, so failures surface as one line
    except SandboxUnavailable as e:
        raise UserError(str(e)) from e
    return sb


def _describe_isolation(mode: str) -> str:
    return {"namespaces": "built root, namespaces (no network), seccomp, unprivileged uid per run",
            "userns": "built root, user namespace (no network), seccomp",
            "process": "process only (NO network isolation: namespaces are unavailable here)"}.get(mode, mode)


@code_app.command()
def run(
    dataset: str = typer.Option("builtin", help="`builtin` or a CodeSecEval-layout split folder / JSON file."),
    model: str | None = typer.Option(None, "--model", "-m", help="provider/model, or scripted/<coder>. "
                                     f"Default: $RANDORI_MODEL, else {DEFAULT_MODEL}."),
    base_url: str | None = typer.Option(None, help="Base URL of an OpenAI-compatible server."),
    prompt: Prompt = typer.Option(Prompt.plain, help="plain = the task text; aware = with CWE and guidance."),
    rounds: int = typer.Option(2, min=0, max=10, help="Repair rounds after the first attempt."),
    fuzz: bool = typer.Option(False, "--fuzz", help="Fuzz the function with type-aware random inputs."),
    fuzz_seed: int = typer.Option(0, help="Seed for --fuzz inputs."),
    fuzz_iterations: int = typer.Option(120, min=1, max=10_000, help="Inputs per fuzzing step."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    cwe: list[str] = typer.Option([], "--cwe", help="Only tasks of these CWEs, e.g. CWE-89 (repeatable)."),
    concurrency: int = typer.Option(4, min=1, max=64, help="Tasks in flight at once."),
    results: Path = typer.Option(Path("results"), "--results", "-r", help="Results folder (SQLite store)."),
    repeats: int = typer.Option(1, min=1, max=100, help="Independent repeats of every task."),
    semgrep: bool = typer.Option(False, "--semgrep", help="Also run Semgrep with the shipped rules (offline)."),
    timeout: float = typer.Option(10.0, help="Wall-clock limit per sandboxed test run, seconds."),
    static_threshold: Severity = typer.Option(Severity.medium, help="Findings at or above this severity count "
                                              "as flagged and trigger repair."),
    temperature: float | None = typer.Option(0.0, help="Sampling temperature sent to the model."),
    max_tokens: int | None = typer.Option(None, help="Output token limit sent to the model."),
    fmt: Fmt = typer.Option(Fmt.table, "--format", "-f", help="Summary as a table or JSON."),
    include_shared: bool = typer.Option(False, "--include-shared", help=SHARED_HELP),
    all_cwes: bool = typer.Option(False, "--all-cwes", help="Every CWE in the per-CWE table (default: the worst 8)."),
) -> None:
    """Generate code for each task, check it, repair it for up to --rounds rounds, and report."""
    try:
        _run(dataset=dataset, model=model, base_url=base_url, prompt=prompt.value, rounds=rounds, fuzz=fuzz,
             fuzz_seed=fuzz_seed, fuzz_iterations=fuzz_iterations, task_ids=task, cwes=cwe,
             concurrency=concurrency, results=results, repeats=repeats, semgrep=semgrep, timeout=timeout,
             static_threshold=static_threshold.value.upper(), temperature=temperature, max_tokens=max_tokens,
             fmt=fmt, include_shared=include_shared, all_cwes=all_cwes)
    except UserError as e:
        raise _fail(str(e)) from None


def _run(*, dataset: str, model: str | None, base_url: str | None, prompt: str, rounds: int, fuzz: bool,
         fuzz_seed: int, fuzz_iterations: int, task_ids: list[str], cwes: list[str], concurrency: int,
         results: Path, repeats: int, semgrep: bool, timeout: float, static_threshold: str,
         temperature: float | None, max_tokens: int | None, fmt: Fmt, include_shared: bool,
         all_cwes: bool = False) -> None:
    from randori.bench.store import Store
    from randori.code import metrics
    from randori.code.analyzers import SemgrepAnalyzer, SemgrepBatcher, StaticAnalysis
    from randori.code.coders import get_coder
    from randori.code.dataset import load_dataset
    from randori.code.loop import Evaluator, LoopConfig, plan
    from randori.code.report import CWE_ROWS, render_summaries, to_json
    from randori.code.store import CodeStore

    ds = load_dataset(dataset)
    tasks = ds.select(task_ids, cwes)
    if not tasks:
        raise UserError("no tasks selected")
    external = ds.name != "builtin"
    if model is None:
        model = os.environ.get("RANDORI_MODEL") or DEFAULT_MODEL
        if model == DEFAULT_MODEL:
            err.print(f"No --model given and RANDORI_MODEL is unset: using {DEFAULT_MODEL}.", highlight=False,
                      soft_wrap=True)
    from randori.agents.models import ModelSettings  # lazy: `randori --help` must start fast

    settings = ModelSettings(temperature=temperature, max_tokens=max_tokens)
    coder = get_coder(model, settings, base_url=base_url)
    sandbox = _sandbox(timeout)
    analyzers = "bandit+semgrep" if semgrep else "bandit"
    batcher = SemgrepBatcher(SemgrepAnalyzer()) if semgrep else None
    cfg = LoopConfig(prompt=prompt, rounds=rounds, fuzz=fuzz, fuzz_seed=fuzz_seed, fuzz_iterations=fuzz_iterations,
                     repeats=repeats, concurrency=concurrency, static_threshold=static_threshold,
                     limits=sandbox.limits)
    settings_key = settings.key_fields() if not model.startswith("scripted/") else {}
    store = Store(results)
    cstore = CodeStore(store)
    if external:
        try:
            tasks = _separating_tasks(ds, tasks, sandbox, cstore, concurrency, timeout, include_shared)
        except BaseException:
            store.close()
            raise
    items = plan(ds, tasks, model, settings_key, cfg, analyzers)
    done = cstore.done_keys()
    todo = [it for it in items if it.key not in done]
    err.print(f"{ds.label}: {len(items)} task run(s), {len(items) - len(todo)} already done; "
              f"sandbox: {_describe_isolation(sandbox.mode)}", highlight=False, soft_wrap=True)
    run_id = store.start_run({"track": "code", "dataset": ds.label, "model": model, "base_url": base_url,
                              "settings": settings_key, "prompt": prompt, "rounds": rounds, "fuzz": cfg.fuzz_key(),
                              "tasks": [t.id for t in tasks], "repeats": repeats, "analyzers": analyzers,
                              "static_threshold": static_threshold, "timeout_s": timeout})
    status = "finished"
    try:
        if todo:
            evaluator = Evaluator(sandbox, StaticAnalysis(batcher), cfg)
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("[bold]code tasks"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          TextColumn("{task.fields[last]}", markup=False), console=live_console(),
                          transient=False) as progress:
                bar = progress.add_task("run", total=len(todo), last="")

                def on_done(rec: Any) -> None:
                    mark = "error" if rec.status != "ok" else ("✓" if rec.rounds and rec.rounds[-1].both else "✗")
                    progress.update(bar, advance=1, last=printable(f"{rec.task_id} {mark}"))

                import asyncio  # lazy: keeps `randori --help` fast

                asyncio.run(_run_all(todo, coder, evaluator, ds, model, settings_key, analyzers, cstore, run_id,
                                     on_done))
    except FatalModelError as e:
        status = "aborted"
        raise _fail(f"run stopped: {e}", 1) from None
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    except BaseException:
        status = "failed"
        raise
    finally:
        store.finish_run(run_id, status)
        if status != "finished":
            store.close()
    keys = {it.key for it in items}
    rows = [r for r in cstore.rows() if r["key"] in keys]
    summaries = _with_exclusions(metrics.summarize(rows, include_shared=include_shared), cstore)
    store.close()
    if fmt == Fmt.json:
        typer.echo(to_json(summaries))
    else:
        render_summaries(summaries, out, cwe_limit=None if all_cwes else CWE_ROWS)
        err.print(_next_steps(results, all_cwes), highlight=False, markup=False, soft_wrap=True)


def _next_steps(results: Path, all_cwes: bool) -> str:
    """Where to look next, with the command as this shell reaches randori."""
    from randori.bench.text import command_name, shell_quote

    cmd, r = command_name(), shell_quote(str(results))
    lines = ["Next:", f"  {cmd} code report -r {r}" + ("" if all_cwes else " --all-cwes   (every CWE)"),
             f"  {cmd} report -r {r} --html {shell_quote(str(results / 'report.html'))}", f"  {cmd} view -r {r}"]
    return "\n".join(lines)


def _with_exclusions(summaries: list[dict[str, Any]], cstore: Any) -> list[dict[str, Any]]:
    for s in summaries:
        s["left_out"] = None if s["dataset"] == "builtin" else cstore.exclusions(s["dataset"], s["dataset_version"])
    return summaries


def _separating_tasks(ds: Any, tasks: list[Any], sandbox: Any, cstore: Any, concurrency: int,
                      timeout: float, include_shared: bool) -> list[Any]:
    """An external data set's items whose references separate here (checked once per data set
    version and environment), those judged in the code's own process only with --include-shared;
    says how many were left out and why."""
    import asyncio

    from randori.code.check import check_tasks, environment_key

    env = environment_key(sandbox, timeout)
    known = cstore.cached_check(ds.name, ds.version, env) or {}
    todo = [t for t in tasks if t.id not in known]
    if todo:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("[bold]checking references"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=live_console(), transient=True) as progress:
            bar = progress.add_task("check", total=len(todo))
            checks = asyncio.run(check_tasks(sandbox, todo, concurrency=concurrency,
                                             on_done=lambda _: progress.update(bar, advance=1)))
        for c in checks:
            reason = c.reason if not c.separates_if_shared_counted else None
            known[c.task_id] = (c.separates_if_shared_counted, *(reason or ("", "")), c.verdict_isolation)
        cstore.save_check(ds.name, ds.version, env, known)

    def keep(tid: str) -> bool:
        return known[tid][0] and (include_shared or known[tid][3] != "shared")

    kept = [t for t in tasks if keep(t.id)]
    left = [known[t.id] if not known[t.id][0] else (False, "judged shared", "", "shared")
            for t in tasks if not keep(t.id)]
    if left:
        by: dict[str, int] = {}
        for _, cls, why, _mode in left:
            key = f"{cls} {why}" if cls == "missing package" else cls
            by[key] = by.get(key, 0) + 1
        why_text = ", ".join(f"{k}: {v}" for k, v in sorted(by.items(), key=lambda kv: -kv[1]))
        err.print(f"{ds.label}: {len(left)} of {len(tasks)} item(s) left out, their references do not separate "
                  f"here or they would be judged in the code's own process ({why_text}); `randori code check "
                  "--dataset ...` lists them.", highlight=False, soft_wrap=True)
    if not kept:
        raise UserError(f"no item of {ds.label} separates its references here; run `randori code check` to see why")
    return kept


async def _run_all(todo: Any, coder: Any, evaluator: Any, ds: Any, model: str, settings: dict[str, Any],
                   analyzers: str, cstore: Any, run_id: int, on_done: Any) -> None:
    from randori.code.loop import run_tasks

    try:
        await run_tasks(todo, coder, evaluator, ds, model, settings, analyzers, cstore, run_id, on_done)
    finally:
        await coder.aclose()


@code_app.command()
def check(
    dataset: str = typer.Option("builtin", help="`builtin` or a CodeSecEval-layout split folder / JSON file."),
    fmt: Fmt = typer.Option(Fmt.table, "--format", "-f", help="Table or JSON."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    cwe: list[str] = typer.Option([], "--cwe", help="Only tasks of these CWEs (repeatable)."),
    concurrency: int = typer.Option(4, min=1, max=64, help="Tasks checked at once."),
    timeout: float = typer.Option(10.0, help="Wall-clock limit per sandboxed test run, seconds."),
    include_shared: bool = typer.Option(False, "--include-shared", help=SHARED_HELP),
) -> None:
    """Run every task's secure and insecure reference against its tests.

    Built-in tasks: the secure one passes all tests, the insecure one only the functional ones (else exit 1).

    For a CodeSecEval data set: which items separate the two references here, and why the others do not."""
    from randori.code.check import check_tasks, reason_counts
    from randori.code.dataset import load_dataset
    from randori.code.report import render_checks, to_json

    try:
        ds = load_dataset(dataset)
        tasks = ds.select(task, cwe)
        sandbox = _sandbox(timeout)
    except UserError as e:
        raise _fail(str(e)) from None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=live_console(), transient=True) as progress:
        bar = progress.add_task("check", total=len(tasks))
        import asyncio  # lazy: keeps `randori --help` fast

        checks = asyncio.run(check_tasks(sandbox, tasks, concurrency=concurrency, include_shared=include_shared,
                                         on_done=lambda _: progress.update(bar, advance=1)))
    if fmt == Fmt.json:
        typer.echo(to_json({"dataset": ds.label, "sandbox": sandbox.mode,
                                "tasks": [c.as_dict() for c in checks],
                                "ok": sum(1 for c in checks if c.separates), "total": len(checks),
                                "reasons": reason_counts(checks), "cwes": len({c.cwe for c in checks}),
                                "judged_shared": sum(1 for c in checks if c.shared_reason),
                                "shared_included": include_shared}))
    else:
        render_checks(checks, out, label=ds.label, isolation=sandbox.mode)
    if all(c.split for c in checks) and not all(c.ok for c in checks):
        raise typer.Exit(1)


@code_app.command()
def report(
    results: Path = typer.Option(Path("results"), "--results", "-r", help="Results folder (SQLite store)."),
    fmt: Fmt = typer.Option(Fmt.table, "--format", "-f", help="Table or JSON."),
    model: str | None = typer.Option(None, "--model", "-m", help="Only this model."),
    dataset: str | None = typer.Option(None, help="Only this data set name (e.g. builtin)."),
    summary: bool = typer.Option(False, "--summary", help="Only the six figures of the SecEval safety-agent "
                                 "note (samples; initially Bandit-unsafe; initially passing; repair attempted "
                                 "among flagged; Bandit-clean and tests passing after repair among repaired)."),
    include_shared: bool = typer.Option(False, "--include-shared", help=SHARED_HELP),
    all_cwes: bool = typer.Option(False, "--all-cwes", help="Every CWE in the per-CWE table (default: the worst 8)."),
) -> None:
    """Summarise every code-track configuration stored in a results folder."""
    from randori.bench.store import open_existing
    from randori.code import metrics
    from randori.code.report import CWE_ROWS, render_seed_summary, render_summaries, to_json
    from randori.code.store import CodeStore

    try:
        store = open_existing(results)
    except UserError as e:
        raise _fail(str(e)) from None
    with store:
        where, params = [], []
        if model:
            where.append("model = ?")
            params.append(model)
        if dataset:
            where.append("dataset = ?")
            params.append(dataset)
        rows = CodeStore(store).rows(" AND ".join(where), params)
        if not rows:
            raise _fail(f"no code-track results in {results}" + (" for that selection" if where else ""))
        summaries = _with_exclusions(metrics.summarize(rows, include_shared=include_shared), CodeStore(store))
    if summary:
        seeds = [{k: s[k] for k in ("label", "model", "prompt", "max_rounds", "fuzz", "analyzers", "shared")}
                 | s["seed_summary"] for s in summaries]
        if fmt == Fmt.json:
            typer.echo(to_json(seeds))
        else:
            render_seed_summary(summaries, out)
    elif fmt == Fmt.json:
        typer.echo(to_json(summaries))
    else:
        render_summaries(summaries, out, cwe_limit=None if all_cwes else CWE_ROWS)
