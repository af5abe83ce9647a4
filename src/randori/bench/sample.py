"""Deterministic subsets of a plan, for spending less: `--sample FRACTION` and `--limit N`.

A sampling unit is what a case is *about*, without who runs it: (suite, kind, user task, injection
task). Model, defense, attack and repeat are left out, so a sampled unit keeps all of them and every
case in the sample has its pair in the other configurations (see `randori compare`). Units are
ranked by a seeded hash, and a fraction keeps the first units of each stratum in that rank: a larger
fraction (same seed) keeps a superset, so `--sample 0.1` then `--sample 0.5` then a full run never
runs a case twice, since the case keys, which the store resumes by, do not depend on the sample.

Strata: attacked cases per (suite, user task), so every user task keeps its share of injection
tasks; benign, injection-only and denial-of-service cases per suite.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from randori.bench.cases import Case

Unit = tuple[str, str, str, str]


def unit(case: Case) -> Unit:
    return (case.suite, case.kind, case.user_task or "", case.injection_task or "")


def _stratum(u: Unit) -> tuple[str, ...]:
    suite, kind, user_task, _ = u
    return (suite, kind, user_task) if kind == "attacked" else (suite, kind)


def rank(u: Unit, seed: int) -> str:
    return hashlib.sha256("\x00".join((str(seed), *u)).encode()).hexdigest()


def sample(cases: Sequence[Case], fraction: float, seed: int = 0) -> list[Case]:
    """The cases of the kept units (at least one unit per stratum), in their planned order."""
    if fraction >= 1:
        return list(cases)
    strata: dict[tuple[str, ...], set[Unit]] = defaultdict(set)
    for c in cases:
        u = unit(c)
        strata[_stratum(u)].add(u)
    kept: set[Unit] = set()
    for units in strata.values():
        ranked = sorted(units, key=lambda u: rank(u, seed))
        kept.update(ranked[:max(1, math.ceil(fraction * len(ranked) - 1e-9))])
    return [c for c in cases if unit(c) in kept]


def limit(cases: Sequence[Case], n: int, seed: int = 0) -> list[Case]:
    """At most `n` cases, whole units first in seeded rank order (a unit's cases under every model,
    defense, attack and repeat stay together, so what a limited run stores is paired)."""
    if n >= len(cases):
        return list(cases)
    order = sorted(range(len(cases)), key=lambda i: (rank(unit(cases[i]), seed), i))
    return [cases[i] for i in sorted(order[:n])]


def describe(fraction: float | None, seed: int, n_limit: int | None) -> dict[str, Any]:
    """What a run records about its subset (in the run's config in the store)."""
    out: dict[str, Any] = {}
    if fraction is not None:
        out["sample"] = {"fraction": fraction, "seed": seed}
    if n_limit is not None:
        out["limit"] = {"cases": n_limit, "seed": seed}
    return out
