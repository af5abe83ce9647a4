"""Judge code from anywhere in randori: run tests and exploits against it in the sandbox, where
the verdict comes from a process the code cannot reach.

    from randori.sandbox.judge import judge

    result = await judge(code, tests, entry_point="handle")
    result.passed, [(o.name, o.passed, o.message) for o in result.outcomes]

`code` is loaded as a module in a process of its own; `tests` (functions named `test_*`, or one
`check`) run in the judge's process and get `candidate` (the entry point), any other top-level
function of the code they call by name, and any other module-level name of the code they use
(an `app`, a global, a class), all reached through proxies so that every comparison happens in
the judge on plain values. For a repository, `fixture_dir` is copied into the work folder (the
cwd; the code cannot change those files) and `code` can be a few lines that import from it.

Tests also get, from the judge: `exploit_canary()` (a fresh folder the judge watches: point an
exploit's payload at `canary.path` and assert `not canary.events()`; whatever the code does
afterwards, the events are already the judge's), `candidate_cpu_time()` and
`candidate_memory_peak()` (the code's whole process tree, measured from outside),
`set_candidate_env(NAME=value)`, `seed_candidate_random(n)` and `SOLUTION_SOURCE`.

Tests that cannot work this way (they patch modules the code uses, hand it objects of their own,
look at their own process) would have to run inside the code's process, where the code could
forge its verdict: `judge` refuses them unless `allow_shared=True`, and the result then says
`isolation["verdict_isolation"] == "shared"`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from randori.sandbox.runner import Limits, RunResult, Sandbox, TestJob, finalize_outcomes
from randori.sandbox.verdict import SHARED, collect_test_names, plan_verdict


class NeedsSharedProcess(ValueError):
    """The tests can only run inside the code's own process, where it could forge the verdict."""


async def judge(code: str, tests: str, *, entry_point: str, sandbox: Sandbox | None = None,
                limits: Limits | None = None, test_names: Sequence[str] | None = None,
                reference: str | None = None, files: Mapping[str, str] | None = None,
                fixture_dir: Path | None = None, setup: str = "", site_packages: bool = False,
                allow_shared: bool = False) -> RunResult:
    """Run `tests` against `code` in the sandbox; every expected test gets an outcome.

    `reference`: trusted code with the same module-level names, used to plan how the tests reach
    the code; its imports become the same imports for the tests. Without one, the code's own text
    says which names are its functions and objects (reached only through stand-ins and proxies),
    and the tests import what they use themselves. `files`: extra
    files (path -> text) for the work folder; `setup`: Python run by the judge in the work folder
    before the code loads; `site_packages`: let the code see installed third-party packages."""
    names = list(test_names) if test_names is not None else collect_test_names(tests) or ["check"]
    plan = plan_verdict(tests, reference if reference is not None else code, entry_point)
    if plan.isolation == SHARED and not allow_shared:
        raise NeedsSharedProcess(f"these tests can only run in the code's own process ({plan.reason})")
    job = TestJob(code=code, tests=tests, entry_point=entry_point, test_names=names, fixture_dir=fixture_dir,
                  files=dict(files or {}), setup=setup, site_packages=site_packages,
                  verdict_isolation=plan.isolation,  # type: ignore[arg-type]
                  # Import statements are run in the judge: they come from trusted text only.
                  imports=plan.imports if reference is not None else (), functions=plan.functions,
                  code_names=plan.code_names)
    result = await (sandbox or _default()).run(job, limits=limits)
    return finalize_outcomes(result, names)


_SANDBOX: Sandbox | None = None


def _default() -> Sandbox:
    global _SANDBOX
    if _SANDBOX is None:
        _SANDBOX = Sandbox()
    return _SANDBOX
