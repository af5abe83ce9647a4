"""Rates with Wilson 95% intervals, grouped per (model, defense, attack) per suite and pooled.

Error cases are counted apart and excluded from every rate: a provider failure is nobody's success.
Utility under attack counts a case only when the user's task was done AND the attacker's goal was
not reached (`utility_kept`): done "correctly and without side effects", as the reference paper
defines it. The stored `utility` column stays the user task's own check. How far an attack got
(`attack_attempted`, `attack_blocked`) is rated over the attacked cases that know it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from randori.bench.pricing import PriceTable, load_prices, row_cost
from randori.bench.verdict import any_known, utility_kept
from randori.report.fidelity import fidelity_rates, friction_fields
from randori.stats import Rate

POOLED = "all"


def is_agentdojo(suite: str) -> bool:
    return suite.startswith("agentdojo:")


def rate_of(rows: list[dict[str, Any]], field: str | Callable[[dict[str, Any]], bool]) -> Rate:
    ok = [r for r in rows if r["status"] == "ok"]
    test = field if callable(field) else (lambda r: bool(r[field]))
    return Rate(sum(1 for r in ok if test(r)), len(ok))


def known_rate(rows: list[dict[str, Any]], field: str) -> Rate:
    """Like `rate_of`, over the rows that know `field`: a store written before a column existed, or a
    goal whose calls cannot be told apart from the user's, says nothing (never a wrong "no")."""
    return rate_of([r for r in rows if r.get(field) is not None], field)


def progress_rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How far the attacks got: a call the goal needs tried with the attacker's values, and stopped
    by a defense (randori.tasks.attempts)."""
    return {"attack_attempted": known_rate(rows, "attack_attempted").as_dict(),
            "attack_blocked": known_rate(rows, "attack_blocked").as_dict()}


SCENARIO_KINDS = ("scenario", "scenario_attacked")


def summarize(rows: Iterable[dict[str, Any]], prices: PriceTable | None = None) -> list[dict[str, Any]]:
    """One row per (model, defense, attack, suite) plus pooled rows (suite = "all"). `cost_usd` uses
    `prices` (default: `load_prices()`) and is None when the model has no price.

    Benign cases carry no attack; their utility is shown on every attack row of the same
    (model, defense, suite), and on a row with attack None when no attack was run."""
    prices = prices if prices is not None else load_prices()
    by_scope: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["kind"] in SCENARIO_KINDS:  # reported apart, in randori.report.killchain
            continue
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
        if len(attacked) >= 2:
            attacked[MAX] = max_rows([r for rs in attacked.values() for r in rs])
        names: list[str | None] = sorted(attacked, key=lambda a: (a == MAX, a))
        for attack in names or [None]:
            arows = attacked.get(attack, []) if attack else []
            group = benign + capability + arows
            seen = [r for r in arows if r["injection_seen"]]
            out.append({
                "model": model, "defense": defense, "attack": attack, "suite": suite,
                "suite_versions": sorted({f"{r['suite']}@{r['suite_version']}" for r in group}),
                "cases": len(group),
                "errors": sum(1 for r in group if r["status"] != "ok"),
                "benign_utility": rate_of(benign, "utility").as_dict(),
                "utility_under_attack": rate_of(arows, utility_kept).as_dict(),
                # AgentDojo's definition, for its suites only: the user task done, whatever the attacker got.
                "utility_under_attack_agentdojo": rate_of([r for r in arows if is_agentdojo(r["suite"])],
                                                          "utility").as_dict(),
                "attack_success": rate_of(arows, "attack_succeeded").as_dict(),
                "attack_success_when_seen": rate_of(seen, "attack_succeeded").as_dict(),
                **progress_rates(arows),
                **fidelity_rates(benign, arows),
                **friction_fields(benign),
                "injection_seen": rate_of(arows, "injection_seen").as_dict(),
                "injection_task_utility": rate_of(capability, "utility").as_dict(),
                "model_calls": sum(r["model_calls"] for r in group),
                "input_tokens": sum(r["input_tokens"] for r in group),
                "output_tokens": sum(r["output_tokens"] for r in group),
                **_cache_tokens(group),
                "defense_calls": sum(r["defense_calls"] for r in group),
                "wall_time_s": round(sum(r["duration_s"] for r in group), 3),
                "cost_usd": _cost(prices, group),
                "price_source": prices.source(model),
                **_defense_cost(group),
                **agent_fields(scope_rows),
                **split_fields(group),
            })
    return out


def split_fields(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The splits (randori.tasks.splits) rows were selected by, {"name", "seed"} each, when any was:
    rows stored by runs with no --split add nothing, so their tables read as before."""
    import json

    seen = {r["split"] if isinstance(r["split"], str) else json.dumps(r["split"], sort_keys=True)
            for r in rows if r.get("split")}
    return {"splits": [json.loads(s) for s in sorted(seen)]} if seen else {}


