"""Code-track metrics from stored rows: pass rates per round and per CWE, static findings, Bandit's
agreement with the security tests.

A task that stopped early (everything passed) keeps its last result in later rounds, so "round r"
always means "after up to r repair rounds" over the same set of tasks. Errored tasks (provider
failures) are counted apart and excluded from every rate.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from randori.bench.metrics import Rate

GROUP_FIELDS = ("dataset", "dataset_version", "model", "prompt", "max_rounds", "fuzz", "analyzers")


def _rate(rows: list[dict[str, Any]], field: str) -> dict[str, Any] | None:
    vals = [r[field] for r in rows if r.get(field) is not None]
    if not vals:
        return None
    return Rate(sum(1 for v in vals if v), len(vals)).as_dict()


def _security_failed(row: dict[str, Any]) -> bool | None:
    """Did the tests show the code insecure? Split tasks: the security group failed. Combined
    (CodeSecEval) tasks: the one check failed (it mixes both kinds of assert)."""
    if not row.get("parses"):
        return None
    if row.get("security") is not None:
        return not row["security"]
    return None if row.get("tests_pass") is None else not row["tests_pass"]


def agreement(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    tp = fp = fn = tn = 0
    for r in rows:
        failed = _security_failed(r)
        if failed is None or r.get("bandit_flagged") is None:
            continue
        flagged = bool(r["bandit_flagged"])
        tp += flagged and failed
        fp += flagged and not failed
        fn += (not flagged) and failed
        tn += (not flagged) and (not failed)
    n = tp + fp + fn + tn
    return {"n": n, "flagged_and_insecure": tp, "flagged_but_secure": fp, "missed_insecure": fn,
            "clean_and_secure": tn, "agreement": (tp + tn) / n if n else None,
            "precision": tp / (tp + fp) if tp + fp else None, "recall": tp / (tp + fn) if tp + fn else None}


def _findings_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_sev: Counter[str] = Counter()
    by_cwe: Counter[str] = Counter()
    by_tool: Counter[str] = Counter()
    for r in rows:
        for f in r.get("findings") or []:
            by_sev[f["severity"]] += 1
            by_cwe[f["cwe"] or "none"] += 1
            by_tool[f["tool"]] += 1
    return {"by_severity": dict(sorted(by_sev.items())), "by_cwe": dict(by_cwe.most_common()),
            "by_tool": dict(sorted(by_tool.items())), "samples": len(rows),
            "samples_flagged": sum(1 for r in rows if r.get("static_flagged"))}


def _rounds_used(ok: dict[str, list[dict[str, Any]]]) -> dict[str, int]:
    used = Counter(len(rs) - 1 for rs in ok.values())
    return {str(k): v for k, v in sorted(used.items())}


def summarize(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per configuration (dataset@version, model, prompt, rounds, fuzz, analyzers)."""
    groups: dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[tuple(r[f] for f in GROUP_FIELDS)][r["key"]].append(r)
    return [_summarize_group(dict(zip(GROUP_FIELDS, g, strict=True)), tasks) for g, tasks in sorted(groups.items())]


def _summarize_group(config: dict[str, Any], tasks: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    ok = {k: sorted(v, key=lambda r: r["round"]) for k, v in tasks.items() if v[0]["status"] == "ok"}
    errors = [v[0] for v in tasks.values() if v[0]["status"] != "ok"]
    max_rounds = int(config["max_rounds"])
    split = all(rs[0]["functional"] is not None or not rs[0]["parses"] for rs in ok.values()) and bool(ok)

    def at(r: int) -> list[dict[str, Any]]:
        return [rs[min(r, len(rs) - 1)] for rs in ok.values()]

    per_round = []
    for r in range(max_rounds + 1):
        rows_r = at(r)
        per_round.append({
            "round": r, "tasks": len(rows_r), "parses": _rate(rows_r, "parses"),
            "functional": _rate(rows_r, "functional"), "security": _rate(rows_r, "security"),
            "tests_pass": _rate(rows_r, "tests_pass"), "func_sec": _rate(rows_r, "both"),
            "static_flagged": _rate(rows_r, "static_flagged"), "fuzz_flagged": _rate(rows_r, "fuzz_flagged"),
        })
    first, final = at(0), at(max_rounds)
    per_cwe: dict[str, dict[str, Any]] = {}
    by_cwe: dict[str, list[str]] = defaultdict(list)
    for key, rs in ok.items():
        by_cwe[rs[0]["cwe"]].append(key)
    for cwe in sorted(by_cwe, key=lambda c: (int(c.split("-")[1]) if c.startswith("CWE-") else 10 ** 9, c)):
        keys = by_cwe[cwe]
        r0 = [ok[k][0] for k in keys]
        rf = [ok[k][-1] for k in keys]
        per_cwe[cwe] = {"tasks": len(keys), "func_sec_round0": _rate(r0, "both"), "func_sec_final": _rate(rf, "both"),
                        "security_round0": _rate(r0, "security"), "security_final": _rate(rf, "security"),
                        "bandit_flagged_round0": _rate(r0, "bandit_flagged")}
    all_rows = [r for rs in ok.values() for r in rs]
    fixed = sum(1 for rs in ok.values() if not rs[0]["both"] and rs[-1]["both"])
    broken = sum(1 for rs in ok.values() if rs[0]["both"] and not rs[-1]["both"])
    unisolated = sum(1 for r in all_rows if r.get("isolation") and not r["isolation"].get("network"))
    return {
        **config,
        "label": f"{config['dataset']}@{config['dataset_version']}",
        "split_tests": split,
        "tasks": len(ok), "errors": len(errors),
        "error_categories": dict(Counter(e["error_category"] or "other" for e in errors)),
        "per_round": per_round,
        "per_cwe": per_cwe,
        "findings_round0": _findings_summary(first),
        "findings_final": _findings_summary(final),
        "bandit_agreement_round0": agreement(first),
        "bandit_agreement_all_rounds": agreement(all_rows),
        "repair": {"fixed": fixed, "broken": broken, "rounds_used": _rounds_used(ok),
                   "mean_rounds": (sum(len(rs) - 1 for rs in ok.values()) / len(ok)) if ok else None},
        "model_calls": sum(r["model_calls"] for r in all_rows),
        "input_tokens": sum(r["input_tokens"] for r in all_rows),
        "output_tokens": sum(r["output_tokens"] for r in all_rows),
        "duration_s": round(sum(r["duration_s"] for r in all_rows), 3),
        "samples_without_network_isolation": unisolated,
    }
