"""Built-in suites. Each is a package exposing `suite`; third-party suites register through the
`randori.suites` entry point group."""

from __future__ import annotations

from typing import Any

from randori.errors import UserError
from randori.registry import Registry, describe_exception
from randori.tasks.suite import TaskSuite

BUILTIN: dict[str, str] = {
    "banking": "randori.suites.banking:suite",
    "devops": "randori.suites.devops:suite",
    "workspace": "randori.suites.workspace:suite",
    "chat": "randori.suites.chat:suite",
    "travel": "randori.suites.travel:suite",
    "coding": "randori.suites.coding:suite",
}


def _check(obj: Any) -> str | None:
    return None if isinstance(obj, TaskSuite) else f"is not a TaskSuite (it is a {type(obj).__name__})"


SUITES = Registry("suite", "randori.suites", BUILTIN, _check)


def suite_names() -> list[str]:
    return SUITES.names()


def is_plugin(name: str) -> bool:
    """A suite a third-party package registers (an entry point). Commands that only read results
    (report, compare, export, view) never import one: a slow, noisy or broken plugin cannot touch them."""
    return name not in BUILTIN and name in SUITES.table()


def listed_suite_names() -> list[str]:
    """What `randori suites list` shows: every installed suite, AgentDojo's when its package is there.
    AgentDojo's are run only when named (`--suite agentdojo:banking`), never as part of "all"."""
    from randori.suites import agentdojo

    return [*suite_names(), *agentdojo.suite_names()]


def get_suite(name: str) -> TaskSuite[Any]:
    from randori.suites import agentdojo

    if agentdojo.is_agentdojo(name):
        return agentdojo.load(name)  # type: ignore[no-any-return]
    suite: TaskSuite[Any] = SUITES.load(name)
    if suite.name != name:  # cases are filed under suite.name: two names for one suite would mix them
        raise UserError(f"suite '{name}' from {SUITES.table()[name]} calls itself '{suite.name}'; "
                        "register it under its own name")
    return suite


def ready_suite(name: str, reach: bool = True) -> TaskSuite[Any]:
    """`get_suite(name)` with its data read and the vectors each user task reaches worked out: what a
    run needs before planning. Whatever a suite's own code raises here becomes a UserError naming it.
    `reach=False` leaves the vectors out (a worker process runs cases planned elsewhere: it never
    needs them, and working them out replays every user task's reference solution)."""
    suite = get_suite(name)
    try:
        suite.load_env()
        for tid in suite.user_tasks if reach else ():
            suite.reachable_vectors(tid)
    except UserError:
        raise
    except Exception as e:
        raise UserError(f"suite '{name}' cannot be prepared: {describe_exception(e)}") from None
    return suite
