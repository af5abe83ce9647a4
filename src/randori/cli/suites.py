"""`randori suites`: list, show, split and check task suites."""

from __future__ import annotations

from typing import Any

import typer

from randori.cli.common import _choice, _echo_json, _load_suites
from randori.errors import UserError
from randori.text import terminal_width

suites_app = typer.Typer(help="List, inspect and validate task suites.", no_args_is_help=True)


@suites_app.command("list")
def suites_list(fmt: str = typer.Option("table", "--format", "-f", help="table or json.")) -> None:
    """Suites with their version and counts of tools, tasks, vectors and attacked cases."""
    from randori.suites import agentdojo

    _choice(fmt, ("table", "json"))
    rows = [suite_counts(s) for s in _load_suites([], prepare=False)]
    foreign = [suite_counts(s) for s in _load_suites(agentdojo.suite_names(), prepare=False)]
    if fmt == "json":
        _echo_json(rows + foreign)
        return
    from rich.console import Console
    from rich.table import Column, Table

    from randori.text import wrap

    t = Table(Column("suite", no_wrap=True), "version", "tools", "user tasks", "injection tasks", "vectors",
              "attacked cases")
    keys = ("tools", "user_tasks", "injection_tasks", "vectors", "attacked_cases")
    for group, label in ((rows, "total"), (foreign, "AgentDojo")):
        for r in group:
            t.add_row(r["name"], r["version"], *(str(r[k]) for k in keys))
        if len(group) > 1:
            t.add_row(label, "", *(str(sum(r[k] for r in group)) for k in keys), end_section=True)
    Console().print(t)
    if foreign:
        typer.echo(wrap("agentdojo:* are AgentDojo's own suites, run only when named; other versions: "
                        f"--suite agentdojo:NAME@VERSION ({', '.join(agentdojo.versions())}).",
                        terminal_width(), "", ""))


def suite_counts(suite: Any) -> dict[str, Any]:
    """Counts for `suites list --format json` (keys: name, version, tools, user_tasks,
    injection_tasks, vectors, attacked_cases)."""
    return {"name": suite.name, "version": suite.version, "tools": len(suite.tools),
            "user_tasks": len(suite.user_tasks), "injection_tasks": len(suite.injection_tasks),
            "vectors": len(suite.vectors),
            "attacked_cases": len(suite.user_tasks) * len(suite.injection_tasks)}


@suites_app.command("show")
def suites_show(name: str = typer.Argument(..., help="Suite name.")) -> None:
    """The tasks of one suite: ids, difficulty, prompts and goals; what a task needs from its data
    (`run --data-directed` runs those tasks alone)."""
    from randori.text import wrap

    [s] = _load_suites([name], prepare=False)
    width = terminal_width()

    def say(text: str, indent: str = "  ", more: str = "      ") -> None:
        typer.echo(wrap(text, width, indent, more))

    typer.echo(f"{s.name}@{s.version}  (user: {s.user_name})")
    typer.echo("\nUser tasks:")
    for tid, t in s.user_tasks.items():
        say(f"{tid} [{t.difficulty}] {t.prompt}")
        if t.distractors:
            say(f"wrong answers it rejects: {', '.join(map(str, t.distractors))}", "      ", "        ")
        for fd in getattr(t, "data_given", ()):
            what = f"the value of {fd.function}.{fd.arg}" if fd.arg else f"the step {fd.function}"
            say(f"needs its data: {what}" + (f", given by “{fd.shown}”" if fd.shown else ""), "      ", "        ")
        if getattr(t, "data_directed", False) and not getattr(t, "data_given", ()):
            say("needs its data (marked by its suite)", "      ", "        ")
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


