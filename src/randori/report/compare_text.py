"""Paired comparisons (`randori.report.compare`) as text for a terminal of any width."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from randori.attacks.adaptive import BUDGETS
from randori.report.compare import BUDGET_METRIC
from randori.text import columns, wrap

METRIC_LABELS = {"benign_utility": "benign util.", "utility_under_attack": "under attack",
                 "attack_success": "attack success", "fidelity_benign": "fidelity",
                 "fidelity_under_attack": "fid. attacked",
                 # adaptive and search attacks, within a budget of victim queries (randori.report.compare)
                 **{BUDGET_METRIC.format(b): f"success <={b} q" for b in BUDGETS}}
HEADER = ("metric", "suite", "pairs", "A %", "B %", "B-A [95% CI]", "p", "p Holm")


def fmt_p(p: float | None) -> str:
    if p is None:
        return "-"
    if p < 1e-300:  # below what a double holds: an exact test's tail underflows to 0, which is not the p-value
        return "< 1e-300"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def fmt_diff(c: dict[str, Any]) -> str:
    if c["difference"] is None:
        return "-"
    return f"{100 * c['difference']:+.1f} [{100 * c['low']:+.0f},{100 * c['high']:+.0f}]"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def group_label(group: dict[str, Any], with_settings: bool = True) -> str:
    """"model m · defense d", and the model settings that were set when `with_settings`."""
    parts = []
    for k, v in group.items():
        if k != "settings":
            parts.append(f"{k} {v}")
        elif with_settings and isinstance(v, dict):
            parts += [f"{name} {value}" for name, value in v.items() if value is not None]
        elif with_settings and v:
            parts.append(f"settings {v}")
    return " · ".join(parts)


def _suite_name(scope: str, scopes: set[str]) -> str:
    # "banking@1.0.0" reads as "banking" unless two versions of one suite are side by side.
    name = scope.split("@")[0]
    return scope if sum(1 for s in scopes if s.split("@")[0] == name) > 1 else name


def render(result: dict[str, Any], width: int = 80, show: int = 5) -> str:
    """Blocks of one comparison each (baseline A against one other configuration B, per group):
    a table of metrics by suite, then the discordant pairs, at most `show` per metric."""
    blocks: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    # Settings are named only when the groups differ in them (temperature 0 against 0.7, say).
    settings = len({str(c["group"].get("settings")) for c in result["comparisons"]}) > 1
    for c in result["comparisons"]:
        blocks[(group_label(c["group"], settings), c["other"])].append(c)
    dim = result["dimension"]
    out = [wrap(f"Paired comparison by {dim}: B - A on the cases both ran (same suite version, tasks, "
                 + ("" if dim == "attack" else "attack, ") + "repeat); 95% interval: Newcombe; p: exact McNemar, "
                 "Holm-adjusted over the configurations compared with A.", width)]
    for (label, other), comps in blocks.items():
        out.append("")
        out.append(wrap(f"A = {result['baseline']}, B = {other}" + (f" · {label}" if label else ""), width))
        scopes = {c["suite"] for c in comps}
        table = [HEADER] + [(METRIC_LABELS[c["metric"]], _suite_name(c["suite"], scopes), str(c["pairs"]),
                             _pct(c["baseline_rate"]), _pct(c["other_rate"]), fmt_diff(c), fmt_p(c["p_value"]),
                             fmt_p(c["p_holm"])) for c in comps]
        out += columns(table, right=(2, 3, 4, 6, 7))
        unpaired = comps[0]["unpaired"]
        if any(unpaired.values()):
            out.append(wrap(f"left out: {unpaired['baseline_only']} case(s) only A ran, {unpaired['other_only']} "
                             f"only B ran, {unpaired['errors']} pair(s) with an error", width, "  "))
        out += _discordant(comps, width, show)
    return "\n".join(out)


def _discordant(comps: list[dict[str, Any]], width: int, show: int) -> list[str]:
    out = []
    for c in comps:
        if c["suite"] == "all" or not c["discordant"]:
            continue  # the pooled row's pairs are the per-suite rows' pairs
        metric = METRIC_LABELS[c["metric"]]
        out.append(wrap(f"{metric}, {c['suite']}: {len(c['discordant'])} discordant pair(s): "
                         f"A only {c['baseline_only']}, B only {c['other_only']}", width, "  "))
        for d in c["discordant"][:show]:
            task = " × ".join(t for t in (d["user_task"], d["injection_task"]) if t)
            attack = d["attack"] if d["attack"] == d["other_attack"] else f"{d['attack']} | {d['other_attack']}"
            where = ", ".join(x for x in (attack, f"repeat {d['repeat']}" if d["repeat"] else "") if x)
            yes = "A" if d["baseline"] else "B"
            out.append(wrap(f"{task}{f' ({where})' if where else ''}: only {yes}", width, "    ", "      "))
        if len(c["discordant"]) > show:
            out.append(wrap(f"and {len(c['discordant']) - show} more (--show N, or --format json for all)",
                             width, "    "))
    return out
