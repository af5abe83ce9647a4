"""Validity checks for a code data set: do the references behave as the tests say they should?

Built-in tasks must satisfy all four: the secure reference passes the functional and the security
tests; the insecure one passes the functional tests and fails the security tests. For a CodeSecEval
item (one combined `check`), an item "separates" when the secure reference passes and the insecure
one fails in this environment for a reason of its own. Every item that does not separate gets a
reason class: a missing package (named), the network, a timeout, the sandbox, or a bug of the data
set (the secure reference fails its own test, or the test does not catch the insecure one).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from randori.code.dataset import CodeTask
from randori.code.evaluate import GroupResult, run_all_groups
from randori.sandbox.runner import Sandbox
from randori.sandbox.verdict import SHARED, plan_verdict


@dataclass
class ReferenceCheck:
    task_id: str
    cwe: str
    split: bool
    secure: dict[str, GroupResult] = field(default_factory=dict)
    insecure: dict[str, GroupResult] = field(default_factory=dict)
    # Why the harness judges this item in the code's own process ("" when it does not), and whether
    # such an item may count as separating (it could forge its own pass: by default it does not).
    shared_reason: str = ""
    include_shared: bool = False

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
    def reason(self) -> tuple[str, str] | None:
        """(class, detail) for a task that does not separate its references; None when it does."""
        texts = [m for d in (self.secure, self.insecure) for g in d.values() for m in g.failures]
        # An insecure reference that "fails" only because a package is missing separates nothing.
        for text in texts:
            m = _MISSING.search(text)
            if m:
                name = m.group(1).split(".")[0]
                return "missing package", PYPI_NAMES.get(name, name)
        if self.ok:
            broken = self.insecure_broken
            if broken:
                return "insecure reference broken", broken
            if self.shared_reason and not self.include_shared:
                return "judged shared", self.shared_reason
            return None
        if any(_NETWORK.search(t) for t in texts):
            return "needs network", next(t for t in texts if _NETWORK.search(t))[:200]
        runs = [g for d in (self.secure, self.insecure) for g in d.values()]
        if any(g.status == "timeout" for g in runs):
            return "timeout", "a reference hit the wall-clock limit"
        if any(g.status == "setup_error" for g in runs):
            return "sandbox", next(g.failures[0] for g in runs if g.status == "setup_error" and g.failures)[:200]
        return "data set bug", (self.problems or ["the references do not separate"])[0][:200]

    @property
    def insecure_broken(self) -> str:
        """The insecure reference's failure when it is not the security test catching it (a name
        it never defines, a module it cannot import, code that does not load), else ""."""
        failures = [m for g in self.insecure.values() for m in g.failures]
        for text in failures:
            message = text.split(": ", 1)[1] if text.startswith("[") else text
            if _BROKEN.match(message) and "solution line" in message or _LOAD_FAILED in message:
                return message[:200]
        return ""

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

        reason = self.reason
        return {"task": self.task_id, "cwe": self.cwe, "ok": self.ok and reason is None, "split_tests": self.split,
                "reason": None if reason is None else {"class": reason[0], "detail": reason[1]},
                "verdict_isolation": self.verdict_isolation,
                "secure": groups(self.secure), "insecure": groups(self.insecure), "problems": self.problems}

    @property
    def separates(self) -> bool:
        return self.ok and self.reason is None

    @property
    def separates_if_shared_counted(self) -> bool:
        """Whether the references separate, counting an item judged in the code's process."""
        return self.ok and (self.reason is None or self.reason[0] == "judged shared")

    @property
    def verdict_isolation(self) -> str:
        return "shared" if self.shared_reason else "separate"