@suites_app.command("splits")
def suites_splits(name: str = typer.Argument(..., help="Suite name (an AgentDojo suite too: agentdojo:NAME)."),
                  seed: str | None = typer.Option(None, "--seed", metavar="SEED",
                                                  help="Seed to cut with, as `run --split-seed` takes it. "
                                                  "Default: randori's fixed seed."),
                  fmt: str = typer.Option("table", "--format", "-f", help="table or json.")) -> None:
    """A suite's train, val and test splits of its user tasks and its injection tasks (50/20/30 of
    each, ranked by a keyed hash: the same on every machine). `randori run --split NAME` runs the cases
    whose user task and injection task are both in split NAME."""
    from randori.tasks.splits import DEFAULT_SEED, SPLITS, suite_splits
    from randori.text import wrap

    _choice(fmt, ("table", "json"))
    [s] = _load_suites([name], prepare=False)
    splits = suite_splits(s, seed or DEFAULT_SEED)
    if fmt == "json":
        _echo_json({"version": s.version, **splits.as_dict()})
        return
    width = terminal_width()
    typer.echo(f"{s.name}@{s.version}  (seed {splits.seed}; train 50%, val 20%, test 30% of each axis)")
    for title, table in (("User tasks", splits.user), ("Injection tasks", splits.injection)):
        typer.echo(f"\n{title}:")
        for split in SPLITS:
            ids = table[split]
            typer.echo(wrap(f"{split:<5} ({len(ids)}): {', '.join(ids) or '-'}", width, "  ", "    "))
    attacked = {x: len(splits.user[x]) * len(splits.injection[x]) for x in SPLITS}
    typer.echo("\nAttacked cases per split: " + ", ".join(f"{x} {n}" for x, n in attacked.items())
               + f" (of {len(s.user_tasks) * len(s.injection_tasks)}; pairs across splits are in none)")


@suites_app.command("check")
def suites_check(names: list[str] = typer.Argument(None, help="Suites to check. Default: all."),
                 audit: bool = typer.Option(False, "--audit", help="Audit instead: the rules that need no task "
                                            "declarations, applied to any suite (AgentDojo's are always audited); "
                                            "lists what the checks accept that they should not. Never fails."),
                 fmt: str = typer.Option("table", "--format", "-f",
                                         help="table or json (json: --audit only).")) -> None:
    """Validate suites against every rule of docs/validity.md: the oracle passes and a do-nothing
    agent fails; checks reject real wrong values (exact, plausible) and one extra state-changing
    call (side_effects); answer checks accept correct answers however phrased (phrasing) and reject
    pasted data and hedged answers (distractors), values said about the wrong item (attribution) or
    role (roles), in another currency (currency) or denied (negation); a user task never achieves an
    attacker's goal; a goal counts in every form it may take (goal_forms) and not when the agent only
    reports it (reported); free arguments are not read by the check, dictated ones are read whole
    (free_args).

    Prints, per suite and rule, how many variants held of how many tried; exits 1 on any problem,
    including an installed suite that cannot be loaded.

    `--audit` (e.g. `randori suites check agentdojo:banking --audit --format json`) prints, per task
    and rule, the wrong trajectories the suite's own checks accept (docs/guides/agentdojo.md)."""
    import textwrap

    from randori.suites import agentdojo, suite_names
    from randori.validity.validate import RULES

    _choice(fmt, ("table", "json"))
    if audit or any(agentdojo.is_agentdojo(n) for n in names or []):
        from randori.cli.audit import run_audit

        run_audit(_load_suites(names or []), fmt, min(terminal_width(), 100))
        return
    if fmt != "table":
        raise UserError("--format json goes with --audit (the check prints a table)")
    suites = list({s.name: s for s in _load_suites(names or [], prepare=False)}.values())  # each once
    failed = not names and len(suites) < len(suite_names())  # a broken plugin (warned about above)
    width = min(terminal_width(), 100)
    heavy = frozenset(s.name for s in suites if s.checks_run_code)
    sizes = {s.name: len(s.user_tasks) + len(s.injection_tasks) for s in suites}
    for s, result in zip(suites, _check_in_parallel([s.name for s in suites], heavy, sizes), strict=True):
        problems, tried, held = result
        notes = [n for n in s.placeholder_problems() if problems or "never places" in n]
        if problems:
            failed = True
            typer.echo(f"{s.name}@{s.version}: {len(problems)} problem(s)")
            for p in problems:
                # Wrapped at spaces only: a file:line or a name is never cut.
                typer.echo(textwrap.fill(p, width, initial_indent="  ", subsequent_indent="    ",
                                         break_on_hyphens=False, break_long_words=False))
        else:
            typer.echo(f"{s.name}@{s.version}: ok ({len(s.user_tasks)} user tasks, "
                       f"{len(s.injection_tasks)} injection tasks)")
        if tried:
            # A rule and its count stay on one line (a no-break space while wrapping).
            counts = [f"{rule}\u00a0{held.get(rule, 0)}/{tried[rule]}" for rule in RULES if tried.get(rule)]
            typer.echo(textwrap.fill("held/tried: " + ", ".join(counts), width, initial_indent="  ",
                                     subsequent_indent="    ", break_on_hyphens=False).replace("\u00a0", " "))
        for n in notes:
            typer.echo(f"  note: {n}")
    if failed:
        raise typer.Exit(1)


