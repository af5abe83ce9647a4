"""`randori attacks export`: the injection texts that succeeded in a results store, as a bank that
`--attack "bank[file=...]"` replays against another model or defense (randori.attacks.bank)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from randori.bench.store import Store


def bank_entries(store: Store, keys: Collection[str] | None = None) -> tuple[list[dict[str, Any]], int]:
    """One entry per distinct successful text (suite, injection task, injections), of the cases in
    `keys` (default: every case), and how many successful cases were left out because their suite
    version is not the installed one (their goal's wording cannot be vouched for)."""
    from randori.suites import get_suite

    goals: dict[tuple[str, str], dict[str, str]] = {}
    entries: dict[str, dict[str, Any]] = {}
    skipped = 0
    rows = store.cases("kind = 'attacked' AND status = 'ok' AND attack_succeeded = 1")
    if keys is not None:
        rows = [r for r in rows if r["key"] in keys]
    for r in sorted(rows, key=lambda r: (r["suite"], r["injection_task"], r["user_task"], r["attack"], r["key"])):
        where = (r["suite"], r["suite_version"])
        if where not in goals:
            try:
                suite = get_suite(r["suite"])
                goals[where] = ({k: t.goal for k, t in suite.injection_tasks.items()}
                                if suite.version == r["suite_version"] else {})
            except Exception:  # a suite that is no longer installed
                goals[where] = {}
        goal = goals[where].get(r["injection_task"])
        trace = store.trace(r["key"]) or {}
        injections = trace.get("injections") or {}
        if goal is None or not injections:
            skipped += 1
            continue
        entry = {"suite": r["suite"], "suite_version": r["suite_version"], "user_task": r["user_task"],
                 "injection_task": r["injection_task"], "goal": goal, "attack": r["attack"], "model": r["model"],
                 "defense": r["defense"], "injections": injections}
        entries.setdefault(repr((r["suite"], r["injection_task"], r["user_task"], sorted(injections.items()))), entry)
    return list(entries.values()), skipped
