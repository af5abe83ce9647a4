"""`randori code ...`: run the code track, check a data set's references, report stored results."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from randori.cli.request import takes
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


@dataclass(frozen=True)
class CodeRunRequest:
    """Every option of `randori code run`, as given (the order of the fields is the order of `--help`)."""

    dataset: Annotated[str, typer.Option(
        help="`builtin` or a CodeSecEval-layout split folder / JSON file.")] = "builtin"
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help=f"provider/model, or scripted/<coder>. Default: $RANDORI_MODEL, else {DEFAULT_MODEL}.")] \
        = None
    base_url: Annotated[str | None, typer.Option(help="Base URL of an OpenAI-compatible server.")] = None
    prompt: Annotated[Prompt, typer.Option(
        help="plain = the task text; aware = with CWE and guidance.")] = Prompt.plain
    rounds: Annotated[int, typer.Option(min=0, max=10, help="Repair rounds after the first attempt.")] = 2
    fuzz: Annotated[bool, typer.Option("--fuzz", help="Fuzz the function with type-aware random inputs.")] = False
    fuzz_seed: Annotated[int, typer.Option(help="Seed for --fuzz inputs.")] = 0
    fuzz_iterations: Annotated[int, typer.Option(min=1, max=10_000, help="Inputs per fuzzing step.")] = 120
    task: Annotated[list[str], typer.Option(
        "--task", help="Only these task ids (repeatable).")] = field(default_factory=list)
    cwe: Annotated[list[str], typer.Option(
        "--cwe", help="Only tasks of these CWEs, e.g. CWE-89 (repeatable).")] = field(default_factory=list)
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Tasks in flight at once.")] = 4
    results: Annotated[Path, typer.Option("--results", "-r", help="Results folder (SQLite store).")] = Path("results")
    repeats: Annotated[int, typer.Option(min=1, max=100, help="Independent repeats of every task.")] = 1
    semgrep: Annotated[bool, typer.Option(
        "--semgrep", help="Also run Semgrep with the shipped rules (offline).")] = False
    timeout: Annotated[float, typer.Option(help="Wall-clock limit per sandboxed test run, seconds.")] = 10.0
    static_threshold: Annotated[Severity, typer.Option(
        help="Findings at or above this severity count as flagged and trigger repair.")] = Severity.medium
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature sent to the model.")] = 0.0
    max_tokens: Annotated[int | None, typer.Option(help="Output token limit sent to the model.")] = None
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Summary as a table or JSON.")] = Fmt.table
    include_shared: Annotated[bool, typer.Option("--include-shared", help=SHARED_HELP)] = False
    all_cwes: Annotated[bool, typer.Option(
        "--all-cwes", help="Every CWE in the per-CWE table (default: the worst 8).")] = False


@code_app.command()
@takes(CodeRunRequest)
def run(request: CodeRunRequest) -> None:
    """Generate code for each task, check it, repair it for up to --rounds rounds, and report."""
    try:
        _run(request)
    except UserError as e:
        raise _fail(str(e)) from None


def _run(request: CodeRunRequest) -> None:
    from randori.bench.store import Store
    from randori.code import metrics
    from randori.code.coders import get_coder
    from randori.code.dataset import load_dataset
    from randori.code.loop import Evaluator, LoopConfig, plan
    from randori.code.report import CWE_ROWS, render_summaries, to_json
    from randori.code.store import CodeStore
    from randori.sandbox.analyzers import SemgrepAnalyzer, SemgrepBatcher, StaticAnalysis

    r = request
    prompt, static_threshold = r.prompt.value, r.static_threshold.value.upper()
    ds = load_dataset(r.dataset)
    tasks = ds.select(r.task, r.cwe)
    if not tasks:
        raise UserError("no tasks selected")
    external = ds.name != "builtin"
    model = r.model
    if model is None:
        model = os.environ.get("RANDORI_MODEL") or DEFAULT_MODEL
        if model == DEFAULT_MODEL:
            err.print(f"No --model given and RANDORI_MODEL is unset: using {DEFAULT_MODEL}.", highlight=False,
                      soft_wrap=True)
    from randori.agents.models import ModelSettings  # lazy: `randori --help` must start fast

    settings = ModelSettings(temperature=r.temperature, max_tokens=r.max_tokens)
    coder = get_coder(model, settings, base_url=r.base_url)
    sandbox = _sandbox(r.timeout)
    analyzers = "bandit+semgrep" if r.semgrep else "bandit"
    batcher = SemgrepBatcher(SemgrepAnalyzer()) if r.semgrep else None
    cfg = LoopConfig(prompt=prompt, rounds=r.rounds, fuzz=r.fuzz, fuzz_seed=r.fuzz_seed,
                     fuzz_iterations=r.fuzz_iterations, repeats=r.repeats, concurrency=r.concurrency,
                     static_threshold=static_threshold, limits=sandbox.limits)
    settings_key = settings.key_fields() if not model.startswith("scripted/") else {}
    store = Store(r.results)
    cstore = CodeStore(store)
    if external:
        try:
            tasks = _separating_tasks(ds, tasks, sandbox, cstore, r.concurrency, r.timeout, r.include_shared)
        except BaseException:
            store.close()
            raise
    items = plan(ds, tasks, model, settings_key, cfg, analyzers)
    done = cstore.done_keys()
    todo = [it for it in items if it.key not in done]
    err.print(f"{ds.label}: {len(items)} task run(s), {len(items) - len(todo)} already done; "
              f"sandbox: {_describe_isolation(sandbox.mode)}", highlight=False, soft_wrap=True)
    run_id = store.start_run({"track": "code", "dataset": ds.label, "model": model, "base_url": r.base_url,
                              "settings": settings_key, "prompt": prompt, "rounds": r.rounds, "fuzz": cfg.fuzz_key(),
                              "tasks": [t.id for t in tasks], "repeats": r.repeats, "analyzers": analyzers,
                              "static_threshold": static_threshold, "timeout_s": r.timeout})
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
    summaries = _with_exclusions(metrics.summarize(rows, include_shared=r.include_shared), cstore)
    store.close()
    if r.fmt == Fmt.json:
        typer.echo(to_json(summaries))
    else:
        render_summaries(summaries, out, cwe_limit=None if r.all_cwes else CWE_ROWS)
        err.print(_next_steps(r.results, r.all_cwes), highlight=False, markup=False, soft_wrap=True)


def _next_steps(results: Path, all_cwes: bool) -> str:
    """Where to look next, with the command as this shell reaches randori."""
    from randori.text import command_name, shell_quote

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
