"""The report's tables for export, by name: the agent track's (headline, pivot, tasks, budget, dos,
detection, weaknesses) and the code track's, as `randori report --format json|csv` writes them and
the exports read them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from randori.bench.verdict import utility_kept

AGENT_TABLES = ("headline", "pivot", "tasks", "budget", "dos", "detection", "weaknesses", "kill_chain", "robustness")
# The headline table is "rows" in JSON, for compatibility with the first JSON format.
AGENT_JSON_KEYS = {"headline": "rows", "pivot": "pivot", "tasks": "tasks", "budget": "budget", "dos": "dos",
                   "detection": "detection", "weaknesses": "weaknesses", "kill_chain": "kill_chain",
                   "robustness": "robustness"}
EXPORT_TABLES = (*AGENT_TABLES, "code_rounds", "code_cwe")
JSON_KEYS = {**AGENT_JSON_KEYS, "code_rounds": "code_rounds", "code_cwe": "code_cwe"}
RATE_KEYS = ("rate", "low", "high", "successes", "n")


def _count(rows: list[dict[str, Any]], field: str | Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    from randori.report.metrics import rate_of

    return rate_of(rows, field).as_dict()


def task_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Attacked cases per (suite version, model, defense, attack, user task, injection task):
    the data of the heat maps. Repeats are pooled; errors are counted apart."""
    from collections import defaultdict

    from randori.report.metrics import agent_fields, progress_rates

    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["kind"] == "attacked":
            groups[(r["suite"], r["suite_version"], r["model"], r["defense"], r["attack"], r["user_task"],
                    r["injection_task"])].append(r)
    out = []
    for (suite, version, model, defense, attack, ut, it), g in sorted(groups.items()):
        out.append({"suite": suite, "suite_version": version, "model": model, "defense": defense, "attack": attack,
                    "user_task": ut, "injection_task": it, "cases": len(g),
                    "errors": sum(1 for r in g if r["status"] != "ok"),
                    "attack_success": _count(g, "attack_succeeded"), "utility_under_attack": _count(g, utility_kept),
                    "injection_seen": _count(g, "injection_seen"), **progress_rates(g), **agent_fields(g)})
    return out


