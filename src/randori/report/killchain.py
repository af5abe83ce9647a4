"""The kill chain of attacked scenarios and the utility of scenarios, per (model, defense, attack, suite):
how many attacked scenarios got exposed, persisted, triggered and executed, and how many sessions and
whole scenarios the user got done, each a rate with its Wilson 95% interval."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from randori.report.metrics import rate_of
from randori.stats import Rate

STAGES = ("exposed", "persisted", "triggered", "executed")


def _sessions(row: dict[str, Any]) -> list[dict[str, Any]]:
    raw = row.get("sessions")
    if isinstance(raw, str):
        return list(json.loads(raw))
    return list(raw or [])


def kill_chain_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (suite, model, defense, attack) of scenario cases; attack "-" is the benign runs.
    Stage rates count over the attacked scenarios that ran; `session_utility` over their sessions."""
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["kind"] in ("scenario", "scenario_attacked"):
            groups[(r["suite"], r["model"], r["defense"], r["attack"] or "-")].append(r)
    out = []
    for (suite, model, defense, attack), g in sorted(groups.items()):
        ok = [r for r in g if r["status"] == "ok"]
        sessions = [s for r in ok for s in _sessions(r)]
        row: dict[str, Any] = {
            "suite": suite, "model": model, "defense": defense, "attack": attack, "scenarios": len(g),
            "errors": len(g) - len(ok), "utility": rate_of(g, "utility").as_dict(),
            "session_utility": Rate(sum(1 for s in sessions if s.get("utility")), len(sessions)).as_dict()}
        if attack != "-":
            row |= {stage: rate_of(g, stage).as_dict() for stage in STAGES}
        out.append(row)
    return out


def _pct(rate: dict[str, Any]) -> str:
    return "-" if rate["rate"] is None else f"{100 * rate['rate']:.0f}%"


def kill_chain_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The terminal's scenario section: two or three short lines per group (fits 80 columns)."""
    chain = kill_chain_rows(rows)
    if not chain:
        return []
    out = ["", "Scenarios (done: sessions and whole scenarios; kill chain of attacked ones):"]
    for r in chain:
        errors = f", {r['errors']} errors" if r["errors"] else ""
        out.append(f"{r['suite']} · {r['model']} · {r['defense']} · {r['attack']} (n={r['scenarios']}{errors})")
        out.append(f"  done: sessions {_pct(r['session_utility'])}, scenarios {_pct(r['utility'])}")
        if "exposed" in r:
            out.append("  kill chain: " + "  ".join(f"{s} {_pct(r[s])}" for s in STAGES))
    return out