CheckResult = tuple[list[str], dict[str, int], dict[str, int]]


def _check_one(job: tuple[str, int, int]) -> CheckResult:
    """Every rule on one suite (or on the part `k` of `n` of its tasks), as plain data (it may run in
    a worker process)."""
    from randori.registry import describe_exception
    from randori.suites import get_suite
    from randori.validity.validate import check_suite

    name, k, n = job
    try:
        r = check_suite(get_suite(name), shard=(k, n))
    except UserError as e:
        return [str(e)], {}, {}
    except Exception as e:  # a suite's own code (a plugin) failed: its problem, not the checker's
        return [f"cannot be checked: {describe_exception(e)}"], {}, {}
    return [str(p) for p in r.problems], dict(r.tried), dict(r.held)


def _merge(parts: list[CheckResult]) -> CheckResult:
    """One suite's result from its parts: problems in order, once each; counts added."""
    from collections import Counter

    problems = list(dict.fromkeys(x for p, _, _ in parts for x in p))
    tried, held = Counter[str](), Counter[str]()
    for _, t, h in parts:
        tried.update(t)
        held.update(h)
    return problems, dict(tried), dict(held)


def _check_in_parallel(names: list[str], heavy: frozenset[str] = frozenset(),
                       sizes: dict[str, int] | None = None) -> list[CheckResult]:
    """`names`: distinct suites. Suites are independent: check them in worker processes, one per core
    and one more (the rules replay thousands of variants per suite; while a worker's part waits on a
    sandboxed run, the extra worker has its core). A suite whose checks run code in the sandbox (each
    probed state is judged by running it) is split into parts (its suite-wide rules, and its tasks in
    two parts per worker), started first, whose sandbox results the workers share (the parts judge
    many of the same states); then the other suites' tasks, largest suite first (`sizes`: a suite's
    tasks), in two halves each; then those suites' suite-wide rules, the shortest parts, last.
    Whichever worker is free takes the next part, so the workers end together."""
    import multiprocessing
    import os
    import tempfile

    from randori.sandbox.sync import share_results

    cores = os.cpu_count() or 1
    if cores < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_check_one((n, 0, 1)) for n in names]
    workers = cores + 1
    parts = 2 * workers + 1
    jobs = [(n, k, parts) for n in names if n in heavy for k in range(parts)]
    light = sorted((n for n in names if n not in heavy), key=lambda n: -(sizes or {}).get(n, 0))
    jobs += [(n, k, 3) for n in light for k in (1, 2)]
    jobs += [(n, 0, 3) for n in light]
    with tempfile.TemporaryDirectory(prefix="randori-check-") as shared, \
            multiprocessing.get_context("fork").Pool(workers, initializer=share_results, initargs=(shared,)) as pool:
        results = pool.map(_check_one, jobs, chunksize=1)
    by_name: dict[str, list[CheckResult]] = {}
    for (name, _, _), r in zip(jobs, results, strict=True):
        by_name.setdefault(name, []).append(r)
    return [_merge(by_name[n]) for n in names]
