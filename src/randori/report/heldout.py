"""Train and held-out attack success side by side: what an attack optimised on one split of the
tasks achieves there, and what the texts it found achieve on another split (randori.tasks.splits)."""

from __future__ import annotations

from typing import Any

from randori.bench.verdict import utility_kept
from randori.report.metrics import rate_of
from randori.report.terminal import fmt_rate
from randori.text import columns


def stage_row(stage: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One stage (train or held-out) of a train -> test run: its attacked cases' rates, and the
    benign utility of its user tasks when benign cases ran."""
    attacked = [r for r in rows if r["kind"] == "attacked"]
    benign = [r for r in rows if r["kind"] == "benign"]
    first = attacked[0] if attacked else (rows[0] if rows else {})
    return {"stage": stage, "split": _split_name(rows), "model": first.get("model"), "defense": first.get("defense"),
            "attack": first.get("attack"), "cases": len(attacked),
            "errors": sum(1 for r in attacked if r["status"] != "ok"),
            "attack_success": rate_of(attacked, "attack_succeeded").as_dict(),
            "utility_under_attack": rate_of(attacked, utility_kept).as_dict(),
            "benign_utility": rate_of(benign, "utility").as_dict(),
            "suite_versions": sorted({f"{r['suite']}@{r['suite_version']}" for r in rows})}


def _split_name(rows: list[dict[str, Any]]) -> str | None:
    import json

    names = {json.loads(r["split"])["name"] if isinstance(r["split"], str) else r["split"]["name"]
             for r in rows if r.get("split")}
    return ", ".join(sorted(names)) or None


def held_out_lines(stages: list[dict[str, Any]]) -> list[str]:
    """The two stages as an aligned table that fits 80 columns, with a line saying what each is."""
    table = [["stage", "split", "attack success [95% CI]", "utility kept", "benign utility"]]
    for s in stages:
        table.append([s["stage"], s["split"] or "-", fmt_rate(s["attack_success"]),
                      fmt_rate(s["utility_under_attack"]), fmt_rate(s["benign_utility"])])
    lines = columns(table)
    for s in stages:
        lines.append(f"  {s['stage']}: {s['attack']} against {s['model']}, defense {s['defense']}")
    return lines
