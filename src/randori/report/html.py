"""The HTML report (`randori report --html`): one self-contained page composed of both tracks'
sections, with the pieces of the agent track's (headline blocks, cost columns, detector and
weakness tables)."""

from __future__ import annotations

from typing import Any

from randori.report.terminal import price_lines, scope_label
from randori.text import fmt_cost


def render_html(rows: list[dict[str, Any]], *, results_dir: Any, excluded: int = 0,
                runs: list[dict[str, Any]] | None = None, tables: dict[str, list[dict[str, Any]]] | None = None) -> str:
    """The whole self-contained report: inline CSS, figures as data URIs, no script, no external link."""
    import datetime as dt

    import randori
    from randori.code.report import code_summaries
    from randori.report import figures as figs
    from randori.report.agent_notes import agent_notes
    from randori.report.code_section import code_section
    from randori.report.compact import pivot
    from randori.report.compare import default_comparisons
    from randori.report.tables import export_tables
    from randori.report.templating import render

    tables = tables if tables is not None else export_tables(rows, results_dir)
    headline = tables["headline"]
    colors = figs.palette(headline)  # one colour per configuration, in the table and in every figure
    drawn = [figs.utility_vs_attack(headline, colors), figs.attack_success_per_suite(headline, colors),
             figs.budget_curve(tables["budget"], colors)]
    heatmaps, heatmaps_left = figs.task_heatmaps(tables["tasks"])
    figures = ([f for f in drawn[:1] if f] + figs.defenses_per_model(headline, colors) + [f for f in drawn[1:2] if f]
               + heatmaps + [f for f in drawn[2:] if f])
    pivot_models, pivot_defenses, pivot_cells = pivot(headline)
    costs = cost_columns(headline)
    versions = sorted({f"{r['suite']}@{r['suite_version']}" for r in rows})
    return render(
        "report.html", title=str(results_dir), version=randori.__version__, store=str(results_dir),
        generated=dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"), n_cases=len(rows),
        n_runs=len(runs or []), excluded=excluded, suites=versions,
        models=sorted({r["model"] for r in rows}), defenses=sorted({r["defense"] for r in rows}),
        attacks=sorted({r["attack"] for r in rows if r["attack"]}) or ["none"],
        headline=headline, groups=headline_groups(headline, colors), cost_columns=costs,
        cost_usd=next((c for c in costs if c["key"] == "cost_usd"), None), prices=price_lines(headline),
        # Fidelity columns only where a task that needs its data ran: a 1280-px window holds the rest.
        fidelity=any(r.get("fidelity_benign", {}).get("n") or r.get("fidelity_under_attack", {}).get("n")
                     for r in headline),
        # Friction only where a defense asked the user (confirm); 0 in the others' rows.
        friction=any(r.get("approvals_asked") for r in headline),
        figures=figures,
        agent_notes=agent_notes(rows, runs or []), heatmaps_left=heatmaps_left,
        detection=detection_section(tables.get("detection") or []),
        weaknesses=weakness_section(tables.get("weaknesses") or []),
        pivot={"models": pivot_models, "defenses": pivot_defenses,
               "cells": {f"{m}\x00{d}": r for (m, d), r in pivot_cells.items()}}
        if len(pivot_models) * len(pivot_defenses) >= 2 else None,
        comparisons=default_comparisons(rows), fmt_p=_fmt_p, group_label=_group_label,
        code=code_section(tables, code_summaries(results_dir) if tables["code_rounds"] else []))


def _fmt_p(p: float | None) -> str:
    from randori.report.compare_text import fmt_p

    return fmt_p(p)


def _group_label(group: dict[str, Any]) -> str:
    from randori.report.compare_text import group_label

    return group_label(group, with_settings=False)


