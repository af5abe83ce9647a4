"""Which rows a report reads: those of each suite's current version (older ones are counted, not shown)."""

from __future__ import annotations

from typing import Any


def current_rows(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Keep rows whose suite version is the current one: the installed version of a built-in suite;
    for a plugin's suite, the version of its latest results in the store. Plugins stay unimported: a
    report reads the store alone, so a slow, noisy or broken plugin cannot slow or spoil it. Other
    suites (AgentDojo's, uninstalled ones) keep every version."""
    from randori.suites import BUILTIN, get_suite, is_plugin

    current: dict[str, str] = {}
    names = {r["suite"] for r in rows}
    for name in sorted(names & set(BUILTIN)):
        current[name] = get_suite(name).version
    plugins = {n for n in names if is_plugin(n)}
    newest: dict[str, float] = {}
    for r in rows:
        if r["suite"] in plugins and (r["created_at"] or 0) >= newest.get(r["suite"], float("-inf")):
            newest[r["suite"]], current[r["suite"]] = r["created_at"] or 0, r["suite_version"]
    kept = [r for r in rows if current.get(r["suite"], r["suite_version"]) == r["suite_version"]]
    return kept, len(rows) - len(kept)
