"""The robustness table: per (model, defense), static attack success (the fixed attacks together),
adaptive attack success at each budget of victim queries, and utility, over the held-out split when
the store has one (randori.tasks.splits)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from randori.bench.verdict import utility_kept
from randori.report.fidelity import fidelity_rates, friction_fields
from randori.report.metrics import max_rows, rate_of

HELD_OUT = "test"


def _split(row: dict[str, Any]) -> str | None:
    s = row.get("split")
    return (json.loads(s) if isinstance(s, str) else s)["name"] if s else None


Curve = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def robustness_rows(rows: list[dict[str, Any]], budget_rows: Curve) -> list[dict[str, Any]]:
    """One row per (model, defense). When some rows were selected by the `test` split, only those
    count (`split` says which were read): an attack tuned on train is scored where it was not tuned.
    Static: a pair counts as broken if any fixed attack broke it; adaptive: per adaptive or search
    attack, success within each budget, as `budget_rows` (randori.report.tables, which holds this
    table too) reads it."""
    held_out = [r for r in rows if _split(r) == HELD_OUT]
    scope, split = (held_out, HELD_OUT) if held_out else (rows, None)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in scope:
        groups[(r["model"], r["defense"])].append(r)
    out = []
    for (model, defense), g in sorted(groups.items()):
        static = [r for r in g if r["kind"] == "attacked" and r.get("attack_tries") is None]
        pooled = max_rows(static) if len({r["attack"] for r in static}) > 1 else static
        adaptive: dict[str, dict[str, Any]] = defaultdict(dict)
        for b in budget_rows(g):
            if b["suite"] == "all" or len({r["suite"] for r in g}) == 1:
                adaptive[b["attack"]][str(b["budget"])] = b["attack_success"]
        out.append({"model": model, "defense": defense, "split": split,
                    "static_attacks": sorted({r["attack"] for r in static}),
                    "static_attack_success": rate_of(pooled, "attack_succeeded").as_dict(),
                    "adaptive_attack_success": dict(adaptive),
                    "benign_utility": rate_of([r for r in g if r["kind"] == "benign"], "utility").as_dict(),
                    "utility_under_attack": rate_of([r for r in g if r["kind"] == "attacked"],
                                                    utility_kept).as_dict(),
                    # Utility on the tasks that need their data (n = 0 where none ran; report/fidelity.py).
                    **fidelity_rates([r for r in g if r["kind"] == "benign"],
                                     [r for r in g if r["kind"] == "attacked"]),
                    **friction_fields([r for r in g if r["kind"] == "benign"])})
    return out
