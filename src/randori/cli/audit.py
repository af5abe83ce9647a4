"""`randori suites check --audit`: what a suite's checks accept that they should not (see
randori.validity.audit), per task and rule, as text or JSON. It reports; it never fails a suite."""

from __future__ import annotations

import json
import textwrap
from collections import defaultdict
from typing import Any

import typer

from randori.errors import UserError

# Tasks per unit of work: AgentDojo's workspace (54 tasks, its checks diff the whole state) is cut
# into parts so that both cores stay busy to the end.
PART = 14


def _audit_part(job: tuple[str, tuple[str, ...]]) -> Any:
    """One part of one suite's audit (it may run in a worker process): an Audit, or the error text."""
    from randori.registry import describe_exception
    from randori.suites import get_suite
    from randori.validity.audit import audit_suite

    name, tasks = job
    try:
        return audit_suite(get_suite(name), set(tasks))
    except UserError as e:
        return str(e)
    except Exception as e:  # a suite's own code failed: say so, audit the others
        return f"cannot be audited: {describe_exception(e)}"


def _in_parallel(suites: list[Any]) -> list[dict[str, Any]]:
    """Suites and parts of suites are independent: audit them in worker processes, one per core,
    largest first. The suites are loaded here, before the workers fork, so each reuses them."""
    import multiprocessing
    import os

    from randori.validity.audit import merge

    jobs: list[tuple[str, tuple[str, ...]]] = []
    for s in suites:
        ids = [*s.user_tasks, *s.injection_tasks]
        jobs += [(s.name, tuple(ids[i:i + PART])) for i in range(0, len(ids), PART)]
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        parts = [_audit_part(j) for j in jobs]
    else:
        order = sorted(range(len(jobs)), key=lambda i: "workspace" not in jobs[i][0])
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            done = dict(zip(order, pool.map(_audit_part, [jobs[i] for i in order], chunksize=1), strict=True))
        parts = [done[i] for i in range(len(jobs))]
    out = []
    for s in suites:
        mine = [p for (name, _), p in zip(jobs, parts, strict=True) if name == s.name]
        failed = [p for p in mine if isinstance(p, str)]
        out.append({"suite": s.name, "failed": failed[0]} if failed else merge(mine).as_dict())
    return out


def run_audit(suites: list[Any], fmt: str, width: int) -> None:
    audits = _in_parallel(suites)
    if fmt == "json":
        typer.echo(json.dumps(audits, indent=2, ensure_ascii=False, default=str))
        return
    for a in audits:
        for line in summary(a, width):
            typer.echo(line)


def summary(audit: dict[str, Any], width: int = 80) -> list[str]:
    """Per suite: findings per rule, then per task and rule how many wrong trajectories its check
    accepted, with the first one."""
    if "failed" in audit:
        return [f"{audit['suite']}: {audit['failed']}"]
    findings = audit["findings"]
    by_rule: dict[str, int] = defaultdict(int)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for f in findings:
        by_rule[f["rule"]] += 1
        groups[(f["task"], f["rule"])].append(f)
    tasks = len({f["task"] for f in findings})
    out = [f"{audit['suite']}@{audit['version']}: {len(findings)} wrong trajectories accepted, in {tasks} tasks"]
    counts = ", ".join(f"{rule} {by_rule.get(rule, 0)}/{n}" for rule, n in audit["tried"].items())
    out.append(textwrap.fill(f"accepted/tried: {counts}", width, initial_indent="  ", subsequent_indent="    "))
    for (task, rule), fs in groups.items():
        more = f" (and {len(fs) - 1} more)" if len(fs) > 1 else ""
        out.append(textwrap.fill(f"{task} {rule}: {fs[0]['what']}{more}", width, initial_indent="  ",
                                 subsequent_indent="      ", break_on_hyphens=False))
    for e in audit["errors"]:
        out.append(textwrap.fill(f"check raised: {e}", width, initial_indent="  ", subsequent_indent="      "))
    return out