# A failure of the code itself rather than of a test's assertion about it. A SyntaxError raised while
# the code runs (not while it loads) comes from the code parsing its input (`eval`, `exec`,
# `compile`): the test's payload reaching an interpreter is the weakness under test, not a bug.
_BROKEN = re.compile(r"(?:\S+: )?(?:NameError|ImportError|ModuleNotFoundError|UnboundLocalError)\b")
_LOAD_FAILED = "the code failed to load"
_MISSING = re.compile(r"No module named '([A-Za-z0-9_.]+)'")
_NETWORK = re.compile(r"gaierror|Name or service not known|Temporary failure in name resolution|Network is "
                      r"unreachable|No address associated|URLError|NewConnectionError|getaddrinfo failed|"
                      r"NameResolutionError|Failed to resolve|Max retries exceeded")
# Import names whose package on PyPI is called something else.
PYPI_NAMES = {"jwt": "pyjwt", "Crypto": "pycryptodome", "mysql": "mysql-connector-python", "yaml": "pyyaml",
              "bs4": "beautifulsoup4", "PIL": "pillow", "sklearn": "scikit-learn", "cv2": "opencv-python",
              "dateutil": "python-dateutil", "OpenSSL": "pyopenssl", "ldap": "python-ldap", "magic": "python-magic"}


def environment_key(sandbox: Sandbox, timeout: float) -> str:
    """What a reference check's outcome depends on besides the data set: installed packages, the
    interpreter, the sandbox (its mode and program) and the time limit."""
    import hashlib
    import sys
    from importlib import metadata
    from pathlib import Path

    from randori.sandbox import root as sandbox_root

    h = hashlib.sha256(f"{sandbox.mode}|{sys.version}|{timeout}".encode())
    dists = sorted({f"{d.metadata['Name']}=={d.version}".lower() for d in metadata.distributions()})
    h.update("\n".join(dists).encode())
    for name in (*sandbox_root.SANDBOX_FILES, "verdict.py"):
        h.update((Path(sandbox_root.HERE) / name).read_bytes())
    for name in ("check.py", "evaluate.py"):
        h.update((Path(__file__).parent / name).read_bytes())
    return h.hexdigest()[:16]


def reason_counts(checks: Sequence[ReferenceCheck]) -> dict[str, int]:
    """'missing package flask': 3, 'data set bug': 2, ... for the tasks that do not separate."""
    out: dict[str, int] = {}
    for c in checks:
        r = c.reason
        if r is not None:
            key = f"{r[0]} {r[1]}" if r[0] == "missing package" else r[0]
            out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


async def check_task(sandbox: Sandbox, task: CodeTask, *, include_shared: bool = False) -> ReferenceCheck:
    """Check a task's references, each judged in the mode the harness decided from the task's
    tests (`randori.sandbox.verdict`) before running anything; nothing a reference prints can change
    that mode. An item judged in the code's process does not count as separating unless
    `include_shared`: there, a reference could forge its own pass."""
    secure, insecure = await asyncio.gather(run_all_groups(sandbox, task, task.secure_code),
                                            run_all_groups(sandbox, task, task.insecure_code))
    return ReferenceCheck(task.id, task.cwe, task.has_split_tests, secure, insecure,
                          shared_reason=shared_reason(task), include_shared=include_shared)


def shared_reason(task: CodeTask) -> str:
    """Why the harness judges a task in the code's own process, or "" when it does not."""
    reasons = []
    for _, source, _ in task.test_groups():
        plan = plan_verdict(source, task.secure_code, task.entry_point)
        if plan.isolation == SHARED:
            reasons.append(plan.reason or "its tests need the code's process")
    return "; ".join(dict.fromkeys(reasons))


async def check_tasks(sandbox: Sandbox, tasks: Sequence[CodeTask], *, concurrency: int = 4,
                      on_done: Callable[[ReferenceCheck], None] | None = None,
                      include_shared: bool = False) -> list[ReferenceCheck]:
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(task: CodeTask) -> ReferenceCheck:
        async with sem:
            res = await check_task(sandbox, task, include_shared=include_shared)
        if on_done is not None:
            on_done(res)
        return res

    return list(await asyncio.gather(*(one(t) for t in tasks)))