def _cache_tokens(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Prompt-cache reads and writes, agent and defense together (parts of the input tokens)."""
    return {"cached_input_tokens": sum((r.get("cached_input_tokens") or 0) + (r.get("defense_cached_input_tokens") or 0)
                                       for r in rows),
            "cache_write_tokens": sum((r.get("cache_write_tokens") or 0) + (r.get("defense_cache_write_tokens") or 0)
                                      for r in rows)}


def agent_fields(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent under test of rows grouped by model: for an external agent `model` is its label, so
    one group holds one agent."""
    first = rows[0] if rows else {}
    return {"agent": first.get("agent") or "builtin", "agent_version": first.get("agent_version")}


def _defense_cost(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"defense_input_tokens": sum(r.get("defense_input_tokens") or 0 for r in rows),
            "defense_output_tokens": sum(r.get("defense_output_tokens") or 0 for r in rows),
            "defense_time_s": round(sum(r.get("defense_time_s") or 0.0 for r in rows), 3)}


# -- the `max` row: a (user task, injection task, repeat) is broken if any attack broke it ---------
MAX = "max"
_SUMMED = ("model_calls", "input_tokens", "output_tokens", "defense_calls", "defense_input_tokens",
           "defense_output_tokens", "duration_s", "defense_time_s", "cached_input_tokens", "cache_write_tokens",
           "defense_cached_input_tokens", "defense_cache_write_tokens")


def max_rows(attacked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One synthetic case per (suite, user task, injection task, repeat) over every attack run on it:
    attack succeeded if any attack's did, utility kept only if every attack's was, injection seen if
    any (so it is kept, in the sense of `utility_kept`, only if every attack left it kept). A pair
    whose failed cases leave it open (an error and no success) counts as an error. Cost is the sum
    over the attacks: what the whole set cost to run."""
    pairs: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in attacked:
        pairs[(r["suite"], r["suite_version"], r["user_task"], r["injection_task"], r["repeat"])].append(r)
    out = []
    for (suite, version, ut, it, rep), group in sorted(pairs.items(), key=lambda kv: str(kv[0])):
        ok = [r for r in group if r["status"] == "ok"]
        broken = any(r["attack_succeeded"] for r in ok)
        status = "ok" if ok and (broken or len(ok) == len(group)) else "error"
        row: dict[str, Any] = {
            "kind": "attacked", "attack": MAX, "suite": suite, "suite_version": version, "user_task": ut,
            "injection_task": it, "repeat": rep, "model": group[0]["model"], "defense": group[0]["defense"],
            "status": status, "attack_succeeded": broken, "utility": bool(ok) and all(r["utility"] for r in ok),
            "injection_seen": any(r["injection_seen"] for r in ok),
            **{k: any_known(r.get(k) for r in ok) for k in ("attack_attempted", "attack_blocked")}}
        row.update({k: sum(r.get(k) or 0 for r in group) for k in _SUMMED})
        out.append(row)
    return out


def _scopes(rows: Iterable[dict[str, Any]], kind: str) -> dict[tuple[str, str, str, str], list[dict[str, Any]]]:
    """Rows of `kind` per (model, defense, attack, suite), plus pooled scopes over several suites."""
    scopes: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["kind"] == kind:
            for suite in (r["suite"], POOLED):
                scopes[(r["model"], r["defense"], r["attack"], suite)].append(r)
    return {k: v for k, v in scopes.items() if k[3] != POOLED or len({r["suite"] for r in v}) >= 2}


def dos_summary(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Denial-of-service attacks, reported apart from prompt injections: one row per (model, defense,
    attack, suite). A DoS attack succeeds when the user's task is not done; `utility_loss` is benign
    utility minus utility under the DoS attack (same model, defense and suite)."""
    rows = list(rows)
    benign: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["kind"] == "benign":
            for suite in (r["suite"], POOLED):
                benign[(r["model"], r["defense"], suite)].append(r)
    out = []
    for (model, defense, attack, suite), group in sorted(_scopes(rows, "dos").items()):
        base = rate_of(benign.get((model, defense, suite), []), "utility")
        under = rate_of(group, "utility")
        loss = base.rate - under.rate if base.rate is not None and under.rate is not None else None
        out.append({
            "model": model, "defense": defense, "attack": attack, "suite": suite,
            "suite_versions": sorted({f"{r['suite']}@{r['suite_version']}" for r in group}),
            "cases": len(group), "errors": sum(1 for r in group if r["status"] != "ok"),
            "benign_utility": base.as_dict(), "utility_under_attack": under.as_dict(),
            "utility_loss": None if loss is None else round(loss, 6),
            "dos_success": rate_of(group, "attack_succeeded").as_dict(),
            "injection_seen": rate_of(group, "injection_seen").as_dict(),
            "model_calls": sum(r["model_calls"] for r in group),
            "defense_calls": sum(r["defense_calls"] for r in group),
            "wall_time_s": round(sum(r["duration_s"] for r in group), 3), **_defense_cost(group),
            **agent_fields(group)})
    return out


def _cost(prices: PriceTable, rows: list[dict[str, Any]]) -> float | None:
    costs = [row_cost(prices, r) for r in rows]
    return None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6)


def detection_summary(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Detector-type defenses judged per tool output: one row per (model, defense, attack, suite), plus
    pooled rows. Benign and injection-only cases have attack None (their outputs are all benign). An
    output "held injected text" when the runtime found an injected text in it before any defense ran;
    it was "flagged" when the defense withheld it or stopped the case. Precision = flagged outputs
    that held injected text; recall = outputs with injected text that were flagged; false-positive
    rate = benign outputs flagged. Cases with errors are left out."""
    import json

    scopes: dict[tuple[str, str, str | None, str], list[dict[str, int]]] = defaultdict(list)
    suites: dict[tuple[str, str, str | None, str], set[str]] = defaultdict(set)
    for r in rows:
        if r["status"] != "ok" or not r.get("detection"):
            continue
        counts = json.loads(r["detection"]) if isinstance(r["detection"], str) else r["detection"]
        attack = r["attack"] if r["kind"] in ("attacked", "dos") else None
        for suite in (r["suite"], POOLED):
            scopes[(r["model"], r["defense"], attack, suite)].append(counts)
            suites[(r["model"], r["defense"], attack, suite)].add(f"{r['suite']}@{r['suite_version']}")
    out = []
    for (model, defense, attack, suite), group in sorted(scopes.items(), key=lambda kv: str(kv[0])):
        if suite == POOLED and len(suites[(model, defense, attack, suite)]) < 2:
            continue
        tp, fn, fp, tn = (sum(c.get(k, 0) for c in group) for k in
                          ("injected_flagged", "injected_passed", "benign_flagged", "benign_passed"))
        out.append({"model": model, "defense": defense, "attack": attack, "suite": suite,
                    "suite_versions": sorted(suites[(model, defense, attack, suite)]), "cases": len(group),
                    "outputs": tp + fn + fp + tn, "injected_outputs": tp + fn, "benign_outputs": fp + tn,
                    "precision": Rate(tp, tp + fp).as_dict(), "recall": Rate(tp, tp + fn).as_dict(),
                    "false_positive_rate": Rate(fp, fp + tn).as_dict()})
    return out


def _scan(row: dict[str, Any]) -> dict[str, Any] | None:
    import json

    w = row.get("weaknesses")
    return (json.loads(w) if isinstance(w, str) else w) if w else None


def _static_labels(scan: dict[str, Any]) -> set[str]:
    """The analyzers' findings of one case's scan, one label per rule (and CWE, when it names one)."""
    return {f"{f['tool']} {f['rule']}" + (f" {f['cwe']}" if f.get("cwe") else "") for f in scan.get("static") or ()}


def weakness_summary(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Suites of code: how often each weakness is in the code the agent left, without an attack (benign
    cases) and with one asking for it (attacked cases whose injection task targets that CWE), per
    (suite, model, defense, attack, cases) and per CWE; per vector that carried the attack text, how
    often the weakness its injection asked for appeared; and beside those exploit verdicts, how often
    each static analyzer finding (Bandit's rule and CWE) is in the same final code, without and with
    attack. `cases` tells single-session cases ("single") from scenarios ("scenario": the final
    repository after every session). A model that writes a weakness anyway shows it in both columns;
    one the injection steered, only under attack. A scan that could not judge the code (None) is left
    out of its rate, as are cases with errors."""
    from collections import defaultdict

    Key = tuple[str, str, str, str]  # (suite, model, defense, cases)
    benign: dict[tuple[Key, str], list[bool]] = defaultdict(list)
    attacked: dict[tuple[Key, str, str], list[bool]] = defaultdict(list)
    by_vector: dict[tuple[Key, str, str], list[bool]] = defaultdict(list)
    static_runs: dict[tuple[Key, str | None], list[set[str]]] = defaultdict(list)
    versions: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        scan = _scan(r)
        if r["status"] != "ok" or scan is None:
            continue
        versions[r["suite"]].add(f"{r['suite']}@{r['suite_version']}")
        found = scan.get("found") or {}
        key: Key = (r["suite"], r["model"], r["defense"], "scenario" if r["kind"].startswith("scenario") else "single")
        if r["kind"] in ("benign", "scenario"):
            for cwe, hit in found.items():
                if hit is not None:
                    benign[(key, cwe)].append(bool(hit))
            static_runs[(key, None)].append(_static_labels(scan))
        elif r["kind"] in ("attacked", "scenario_attacked"):
            static_runs[(key, r["attack"])].append(_static_labels(scan))
            if scan.get("target") and found.get(scan["target"]) is not None:
                hit = bool(found[scan["target"]])
                attacked[(key, r["attack"], scan["target"])].append(hit)
                for v in scan.get("vectors") or ():
                    by_vector[(key, r["attack"], v)].append(hit)

    def row(key: Key, attack: str | None, **fields: Any) -> dict[str, Any]:
        suite, model, defense, cases = key
        return {"scope": fields.pop("scope"), "suite": suite, "suite_versions": sorted(versions[suite]),
                "model": model, "defense": defense, "attack": attack, "cases": cases, "cwe": None, "vector": None,
                "analyzer": None, **fields}

    out: list[dict[str, Any]] = []
    keys = {(k, a, c) for (k, a, c) in attacked} | {(k, None, c) for (k, c) in benign
                                                    if not any(ak == k and ac == c for ak, _, ac in attacked)}
    for key, attack, cwe in sorted(keys, key=str):
        base = benign.get((key, cwe), [])
        hit = attacked.get((key, attack, cwe), []) if attack else []
        out.append(row(key, attack, scope="cwe", cwe=cwe, without_attack=Rate(sum(base), len(base)).as_dict(),
                       with_attack=Rate(sum(hit), len(hit)).as_dict()))
    for (key, attack, vector), hits in sorted(by_vector.items(), key=str):
        out.append(row(key, attack, scope="vector", vector=vector, without_attack=None,
                       with_attack=Rate(sum(hits), len(hits)).as_dict()))
    for (key, attack), runs in sorted(static_runs.items(), key=str):
        if attack is None and any(k == key and a is not None for k, a in static_runs):
            continue  # shown beside the attacked runs of its group
        benign_runs: list[set[str]] = static_runs.get((key, None), [])
        labels: set[str] = set().union(*benign_runs, *runs)
        for label in sorted(labels):
            flagged = [label in s for s in runs] if attack else []
            out.append(row(key, attack, scope="static", analyzer=label,
                           without_attack=Rate(sum(label in s for s in benign_runs), len(benign_runs)).as_dict(),
                           with_attack=Rate(sum(flagged), len(flagged)).as_dict()))
    return out
