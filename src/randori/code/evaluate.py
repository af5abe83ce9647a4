"""Run one piece of code against a task's test groups in the sandbox."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from randori.code.dataset import CodeTask
from randori.sandbox.runner import Limits, RunResult, Sandbox, TestJob, finalize_outcomes
from randori.sandbox.verdict import plan_verdict


@dataclass
class GroupResult:
    group: str  # functional | security | combined
    passed: bool
    status: str
    tests: list[dict[str, Any]] = field(default_factory=list)
    isolation: dict[str, Any] = field(default_factory=dict)
    output: str = ""
    duration_s: float = 0.0
    truncated: dict[str, int] = field(default_factory=dict)

    @property
    def verdict_isolation(self) -> str | None:
        return self.isolation.get("verdict_isolation")

    @property
    def failures(self) -> list[str]:
        return [f"[{self.group}] {t['name']}: {t['message']}" for t in self.tests if not t["passed"]]


def job_for(task: CodeTask, code: str, tests: str, names: list[str]) -> TestJob:
    # Decided by the harness from the tests and the secure reference before anything runs, never
    # from the code under test or what it printed.
    plan = plan_verdict(tests, task.secure_code, task.entry_point)
    return TestJob(code=code, tests=tests, entry_point=task.entry_point, test_names=names,
                   fixture_dir=task.fixture_dir, files=task.files, links=task.links, setup=task.setup,
                   site_packages=task.site_packages, verdict_isolation=plan.isolation,  # type: ignore[arg-type]
                   imports=plan.imports, functions=plan.functions, code_names=plan.code_names,
                   fixture_subdir=task.fixture_subdir, cwd_rel=task.cwd_rel)


def _group_result(group: str, names: list[str], res: RunResult) -> GroupResult:
    res = finalize_outcomes(res, names)
    return GroupResult(
        group=group, passed=res.passed, status=res.status,
        tests=[{"name": o.name, "passed": o.passed, "message": o.message} for o in res.outcomes],
        isolation=res.isolation, output=res.output[-4000:], duration_s=res.duration_s, truncated=res.truncated)


async def run_group(sandbox: Sandbox, task: CodeTask, code: str, group: str,
                    limits: Limits | None = None) -> GroupResult:
    for name, source, names in task.test_groups():
        if name == group:
            res = await sandbox.run(job_for(task, code, source, names), limits=limits)
            return _group_result(group, names, res)
    raise KeyError(f"task {task.id} has no test group {group}")


async def run_all_groups(sandbox: Sandbox, task: CodeTask, code: str,
                         limits: Limits | None = None) -> dict[str, GroupResult]:
    """Each group in its own sandbox (fresh fixtures each), concurrently."""
    groups = [g for g, _, _ in task.test_groups()]
    results = await asyncio.gather(*(run_group(sandbox, task, code, g, limits) for g in groups))
    return dict(zip(groups, results, strict=True))
