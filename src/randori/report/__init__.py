"""The results report, composed above both tracks: the agent track's tables and HTML pieces
(`randori.bench.report`) and the code track's section (`randori.code.report`), for `randori report`
(json, csv, HTML)."""

from __future__ import annotations

from typing import Any

from randori.bench.report import AGENT_TABLES
from randori.bench.report import JSON_KEYS as AGENT_JSON_KEYS

EXPORT_TABLES = (*AGENT_TABLES, "code_rounds", "code_cwe")
JSON_KEYS = {**AGENT_JSON_KEYS, "code_rounds": "code_rounds", "code_cwe": "code_cwe"}


def export_tables(rows: list[dict[str, Any]], results_dir: Any = None) -> dict[str, list[dict[str, Any]]]:
    """Every table the report exports, by name (see EXPORT_TABLES); empty when there is no data."""
    from randori.bench.report import agent_tables
    from randori.code.report import code_tables

    tables = agent_tables(rows)
    tables.update(code_tables(results_dir))
    return tables


def render_html(rows: list[dict[str, Any]], *, results_dir: Any, excluded: int = 0,
                runs: list[dict[str, Any]] | None = None, tables: dict[str, list[dict[str, Any]]] | None = None) -> str:
    """The whole self-contained report: inline CSS, figures as data URIs, no script, no external link."""
    import datetime as dt

    import randori
    from randori.bench import figures as figs
    from randori.bench.agent_notes import agent_notes
    from randori.bench.compact import pivot
    from randori.bench.compare import default_comparisons
    from randori.bench.report import cost_columns, detection_section, headline_groups, price_lines, weakness_section
    from randori.code.report import code_section, code_summaries
    from randori.viewer.templating import render

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
    from randori.bench.compare_text import fmt_p

    return fmt_p(p)


def _group_label(group: dict[str, Any]) -> str:
    from randori.bench.compare_text import group_label

    return group_label(group, with_settings=False)
