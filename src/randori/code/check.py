"""Validity checks for a code data set: do the references behave as the tests say they should?

Built-in tasks must satisfy all four: the secure reference passes the functional and the security
tests; the insecure one passes the functional tests and fails the security tests. For a CodeSecEval
item (one combined `check`), an item "separates" when the secure reference passes and the insecure
one fails in this environment (missing packages or fixtures can make an item useless here).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from randori.code.dataset import CodeTask
from randori.code.evaluate import GroupResult, run_all_groups
from randori.code.sandbox import Sandbox


@dataclass
class ReferenceCheck:
    task_id: str
    cwe: str
    split: bool
    secure: dict[str, GroupResult] = field(default_factory=dict)
    insecure: dict[str, GroupResult] = field(default_factory=dict)

    def _passed(self, which: str, group: str) -> bool | None:
        res = (self.secure if which == "secure" else self.insecure).get(group)
        return None if res is None else res.passed

    @property
    def ok(self) -> bool:
        if self.split:
            return bool(self._passed("secure", "functional") and self._passed("secure", "security")
                        and self._passed("insecure", "functional")
                        and self._passed("insecure", "security") is False)
        return bool(self._passed("secure", "combined") and self._passed("insecure", "combined") is False)

    @property
    def problems(self) -> list[str]:
        out: list[str] = []
        expect = ([("secure", "functional", True), ("secure", "security", True),
                   ("insecure", "functional", True), ("insecure", "security", False)] if self.split
                  else [("secure", "combined", True), ("insecure", "combined", False)])
        for which, group, want in expect:
            got = self._passed(which, group)
            if got is not want:
                res = (self.secure if which == "secure" else self.insecure)[group]
                detail = "; ".join(res.failures[:2]) if want else "all tests passed"
                out.append(f"{which} reference {'fails' if want else 'passes'} {group} tests ({detail})")
        return out

    def as_dict(self) -> dict[str, Any]:
        def groups(d: dict[str, GroupResult]) -> dict[str, Any]:
            return {g: {"passed": r.passed, "status": r.status, "failures": r.failures} for g, r in d.items()}

        return {"task": self.task_id, "cwe": self.cwe, "ok": self.ok, "split_tests": self.split,
                "secure": groups(self.secure), "insecure": groups(self.insecure), "problems": self.problems}


async def check_task(sandbox: Sandbox, task: CodeTask) -> ReferenceCheck:
    secure, insecure = await asyncio.gather(run_all_groups(sandbox, task, task.secure_code),
                                            run_all_groups(sandbox, task, task.insecure_code))
    return ReferenceCheck(task.id, task.cwe, task.has_split_tests, secure, insecure)


async def check_tasks(sandbox: Sandbox, tasks: Sequence[CodeTask], *, concurrency: int = 4,
                      on_done: Callable[[ReferenceCheck], None] | None = None) -> list[ReferenceCheck]:
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(task: CodeTask) -> ReferenceCheck:
        async with sem:
            res = await check_task(sandbox, task)
        if on_done is not None:
            on_done(res)
        return res

    return list(await asyncio.gather(*(one(t) for t in tasks)))
