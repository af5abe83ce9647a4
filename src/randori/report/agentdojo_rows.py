"""Beside randori's utility under attack (the user task done and the attacker's goal not reached),
AgentDojo's own definition for its suites (the user task done, whatever the attacker got), so that a
row can be set next to a published AgentDojo table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from randori.report.compact import ordered, short_rate
from randori.text import columns, terminal_width, wrap


def agentdojo_lines(summary: Sequence[dict[str, Any]], width: int | None = None) -> list[str]:
    rows = [r for r in ordered(summary) if r.get("utility_under_attack_agentdojo", {}).get("n")]
    if not rows:
        return []
    width = width or terminal_width()
    table = [("suite", "randori's", "AgentDojo's")]
    marks: list[str | None] = [None]
    last = None
    for r in rows:
        group = f"{r['model']} · defense {r['defense']} · {r['attack']}"
        marks.append(group if group != last else None)
        last = group
        table.append((r["suite"], short_rate(r["utility_under_attack"]),
                      short_rate(r["utility_under_attack_agentdojo"])))
    out = ["", wrap("Utility under attack on AgentDojo's suites, % [95% interval]: randori's (user task done, "
                    "attacker's goal not reached) and AgentDojo's (user task done, whatever the attacker got: "
                    "the figure its papers publish).", width, "", "")]
    for mark, line in zip(marks, columns(table, gap="  "), strict=True):
        if mark is not None:
            out.append(wrap(mark, width, "", "    "))
        out.append(line)
    return out
