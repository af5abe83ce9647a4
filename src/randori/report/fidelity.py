"""Fidelity and friction: what a defense costs the user where it shows. Fidelity is utility on the tasks
that need their data (`UserTask.data_directed`), benign and under attack; friction is the approvals a
defense asks of the user per benign case (the `confirm` defense; 0 for defenses that never ask).

Fidelity: A defense that silences what the data says looks free on the other tasks and shows its cost
here. A row counts when its suite, at the version it ran, marked its user task data-directed: the run
stored that mark with the row. Rows stored before it was (NULL) are looked up in the built-in suites at
the version they ran; a report never imports a plugin to find out."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from randori.bench.verdict import utility_kept
from randori.stats import Rate

LEGEND = ("fidelity = utility on the tasks that need their data (the user leaves a step or a value to "
          "what the data says): benign, and under attack (done, attacker's goal not reached). "
          "% with [Wilson 95% interval]; n = cases.")
FRICTION_LEGEND = (" friction = approvals the defense asked of the user per benign case (all benign cases, "
                   "not only these; 0 for defenses that never ask).")


@functools.lru_cache(maxsize=4096)
def _marked(suite: str, version: str, user_task: str) -> bool:
    from randori.suites import BUILTIN, get_suite

    if suite not in BUILTIN:  # a plugin's or a foreign suite: only what the run stored is known
        return False
    s = get_suite(suite)
    task = s.user_tasks.get(user_task)
    return s.version == version and task is not None and bool(getattr(task, "data_directed", False))


def data_directed(row: dict[str, Any]) -> bool:
    ut = row.get("user_task")
    if not ut:
        return False
    if row.get("data_directed") is not None:
        return bool(row["data_directed"])
    return _marked(row["suite"], row.get("suite_version", ""), ut)


def _rate(rows: list[dict[str, Any]], ok: Any) -> Rate:
    done = [r for r in rows if r["status"] == "ok"]
    return Rate(sum(1 for r in done if ok(r)), len(done))


def fidelity_rates(benign: list[dict[str, Any]], attacked: list[dict[str, Any]]) -> dict[str, Any]:
    """The two fidelity rates of a scope's benign and attacked rows (errors left out)."""
    return {"fidelity_benign": _rate([r for r in benign if data_directed(r)], lambda r: bool(r["utility"])).as_dict(),
            "fidelity_under_attack": _rate([r for r in attacked if data_directed(r)], utility_kept).as_dict()}


def friction_fields(benign: list[dict[str, Any]]) -> dict[str, Any]:
    """Friction over a scope's benign cases (errors left out): approvals asked per case (None with no
    case), the cases, and the approvals asked and refused in all. A row stored before randori counted
    approvals, or by a defense that never asks, asked none."""
    done = [r for r in benign if r["status"] == "ok"]
    asked = sum(r.get("approvals_asked") or 0 for r in done)
    return {"friction": round(asked / len(done), 3) if done else None, "friction_n": len(done),
            "approvals_asked": asked, "approvals_refused": sum(r.get("approvals_refused") or 0 for r in done)}


def _friction_cell(r: dict[str, Any]) -> str:
    f = r.get("friction")
    return "-" if f is None else f"{f:.2f}".rstrip("0").rstrip(".") if f else "0"


def render_fidelity(summary: Sequence[dict[str, Any]], width: int = 80) -> str:
    """Per (model, defense, attack) and suite: fidelity benign and under attack, and, when some defense
    asked the user for approvals, friction (for every row). Empty when no row has a data-directed case
    and no defense asked."""
    from randori.report.compact import grouped_table, ordered, short_rate

    asked = any(r.get("approvals_asked") for r in summary)
    rows = [r for r in ordered(summary) if r.get("fidelity_benign", {}).get("n")
            or r.get("fidelity_under_attack", {}).get("n") or (asked and r.get("friction_n"))]

    def cells(r: dict[str, Any]) -> tuple[str, ...]:
        rates = (short_rate(r["fidelity_benign"]), short_rate(r["fidelity_under_attack"]))
        n = f"{r['fidelity_benign']['n']}+{r['fidelity_under_attack']['n']}"
        return (*rates, _friction_cell(r), n) if asked else (*rates, n)

    if asked:
        return grouped_table(summary, rows, "fidelity: utility on tasks that need their data, %; friction",
                             ("suite", "benign", "under attack", "friction", "n"), cells, LEGEND + FRICTION_LEGEND,
                             width)
    return grouped_table(summary, rows, "fidelity: utility on tasks that need their data, %",
                         ("suite", "benign", "under attack", "n"), cells, LEGEND, width)
