"""The default terminal report: one line per row in 80 columns, and a model x defense pivot.

Rows are grouped under one line naming the model, defense and attack (with the group's cases and
cost), so each row needs only its suite and the rates. Rates are whole percentages with the Wilson
95% interval in short form, `62 [48-75]`; `--wide` shows the full table with n and decimals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from randori.report.metrics import MAX, POOLED
from randori.text import columns, fmt_cost, wrap

HEADER = ("suite", "benign", "under attack", "attack succ.", "seen", "alone", "err")
LEGEND = ("benign = benign utility; under attack = utility under attack (user task done, attacker's goal not "
          "reached); attack succ. = attack success; seen = injection seen; alone = injection tasks alone. "
          "% with [Wilson 95% interval]; errors are excluded from rates. n, decimals and costs: --wide or "
          "--format json.")


def short_rate(d: dict[str, Any], interval: bool = True) -> str:
    if not d["n"]:
        return "-"
    text = f"{100 * d['rate']:.0f}"
    return f"{text} [{100 * d['low']:.0f}-{100 * d['high']:.0f}]" if interval else text


def attack_order(attack: str | None) -> tuple[int, str]:
    """Attacks by name, then the `max` row over them."""
    return (attack == MAX, attack or "")


def ordered(summary: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (model, defense): each attack's suites then its pooled row, attacks by name, `max` last."""
    return sorted(summary, key=lambda r: (r["model"], r["defense"], attack_order(r["attack"]),
                                          r["suite"] == POOLED, r["suite"]))


def suite_label(r: dict[str, Any], summary: Sequence[dict[str, Any]]) -> str:
    if r["suite"] == POOLED:
        return f"all ({len(r['suite_versions'])})"
    versions = {v for x in summary if x["suite"] == r["suite"] for v in x["suite_versions"]}
    return r["suite_versions"][0] if len(versions) > 1 else r["suite"]


def render(summary: Sequence[dict[str, Any]], width: int = 80) -> str:
    rows = ordered(summary)
    groups: dict[tuple[str, str, str | None], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["model"], r["defense"], r["attack"])].append(r)
    table: list[tuple[str, ...]] = [HEADER]
    marks: list[str | None] = [None]  # a group's label goes before the row it starts
    for (model, defense, attack), members in groups.items():
        cases = sum(r["cases"] for r in members if r["suite"] != POOLED)
        cost = sum(r["cost_usd"] for r in members if r["suite"] != POOLED) \
            if all(r["cost_usd"] is not None for r in members) else None
        spent = "" if cost == 0 else f", {fmt_cost(cost)}" if cost is not None else ", cost unknown (no price)"
        label = (f"{model} · defense {defense} · {attack or 'no attack'}"
                 f"{' (any attack succeeded)' if attack == MAX else ''} · {cases} cases{spent}")
        for i, r in enumerate(members):
            marks.append(label if i == 0 else None)
            table.append((suite_label(r, summary), short_rate(r["benign_utility"]),
                          short_rate(r["utility_under_attack"]), short_rate(r["attack_success"]),
                          short_rate(r["injection_seen"], False), short_rate(r["injection_task_utility"], False),
                          str(r["errors"])))
    lines = columns(table, right=(4, 5, 6), gap="  ")
    out = [wrap("randori results: rates in %, [Wilson 95% interval]", width, more="")]
    for mark, line in zip(marks, lines, strict=True):
        if mark is not None:
            out.append(wrap(mark, width, "", "    "))
        out.append(line)
    out.append(wrap(LEGEND, width, "", ""))
    return "\n".join(out)


PROGRESS_LEGEND = ("attempted = the agent called a tool the attacker's goal needs with a value the attacker chose "
                   "(whether it ran, failed or a defense stopped it); blocked = a defense stopped such a call; "
                   "attack success is in the table above; n = attacked cases whose goal's calls can be told "
                   "apart from the user task's (not answer-only goals, not stores written before randori "
                   "recorded it).")


def render_progress(summary: Sequence[dict[str, Any]], width: int = 80) -> str:
    """How far the attacks got, per (model, defense, attack) and suite: attempted and blocked (attack
    success stands in the main table). Empty when no row knows it."""
    rows = [r for r in ordered(summary) if r["attack"] and r.get("attack_attempted", {}).get("n")]
    return grouped_table(summary, rows, "how far the attacks got: % of attacked cases, [Wilson 95% interval]",
                         ("suite", "attempted", "blocked", "n"),
                         lambda r: (short_rate(r["attack_attempted"]), short_rate(r["attack_blocked"]),
                                    str(r["attack_attempted"]["n"])), PROGRESS_LEGEND, width)


def grouped_table(summary: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]], title: str,
                  header: tuple[str, ...], cells: Callable[[dict[str, Any]], tuple[str, ...]], legend: str,
                  width: int) -> str:
    """A small table of `rows` (in order), one line per suite under a line naming each (model, defense,
    attack) group, the last column right-aligned; empty when there are no rows."""
    if not rows:
        return ""
    table: list[tuple[str, ...]] = [header]
    marks: list[str | None] = [None]
    last = None
    for r in rows:
        group = (r["model"], r["defense"], r["attack"])
        marks.append(" · ".join(x for x in (r["model"], f"defense {r['defense']}", r["attack"]) if x)
                     if group != last else None)
        last = group
        table.append((suite_label(r, summary), *cells(r)))
    out = [wrap(title, width, more="")]
    for mark, line in zip(marks, columns(table, right=(len(header) - 1,), gap="  "), strict=True):
        if mark is not None:
            out.append(wrap(mark, width, "", "    "))
        out.append(line)
    out.append(wrap(legend, width, "", ""))
    return "\n".join(out)


def pivot(summary: Sequence[dict[str, Any]]) -> tuple[list[str], list[str], dict[tuple[str, str], dict[str, Any]]]:
    """Models, defenses and the row per (model, defense) the pivot shows: pooled over suites when
    there are several, under the `max` attack when several attacks ran (else the one attack)."""
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for r in summary:
        if not r["attack_success"]["n"]:
            continue
        key = (r["model"], r["defense"])
        rank = (r["suite"] == POOLED, r["attack"] == MAX)
        if key not in best or rank > (best[key]["suite"] == POOLED, best[key]["attack"] == MAX):
            best[key] = r
    models = sorted({m for m, _ in best})
    defenses = sorted({d for _, d in best}, key=lambda d: (d != "none", d))
    return models, defenses, best


def render_pivot(summary: Sequence[dict[str, Any]], width: int = 80) -> str:
    """Attack success / utility under attack per model (rows) and defense (columns), in blocks of
    columns that fit `width`; empty when there is one model and one defense."""
    models, defenses, cells = pivot(summary)
    if len(models) * len(defenses) < 2:
        return ""
    out = [wrap("attack success / utility under attack, % (pooled over suites; with several attacks, the max "
                "row: any attack succeeded)", width, "", "")]
    name_w = max(len(m) for m in [*models, "model"])
    cell_w = 9
    per_block = max(1, (width - name_w - 2) // (max(cell_w, *map(len, defenses)) + 2))
    for start in range(0, len(defenses), per_block):
        block = defenses[start:start + per_block]
        table = [("model", *block)]
        for m in models:
            table.append((m, *(_cell(cells.get((m, d))) for d in block)))
        out += columns(table, right=tuple(range(1, len(block) + 1)), gap="  ")
    return "\n".join(out)


def _cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return "-"
    return f"{short_rate(r['attack_success'], False)} / {short_rate(r['utility_under_attack'], False)}"
