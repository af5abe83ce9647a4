"""Paired comparisons of configurations (models, defenses, attacks, or two results directories).

Two configurations are compared on the cases they share: a pair is the same (kind, suite version,
user task, injection task, attack, repeat) under each, everything else about the case held equal
(the other dimensions form separate groups, e.g. one comparison of defenses per model). Cases that
ended in an error on either side, or that only one side has, are left out and counted.

Per metric, on the pairs: both rates, the difference (other minus baseline) with Newcombe's hybrid
score interval for paired proportions (method 10 of Newcombe 1998; Wilson intervals for each
margin, joined through the pairs' correlation), and McNemar's exact test: under "no difference" each
discordant pair is equally likely to go either way, so the two-sided p-value is the binomial tail
of the smaller discordant count, doubled. With several configurations, each is compared with one
baseline and the p-values of each (group, metric, suite) family get Holm's step-down correction.

Metrics use `randori.report.metrics` definitions: utility under attack is `utility_kept` (the user
task done and the attacker's goal not reached).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from randori.bench.verdict import utility_kept
from randori.errors import UserError
from randori.report.fidelity import data_directed
from randori.report.metrics import POOLED
from randori.report.natural import natural_key
from randori.stats import Z95, wilson

DIMENSIONS = ("model", "defense", "attack", "results")
# metric -> (kind of case, success test)
METRICS: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    "benign_utility": ("benign", lambda r: bool(r["utility"])),
    "utility_under_attack": ("attacked", utility_kept),
    "attack_success": ("attacked", lambda r: bool(r["attack_succeeded"])),
    # The same two utilities on the tasks that need their data only (`randori.report.fidelity`).
    "fidelity_benign": ("benign", lambda r: bool(r["utility"])),
    "fidelity_under_attack": ("attacked", utility_kept),
}
FIDELITY = ("fidelity_benign", "fidelity_under_attack")
# Adaptive and search attacks: success within a budget of victim queries (randori.attacks.adaptive.BUDGETS).
BUDGET_METRIC = "attack_success_within_{}"


def _within(budget: int) -> Callable[[dict[str, Any]], bool]:
    return lambda r: bool(r["attack_succeeded"]) and r["attack_tries"] <= budget


def _known_at(row: dict[str, Any], budget: int) -> bool:
    """Whether a row says what happened within `budget` queries: it succeeded by then, or it ran that
    many (a case that gave up after fewer says nothing about more)."""
    tries = row.get("attack_tries")
    return tries is not None and (tries >= budget or bool(row["attack_succeeded"]))
# What stays fixed within one comparison (besides the pair's own identity), per compared dimension.
_HELD = {"model": ("defense", "settings"), "defense": ("model", "settings"),
         "attack": ("model", "defense", "settings"), "results": ("model", "defense", "settings")}
RESULTS_LABEL = "results"  # the row field holding a results directory's label when comparing directories


def mcnemar_exact(only_baseline: int, only_other: int) -> float:
    """Two-sided exact McNemar p-value: P(X <= min(b, c)) * 2 for X ~ Binomial(b + c, 1/2), capped at 1."""
    n = only_baseline + only_other
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_baseline, only_other) + 1))
    return min(1.0, 2 * tail / 2**n)


def paired_interval(both: int, only_other: int, only_baseline: int, neither: int,
                    z: float = Z95) -> tuple[float, float] | None:
    """95% interval for (other rate - baseline rate) on paired binary outcomes (Newcombe's method 10)."""
    n = both + only_other + only_baseline + neither
    if n == 0:
        return None
    p1, p2 = (both + only_other) / n, (both + only_baseline) / n
    l1, u1 = wilson(both + only_other, n, z) or (0.0, 0.0)
    l2, u2 = wilson(both + only_baseline, n, z) or (0.0, 0.0)
    margins = (both + only_other) * (only_baseline + neither) * (both + only_baseline) * (only_other + neither)
    phi = (both * neither - only_other * only_baseline) / math.sqrt(margins) if margins else 0.0
    theta = p1 - p2
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    eps = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return max(-1.0, theta - delta), min(1.0, theta + eps)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


@dataclass(frozen=True)
class Request:
    """What to compare: `dimension` (model, defense, attack or results), the configurations (values
    of that dimension; empty = every value present) and the baseline (None: see `pick_baseline`)."""

    dimension: str
    values: tuple[str, ...] = ()
    baseline: str | None = None


def pick_baseline(dimension: str, values: Sequence[str]) -> str:
    """`none` for defenses when it ran; otherwise the first configuration named (or present)."""
    if dimension == "defense" and "none" in values:
        return "none"
    return values[0]


def _pair_key(r: dict[str, Any], dimension: str) -> tuple[Any, ...]:
    attack = None if dimension == "attack" else r["attack"]
    return (r["kind"], r["suite"], r["suite_version"], r["user_task"], r["injection_task"], attack, r["repeat"])


def _group_of(r: dict[str, Any], dimension: str) -> tuple[Any, ...]:
    return tuple(_settings_text(r["settings"]) if f == "settings" else r[f] for f in _HELD[dimension])


def _settings_text(settings: Any) -> str:
    return settings if isinstance(settings, str) else json.dumps(settings, sort_keys=True)


def _config_of(r: dict[str, Any], dimension: str) -> Any:
    return r[RESULTS_LABEL if dimension == "results" else dimension]


def compare(rows: Iterable[dict[str, Any]], request: Request) -> dict[str, Any]:
    """Every comparison of `request` on the store's `rows` (each a `cases` row). Returns
    {dimension, baseline, configurations, groups: [...], comparisons: [...]}; see
    docs/guides/comparing.md for the fields. Raises UserError when there is nothing to compare."""
    if request.dimension not in DIMENSIONS:
        raise UserError(f"cannot compare by '{request.dimension}' (use {', '.join(DIMENSIONS)})")
    rows = [r for r in rows if r["kind"] in ("benign", "attacked")]
    present = sorted({_config_of(r, request.dimension) for r in rows if _config_of(r, request.dimension)})
    if not present:
        raise UserError("no benign or attacked cases to compare in these results (of the installed suite "
                        "versions; --all-versions includes older ones)")
    values = list(dict.fromkeys(request.values)) or present
    missing = [v for v in values if v not in present]
    if missing:
        raise UserError(f"no {request.dimension} {', '.join(missing)} in these results (present: "
                        f"{', '.join(present) or 'none'})")
    baseline = request.baseline or pick_baseline(request.dimension, values)
    if baseline not in present:
        raise UserError(f"baseline {request.dimension} '{baseline}' is not in these results (present: "
                        f"{', '.join(present)})")
    others = [v for v in values if v != baseline]
    if not others:
        raise UserError(f"nothing to compare: give a second {request.dimension} besides '{baseline}' (present: "
                        f"{', '.join(present)})")
    by_config: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if _config_of(r, request.dimension) in (baseline, *others):
            by_config[_config_of(r, request.dimension)].append(r)
    comparisons = []
    for other in others:
        for group, pairs, unpaired in _pairings(by_config[baseline], by_config[other], request.dimension):
            comparisons += _compare_pairs(group, baseline, other, pairs, unpaired, request.dimension)
    _adjust(comparisons)
    return {"dimension": request.dimension, "baseline": baseline, "configurations": [baseline, *others],
            "held": list(_HELD[request.dimension]), "comparisons": comparisons}


def _pairings(base: list[dict[str, Any]], other: list[dict[str, Any]], dimension: str
              ) -> list[tuple[dict[str, Any], list[tuple[dict[str, Any], dict[str, Any]]], dict[str, int]]]:
    """(group, pairs, unpaired counts) per group both sides have. Two results directories that each
    hold one configuration are paired whatever their model and defense (that is what they differ in)."""
    def grouped(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[tuple[Any, ...], dict[str, Any]]]:
        out: dict[tuple[Any, ...], dict[tuple[Any, ...], dict[str, Any]]] = defaultdict(dict)
        for r in rows:
            out[_group_of(r, dimension)][_pair_key(r, dimension)] = r
        return out

    gb, go = grouped(base), grouped(other)
    if dimension == "results" and len(gb) == 1 and len(go) == 1 and set(gb) != set(go):
        [(kb, vb)], [(ko, vo)] = gb.items(), go.items()
        joined = tuple(b if b == o else f"{b} | {o}" for b, o in zip(kb, ko, strict=True))
        gb, go = {joined: vb}, {joined: vo}
    out = []
    for g in sorted(set(gb) & set(go), key=str):
        a, b = gb[g], go[g]
        pairs = [(a[k], b[k]) for k in sorted(set(a) & set(b), key=lambda k: tuple(map(natural_key, k)))
                 if a[k]["status"] == "ok" and b[k]["status"] == "ok"]
        unpaired = {"baseline_only": len(set(a) - set(b)), "other_only": len(set(b) - set(a)),
                    "errors": sum(1 for k in set(a) & set(b) if a[k]["status"] != "ok" or b[k]["status"] != "ok")}
        group = {f: (json.loads(v) if f == "settings" and v.startswith("{") else v)
                 for f, v in zip(_HELD[dimension], g, strict=True)}
        out.append((group, pairs, unpaired))
    if not out:
        raise UserError("the configurations share no cases to pair (different models, defenses, settings or "
                        "suites); narrow them with --model/--defense/--attack so both sides hold the same ones")
    return out


def _scope(r: dict[str, Any]) -> str:
    return f"{r['suite']}@{r['suite_version']}"


def _compare_pairs(group: dict[str, Any], baseline: str, other: str,
                   pairs: list[tuple[dict[str, Any], dict[str, Any]]], unpaired: dict[str, int],
                   dimension: str) -> list[dict[str, Any]]:
    out = []
    for metric, (kind, test) in METRICS.items():
        if metric in ("benign_utility", "fidelity_benign") and dimension == "attack":
            continue  # benign cases have no attack
        mine = [(a, b) for a, b in pairs if a["kind"] == kind and (metric not in FIDELITY or data_directed(a))]
        if not mine and metric in FIDELITY:
            continue  # no task that needs its data was run: nothing to say
        scopes: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
        for a, b in mine:
            scopes[_scope(a)].append((a, b))
        if len(scopes) >= 2:
            scopes[POOLED] = mine
        for scope, ps in sorted(scopes.items(), key=lambda kv: (kv[0] == POOLED, kv[0])):
            out.append(_one(group, baseline, other, metric, scope, ps, test, unpaired))
    from randori.attacks.adaptive import BUDGETS

    for budget in BUDGETS:  # only pairs whose two sides both say what happened within the budget
        mine = [(a, b) for a, b in pairs if a["kind"] == "attacked" and _known_at(a, budget) and _known_at(b, budget)]
        scopes = defaultdict(list)
        for a, b in mine:
            scopes[_scope(a)].append((a, b))
        if len(scopes) >= 2:
            scopes[POOLED] = mine
        for scope, ps in sorted(scopes.items(), key=lambda kv: (kv[0] == POOLED, kv[0])):
            out.append(_one(group, baseline, other, BUDGET_METRIC.format(budget), scope, ps, _within(budget),
                            unpaired))
    return out


def _one(group: dict[str, Any], baseline: str, other: str, metric: str, scope: str,
         pairs: list[tuple[dict[str, Any], dict[str, Any]]], test: Callable[[dict[str, Any]], bool],
         unpaired: dict[str, int]) -> dict[str, Any]:
    both = only_base = only_other = neither = 0
    discordant = []
    for a, b in pairs:
        ya, yb = test(a), test(b)
        both += ya and yb
        neither += not ya and not yb
        if ya != yb:
            only_base += ya
            only_other += yb
            discordant.append({"suite": a["suite"], "suite_version": a["suite_version"],
                               "user_task": a["user_task"], "injection_task": a["injection_task"],
                               "attack": a["attack"], "other_attack": b["attack"], "repeat": a["repeat"],
                               "baseline": ya, "other": yb, "baseline_key": a["key"], "other_key": b["key"]})
    n = len(pairs)
    interval = paired_interval(both, only_other, only_base, neither)
    return {"group": group, "baseline": baseline, "other": other, "metric": metric, "suite": scope, "pairs": n,
            "baseline_rate": (both + only_base) / n if n else None,
            "other_rate": (both + only_other) / n if n else None,
            "difference": (only_other - only_base) / n if n else None,
            "low": interval[0] if interval else None, "high": interval[1] if interval else None,
            "both": both, "baseline_only": only_base, "other_only": only_other, "neither": neither,
            "p_value": mcnemar_exact(only_base, only_other), "p_holm": None,
            "unpaired": dict(unpaired), "discordant": discordant}


def _adjust(comparisons: list[dict[str, Any]]) -> None:
    """Holm within each family: the comparisons with the baseline of one group, metric and suite."""
    families: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for c in comparisons:
        families[(json.dumps(c["group"], sort_keys=True, default=str), c["metric"], c["suite"])].append(c)
    for members in families.values():
        for c, p in zip(members, holm([c["p_value"] for c in members]), strict=True):
            c["p_holm"] = p


def default_comparisons(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the HTML report compares unasked: each defense against `none` (or the first defense),
    per model, and each model against the first, per defense, when the store has several."""
    out = []
    for dimension in ("defense", "model"):
        if len({r[dimension] for r in rows if r["kind"] in ("benign", "attacked")}) >= 2:
            try:
                out.append(compare(rows, Request(dimension)))
            except UserError:  # nothing paired (e.g. the models ran different suites)
                continue
    return out


def flat(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One CSV row per comparison, metric and suite (discordant pairs counted, not listed)."""
    out = []
    for c in result["comparisons"]:
        row = {"dimension": result["dimension"], **{f"group_{k}": (json.dumps(v, sort_keys=True)
                                                                  if isinstance(v, dict) else v)
                                                    for k, v in c["group"].items()}}
        row.update({k: v for k, v in c.items() if k not in ("group", "discordant", "unpaired")})
        row.update({f"unpaired_{k}": v for k, v in c["unpaired"].items()})
        row["discordant_pairs"] = len(c["discordant"])
        out.append(row)
    return out
