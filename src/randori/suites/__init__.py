"""Built-in suites. Each is a package exposing `suite`; third-party suites register through the
`randori.suites` entry point group."""

from __future__ import annotations

from typing import Any

from randori.registry import Registry
from randori.tasks.suite import TaskSuite

BUILTIN: dict[str, str] = {
    "banking": "randori.suites.banking:suite",
    "devops": "randori.suites.devops:suite",
    "workspace": "randori.suites.workspace:suite",
    "chat": "randori.suites.chat:suite",
    "travel": "randori.suites.travel:suite",
}

SUITES = Registry("suite", "randori.suites", BUILTIN)


def suite_names() -> list[str]:
    return SUITES.names()


def get_suite(name: str) -> TaskSuite[Any]:
    return SUITES.load(name)  # type: ignore[no-any-return]