_COST_COLUMNS = (("model_calls", "model calls"), ("input_tokens", "tokens in"),
                 ("cached_input_tokens", "of which cached"), ("cache_write_tokens", "cache writes"),
                 ("output_tokens", "tokens out"),
                 ("defense_calls", "defense calls"), ("defense_input_tokens", "defense tokens in"),
                 ("defense_output_tokens", "defense tokens out"), ("defense_time_s", "defense time"),
                 ("wall_time_s", "wall time"),
                 ("cost_usd", "cost (USD)"))
_NOT_COST = {"cases", "errors"}


def _fmt_cost(key: str) -> Any:
    def fmt(v: Any) -> str:
        if v is None or v == "":
            return "–"
        if key.endswith("_s"):
            return f"{v:,.1f} s"
        if key == "cost_usd":
            return fmt_cost(v)
        return f"{v:,}" if isinstance(v, int) else f"{v:,.2f}"
    return fmt


def cost_columns(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cost columns present in the headline rows: the known ones first, then any other number
    (a price column added by the cost accounting shows up without a change here)."""
    present: dict[str, None] = {}
    for r in summary:
        present.update({k: None for k, v in r.items() if k not in _NOT_COST and (
            k in dict(_COST_COLUMNS) or (isinstance(v, (int, float)) and not isinstance(v, bool)))})
    known = [(k, label) for k, label in _COST_COLUMNS if k in present]
    extra = [(k, k.replace("_", " ")) for k in present if k not in dict(_COST_COLUMNS)]
    return [{"key": k, "label": label, "fmt": _fmt_cost(k)} for k, label in known + extra]


def headline_groups(headline: list[dict[str, Any]], colors: dict[tuple[str, str, str], str]) -> list[dict[str, Any]]:
    """The HTML headline's blocks, one per configuration (model, defense, attack) with its colour:
    its row pooled over suites first (when it ran several), then its row per suite."""
    from randori.report.metrics import POOLED

    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in headline:
        key = (r["model"], r["defense"], r["attack"] or "")
        g = groups.setdefault(key, {"model": r["model"], "defense": r["defense"], "attack": r["attack"],
                                    "color": colors.get(key, "#333333"), "pooled": None, "suites": []})
        if r["suite"] == POOLED:
            g["pooled"] = r
        else:
            g["suites"].append(r)
    for g in groups.values():
        g["rows"] = ([g["pooled"]] if g["pooled"] else []) + g["suites"]
        g["versions"] = versions_label(g["pooled"]["suite_versions"]) if g["pooled"] else ""
    return list(groups.values())


def versions_label(versions: list[str]) -> str:
    """Suite versions, shortest: "banking, travel@1.2.0, mailroom@2.1" (suites of one version share it)."""
    by: dict[str, list[str]] = {}
    for v in versions:
        name, _, version = v.rpartition("@")
        by.setdefault(version, []).append(name)
    return ", ".join(", ".join(names[:-1] + [f"{names[-1]}@{version}"]) for version, names in by.items())


def detection_section(detection: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The HTML report's detector table, or None when no detector-type defense ran."""
    if not detection:
        return None
    columns = ["suite", "model", "defense", "attack", "outputs", "with injected text", "precision", "recall",
               "false positives"]
    return {"columns": columns,
            "rows": [[scope_label(d), d["model"], d["defense"], d["attack"] or "– (no attack)", d["outputs"],
                      d["injected_outputs"], d["precision"], d["recall"], d["false_positive_rate"]]
                     for d in detection]}


def weakness_section(weaknesses: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The HTML report's weakness table, or None when no suite of code ran."""
    if not weaknesses:
        return None
    columns = ["suite", "model", "defense", "attack", "cases", "CWE / vector / analyzer", "without attack",
               "with attack"]
    return {"columns": columns,
            "rows": [[w["suite"], w["model"], w["defense"], w["attack"] or "–", w["cases"],
                      w["cwe"] or (f"vector {w['vector']}" if w["vector"] else w["analyzer"]),
                      w["without_attack"] or "–", w["with_attack"]] for w in weaknesses]}
