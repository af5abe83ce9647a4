"""AgentDojo's suites (`agentdojo:workspace|travel|banking|slack[@VERSION]`), read at run time from
the installed `agentdojo` package (the `agentdojo` extra). randori holds none of their tasks, tools
or data: this package only adapts the package's objects to randori's suite interface."""

from __future__ import annotations

import functools
import importlib.util
import json
from typing import Any

from randori.errors import UserError

PREFIX = "agentdojo:"
DEFAULT_VERSION = "v1.2.2"
PACKAGE_VERSION = "0.1.35"


def is_agentdojo(name: str) -> bool:
    return name.startswith(PREFIX)


def installed() -> bool:
    return importlib.util.find_spec("agentdojo") is not None


def install_hint() -> str:
    """How to add the extra to this randori: from its checkout when it was installed from one."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        direct = distribution("randori").read_text("direct_url.json")
    except PackageNotFoundError:
        direct = None
    editable = bool(direct) and json.loads(direct or "{}").get("dir_info", {}).get("editable", False)
    if editable:
        return "pip install -e '.[agentdojo]' (in randori's checkout)"
    return "pip install 'randori[agentdojo]'"


def _require() -> None:
    if not installed():
        raise UserError(f"AgentDojo's suites need the agentdojo package: {install_hint()}")


@functools.cache
def versions() -> tuple[str, ...]:
    """Every benchmark version the installed package ships (v1, v1.1, ... v1.2.2)."""
    import pkgutil

    import agentdojo.default_suites
    from agentdojo.task_suite.load_suites import get_suites

    found = [m.name.replace("_", ".") for m in pkgutil.iter_modules(agentdojo.default_suites.__path__)]
    ok = [v for v in found if v.startswith("v") and get_suites(v)]
    return tuple(sorted(ok, key=lambda v: tuple(int(p) for p in v[1:].split("."))))


def suite_names() -> list[str]:
    """The suites of the default version, named as `--suite` takes them; none without the package."""
    if not installed():
        return []
    from agentdojo.task_suite.load_suites import get_suites

    return [PREFIX + s for s in get_suites(DEFAULT_VERSION)]


def canonical(short: str, version: str) -> str:
    """The name cases are filed under: the default version needs no `@`."""
    return f"{PREFIX}{short}" if version == DEFAULT_VERSION else f"{PREFIX}{short}@{version}"


def parse(name: str) -> tuple[str, str]:
    """'agentdojo:banking@v1.1.2' -> ('banking', 'v1.1.2'), checked against the installed package."""
    _require()
    short, _, version = name[len(PREFIX):].partition("@")
    version = version or DEFAULT_VERSION
    if version not in versions():
        raise UserError(f"suite '{name}': AgentDojo {PACKAGE_VERSION} has no benchmark version '{version}' "
                        f"(versions: {', '.join(versions())})")
    from agentdojo.task_suite.load_suites import get_suites

    known = get_suites(version)
    if short not in known:
        raise UserError(f"suite '{name}': AgentDojo {version} has no suite '{short}' "
                        f"(suites: {', '.join(PREFIX + s for s in known)})")
    return short, version


def load(name: str) -> Any:
    """The randori suite for `name`; one object per suite and version in a process."""
    return _load(*parse(name))


@functools.cache
def _load(short: str, version: str) -> Any:
    from agentdojo.task_suite.load_suites import get_suites

    from randori.suites.agentdojo.pipeline import attack_user_name
    from randori.suites.agentdojo.suite import AgentDojoSuite

    source = get_suites(version)[short]
    return AgentDojoSuite(canonical(short, version), version, source, user_name=attack_user_name(source))