def pivot_rows(headline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model x defense pivot the text report prints, one row per (model, defense): attack
    success and utility under attack, pooled over suites when there are several, under the `max`
    attack when several attacks ran (`suite` and `attack` say which row each cell is)."""
    from randori.report.compact import pivot

    models, defenses, cells = pivot(headline)
    return [{"model": m, "defense": d, "suite": cells[m, d]["suite"], "attack": cells[m, d]["attack"],
             "attack_success": cells[m, d]["attack_success"],
             "utility_under_attack": cells[m, d]["utility_under_attack"]}
            for m in models for d in defenses if (m, d) in cells]


def agent_tables(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The agent track's export tables, by name (see AGENT_TABLES); empty when there is no data."""
    from randori.report.compact import ordered
    from randori.report.killchain import kill_chain_rows
    from randori.report.metrics import detection_summary, dos_summary, summarize, weakness_summary
    from randori.report.robustness import robustness_rows

    # Each suite's rows, then the pooled row, per (model, defense, attack); the max row after the attacks.
    headline = ordered(summarize(rows))
    tables: dict[str, list[dict[str, Any]]] = {"headline": headline, "pivot": pivot_rows(headline),
                                               "tasks": task_rows(rows),
                                               "budget": budget_rows(rows), "dos": dos_summary(rows),
                                               "detection": detection_summary(rows),
                                               "weaknesses": weakness_summary(rows),
                                               "kill_chain": kill_chain_rows(rows),
                                               "robustness": robustness_rows(rows, budget_rows)}
    return tables


def export_tables(rows: list[dict[str, Any]], results_dir: Any = None) -> dict[str, list[dict[str, Any]]]:
    """Every table the report exports, by name (see EXPORT_TABLES); empty when there is no data."""
    from randori.code.report import code_tables

    tables = agent_tables(rows)
    tables.update(code_tables(results_dir))
    return tables


def flatten(row: dict[str, Any]) -> dict[str, Any]:
    """One CSV row: a rate {rate, low, high, successes, n} under `x` becomes columns `x`, `x_low`,
    `x_high`, `x_successes`, `x_n`; lists are joined with ';'; None is an empty cell."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, dict) and set(RATE_KEYS) <= set(v):
            out[k] = v["rate"]
            for sub in RATE_KEYS[1:]:
                out[f"{k}_{sub}"] = v[sub]
        elif isinstance(v, (list, tuple)):
            out[k] = ";".join(str(x) for x in v)
        elif isinstance(v, dict):
            import json

            out[k] = json.dumps(v, sort_keys=True)
        else:
            out[k] = v
    return out


def write_csv(table: list[dict[str, Any]], stream: Any) -> None:
    """One header row, then one row per entry (columns: union of keys in first-seen order)."""
    import csv

    flat = [flatten(r) for r in table]
    header: dict[str, None] = {}
    for r in flat:
        header.update(dict.fromkeys(r))
    w = csv.DictWriter(stream, fieldnames=list(header), lineterminator="\n")
    w.writeheader()
    for r in flat:
        w.writerow({k: "" if v is None else v for k, v in r.items()})


def budget_rows(rows: list[dict[str, Any]], prices: Any = None) -> list[dict[str, Any]]:
    """Adaptive attacks: attack success within each budget of tries, per (model, defense, attack)
    per suite and pooled. A case stores the try on which it succeeded, or its whole budget when it
    failed (`attack_tries`), so success within b tries is read without re-running anything. A budget
    is reported only up to the smallest budget a failed case used: beyond it nothing is known. Each
    try is one query of the victim agent: `victim_queries` is what the cases spent within b, and
    the attacker's own spend (attacker_spend) is given for the whole budget. `prices`: a PriceTable
    (default: `load_prices()`)."""
    from randori.bench.pricing import load_prices

    prices = prices if prices is not None else load_prices()
    from collections import defaultdict

    from randori.attacks.adaptive import BUDGETS
    from randori.report.metrics import POOLED, agent_fields
    from randori.stats import Rate

    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["kind"] == "attacked" and r.get("attack_tries") is not None:
            for suite in (r["suite"], POOLED):
                groups[(r["model"], r["defense"], r["attack"], suite)].append(r)
    out = []
    for (model, defense, attack, suite), g in sorted(groups.items()):
        if suite == POOLED and len({r["suite"] for r in g}) < 2:
            continue
        ok = [r for r in g if r["status"] == "ok"]
        failed = [r["attack_tries"] for r in ok if not r["attack_succeeded"]]
        known = min(failed) if failed else max((r["attack_tries"] for r in ok), default=0)
        budgets = sorted({b for b in BUDGETS if b <= known} | ({known} if known else set()))
        if not failed:  # every case broken within `known` tries: larger budgets change nothing
            budgets = sorted(set(budgets) | {b for b in BUDGETS if b > known})
        versions = sorted({f"{r['suite']}@{r['suite_version']}" for r in g})
        spent = attacker_spend(ok, prices)
        for b in budgets:
            wins = sum(1 for r in ok if r["attack_succeeded"] and r["attack_tries"] <= b)
            out.append({"model": model, "defense": defense, "attack": attack, "suite": suite,
                        "suite_versions": versions, "budget": b, "cases": len(g), "errors": len(g) - len(ok),
                        "attack_success": Rate(wins, len(ok)).as_dict(),
                        "victim_queries": sum(min(r["attack_tries"], b) for r in ok), **spent, **agent_fields(g)})
    return out


def attacker_spend(rows: list[dict[str, Any]], prices: Any) -> dict[str, Any]:
    """What the attacker model spent over the whole budget of `rows` (one adaptive attack's cases):
    calls, tokens, and their cost at the attacker's price (None when it has none, or when rows stored
    before attackers were counted leave its tokens unknown)."""
    from randori.registry import parse_spec

    known = [r for r in rows if r.get("attacker_input_tokens") is not None]
    calls, inp, outp = (sum(r[k] or 0 for r in known) for k in ("attacker_calls", "attacker_input_tokens",
                                                                 "attacker_output_tokens"))
    attacker = parse_spec(rows[0]["attack"])[1].get("attacker") if rows else None
    cost = prices.cost(attacker, inp, outp) if attacker and known and len(known) == len(rows) else None
    return {"attacker": attacker, "attacker_calls": calls if known else None,
            "attacker_input_tokens": inp if known else None, "attacker_output_tokens": outp if known else None,
            "attacker_cost_usd": cost}
