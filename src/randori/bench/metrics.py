"""Rates with Wilson 95% intervals, grouped per (model, defense, attack) per suite and pooled.

Error cases are counted apart and excluded from every rate: a provider failure is nobody's success.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054
POOLED = "all"


@dataclass(frozen=True)
class Rate:
    successes: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.successes / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.successes, self.n)

    def as_dict(self) -> dict[str, Any]:
        lo_hi = self.interval
        return {"rate": self.rate, "low": lo_hi[0] if lo_hi else None,
                "high": lo_hi[1] if lo_hi else None, "successes": self.successes, "n": self.n}


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _rate(rows: list[dict[str, Any]], field: str) -> Rate:
    ok = [r for r in rows if r["status"] == "ok"]
    return Rate(sum(1 for r in ok if r[field]), len(ok))


def summarize(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (model, defense, attack, suite) plus pooled rows (suite = "all").

    Benign cases carry no attack; their utility is shown on every attack row of the same
    (model, defense, suite), and on a row with attack None when no attack was run."""
    by_scope: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        for suite in (r["suite"], POOLED):
            by_scope[(r["model"], r["defense"], suite)].append(r)
    out: list[dict[str, Any]] = []
    for (model, defense, suite), scope_rows in sorted(by_scope.items()):
        if suite == POOLED and len({r["suite"] for r in scope_rows}) < 2:
            continue
        benign = [r for r in scope_rows if r["kind"] == "benign"]
        capability = [r for r in scope_rows if r["kind"] == "injection_only"]
        attacked: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in scope_rows:
            if r["kind"] == "attacked":
                attacked[r["attack"]].append(r)
        for attack in sorted(attacked) or [None]:
            arows = attacked.get(attack, []) if attack else []
            group = benign + capability + arows
            seen = [r for r in arows if r["injection_seen"]]
            out.append({
                "model": model, "defense": defense, "attack": attack, "suite": suite,
                "suite_versions": sorted({f"{r['suite']}@{r['suite_version']}" for r in group}),
                "cases": len(group),
                "errors": sum(1 for r in group if r["status"] != "ok"),
                "benign_utility": _rate(benign, "utility").as_dict(),
                "utility_under_attack": _rate(arows, "utility").as_dict(),
                "attack_success": _rate(arows, "attack_succeeded").as_dict(),
                "attack_success_when_seen": _rate(seen, "attack_succeeded").as_dict(),
                "injection_seen": _rate(arows, "injection_seen").as_dict(),
                "injection_task_utility": _rate(capability, "utility").as_dict(),
                "model_calls": sum(r["model_calls"] for r in group),
                "input_tokens": sum(r["input_tokens"] for r in group),
                "output_tokens": sum(r["output_tokens"] for r in group),
                "defense_calls": sum(r["defense_calls"] for r in group),
                "wall_time_s": round(sum(r["duration_s"] for r in group), 3),
            })
    return out
