"""Matplotlib figures for the HTML report, each returned as a self-contained data URI.

Figures are drawn with the object-oriented API (no pyplot), so nothing depends on a GUI backend
or on global state, and every function returns None when its data does not exist in the store.
"""

from __future__ import annotations

import base64
import io
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from randori.report.metrics import POOLED

# More panels than this make an unreadable page; the export tables hold everything.
MAX_HEATMAPS = 12
MAX_SERIES = 12


@dataclass(frozen=True)
class Figure:
    id: str
    title: str
    caption: str
    uri: str  # data:image/...;base64,...


def _embed(fig: Any, fmt: str = "svg") -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
    mime = "image/svg+xml" if fmt == "svg" else "image/png"
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode()}"


def _new(width: float, height: float) -> Any:
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width, height), layout="constrained")
    return fig


def _colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"] if n <= 10 else colormaps["tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


Config = tuple[str, str, str]  # (model, defense, attack): what one colour stands for on the whole page


def palette(summary: Sequence[dict[str, Any]]) -> dict[Config, str]:
    """One colour per configuration (model, defense, attack), the same in the headline table and in
    every figure of the report, so a colour means one thing throughout. More configurations than
    the palette holds reuse its colours, in order."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    configs = sorted({config(r) for r in summary})
    cmap = colormaps["tab10"] if len(configs) <= 10 else colormaps["tab20"]
    return {c: to_hex(cmap(i % cmap.N)) for i, c in enumerate(configs)}


def config(r: dict[str, Any]) -> Config:
    return (r["model"], r["defense"], r["attack"] or "")


def _pct(axis: Any) -> None:
    from matplotlib.ticker import PercentFormatter

    axis.set_major_formatter(PercentFormatter(1.0, decimals=0))


def _legend_outside(ax: Any) -> None:
    # Inside the axes a legend of long series names hides the data it explains.
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), framealpha=0.85, borderaxespad=0)


def _wrap(text: str, width: float) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, max(12, int(width)), break_on_hyphens=False))


def _err(rate: dict[str, Any]) -> tuple[float, float]:
    # Wilson bounds can miss the rate by a rounding error (0.9999999999999999 < 1.0); matplotlib
    # refuses negative error bars.
    return max(0.0, rate["rate"] - rate["low"]), max(0.0, rate["high"] - rate["rate"])


def _series_label(r: dict[str, Any], *, with_model: bool = True) -> str:
    parts = [r["model"]] if with_model else []
    parts += [f"defense {r['defense']}", r["attack"] or "no attack"]
    return " · ".join(parts)


def _short_task(task_id: str) -> str:
    return re.sub(r"^(user|injection)_task_", "", task_id)


def _point(ax: Any, asr: dict[str, Any], util: dict[str, Any], marker: str, color: Any, **kw: Any) -> None:
    """One configuration at (attack success, utility under attack) with both Wilson intervals.
    Identical results (common with scripted agents) would hide each other: hollow markers keep both visible."""
    ax.errorbar(asr["rate"], util["rate"], xerr=[[_err(asr)[0]], [_err(asr)[1]]],
                yerr=[[_err(util)[0]], [_err(util)[1]]], fmt=marker, mfc="none", mew=1.6, color=color,
                elinewidth=1, capsize=3, **kw)


def _trade_off_axes(ax: Any, xmax: float, ymax: float) -> None:
    ax.set_xlim(-0.03, xmax)
    ax.set_ylim(-0.03, ymax)
    _pct(ax.xaxis)
    _pct(ax.yaxis)
    ax.set_xlabel("attack success (lower is better)")
    ax.set_ylabel("utility under attack (higher is better)")
    ax.grid(alpha=0.3)


def utility_vs_attack(summary: Sequence[dict[str, Any]], colors: dict[Config, str] | None = None) -> Figure | None:
    """One point per (model, defense, attack): utility under attack against attack success, with
    both Wilson intervals as error bars. Pooled rows when several suites exist, else the suite's.
    Colour: the configuration's (`palette`); marker: the suite, when points are per suite."""
    pooled = [r for r in summary if r["suite"] == POOLED]
    rows = [r for r in (pooled or summary) if r["attack_success"]["n"] and r["utility_under_attack"]["n"]]
    if not rows:
        return None
    colors = colors or palette(summary)
    suites = sorted({"" if pooled else r["suite"] for r in rows})
    shapes = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
    markers = {v: shapes[i % len(shapes)] for i, v in enumerate(suites)}
    fig = _new(9.0, 5.2)
    ax = fig.add_subplot()
    for r in sorted(rows, key=lambda r: (r["model"], r["defense"], r["attack"], r["suite"])):
        asr, util = r["attack_success"], r["utility_under_attack"]
        suite = "" if pooled else r["suite"]
        _point(ax, asr, util, markers[suite], colors.get(config(r), "#333333"), ms=8, alpha=0.9,
               label=_wrap(f"{r['model']} · defense {r['defense']} · {r['attack']}" + (f" · {suite}" if suite else ""),
                           60))
    _trade_off_axes(ax, 1.03, 1.03)
    ax.annotate("ideal", (0, 1), xytext=(6, -12), textcoords="offset points", fontsize=8, color="#2a7")
    _legend_outside(ax)
    scope = "pooled over all suites" if pooled else "per suite"
    return Figure("utility-vs-attack", "Utility under attack against attack success",
                  f"One point per model, defense and attack (one colour each, as in the headline table), {scope}"
                  + ("" if pooled else " (marker: suite)") + "; bars are Wilson 95% intervals.",
                  _embed(fig))


def defenses_per_model(summary: Sequence[dict[str, Any]], colors: dict[Config, str] | None = None) -> list[Figure]:
    """Per model, utility under attack against attack success with each defense a labelled point and
    both Wilson intervals: the trade-off a defense buys. Pooled over suites when there are several;
    with several attacks, the `max` row (any attack succeeded). None for a model with one defense."""
    from randori.report.compact import pivot

    models, defenses, cells = pivot(summary)
    colors = colors or palette(summary)
    out = []
    for model in models:
        points = [(d, cells[(model, d)]) for d in defenses if (model, d) in cells
                  and cells[(model, d)]["utility_under_attack"]["n"]]
        if len(points) < 2:
            continue
        fig = _new(6.4, 4.6)
        ax = fig.add_subplot()
        for defense, r in points:
            color = colors.get(config(r), "#333333")
            asr, util = r["attack_success"], r["utility_under_attack"]
            _point(ax, asr, util, "o", color, ms=7)
            # Labels sit beside their point; points that coincide get their labels stacked, not overprinted.
            same = [d for d, x in points if (x["attack_success"]["rate"], x["utility_under_attack"]["rate"])
                    == (asr["rate"], util["rate"])]
            ax.annotate(_wrap(defense, 24), (asr["rate"], util["rate"]), xytext=(7, 5 - 11 * same.index(defense)),
                        textcoords="offset points", fontsize=8, color=color)
        _trade_off_axes(ax, 1.12, 1.06)  # room for the labels
        attack = points[0][1]["attack"]
        scope = "pooled over suites" if points[0][1]["suite"] == POOLED else points[0][1]["suite_versions"][0]
        slug = re.sub(r"[^a-z0-9]+", "-", f"defenses {model}".lower()).strip("-")
        out.append(Figure(slug, f"Defenses for {model}",
                          f"Each defense a point: utility under attack against attack success ({scope}; attack "
                          f"{attack}{', any attack succeeded' if attack == 'max' else ''}); bars are Wilson 95% "
                          "intervals; the ideal is top left.", _embed(fig)))
    return out


def attack_success_per_suite(summary: Sequence[dict[str, Any]],
                             colors: dict[Config, str] | None = None) -> Figure | None:
    """Grouped horizontal bars: attack success per suite version, one bar per (model, defense, attack)."""
    rows = [r for r in summary if r["suite"] != POOLED and r["attack_success"]["n"]]
    if not rows:
        return None
    suites = sorted({r["suite_versions"][0] if r["suite_versions"] else r["suite"] for r in rows})
    series = sorted({(r["model"], r["defense"], r["attack"]) for r in rows})
    dropped = max(0, len(series) - MAX_SERIES)
    series = series[:MAX_SERIES]
    by = {((r["suite_versions"][0] if r["suite_versions"] else r["suite"]), r["model"], r["defense"], r["attack"]): r
          for r in rows}
    colors = colors or palette(summary)
    height = 0.8 / len(series)
    fig = _new(7.5, 1.0 + 0.35 * len(suites) * max(1, len(series)) ** 0.8)
    ax = fig.add_subplot()
    for i, s in enumerate(series):
        color = colors.get((s[0], s[1], s[2] or ""), "#333333")
        ys, xs, lo, hi = [], [], [], []
        for j, suite in enumerate(suites):
            r = by.get((suite, *s))
            if r is None:
                continue
            a = r["attack_success"]
            ys.append(j - 0.4 + height * (i + 0.5))
            xs.append(a["rate"])
            lo.append(_err(a)[0])
            hi.append(_err(a)[1])
        ax.barh(ys, xs, height=height * 0.9, color=color, xerr=[lo, hi], capsize=2,
                error_kw={"elinewidth": 0.8}, label=_wrap(f"{s[0]} · defense {s[1]} · {s[2]}", 60))
        # a 0% bar has no width: a tick in its colour marks it as measured, not missing
        zeros = [y for y, x in zip(ys, xs, strict=True) if x == 0]
        if zeros:
            ax.plot([0] * len(zeros), zeros, linestyle="none", marker="|", markersize=9, color=color)
    ax.set_yticks(range(len(suites)), suites)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02)
    _pct(ax.xaxis)
    ax.set_xlabel("attack success (Wilson 95% interval)")
    ax.grid(axis="x", alpha=0.3)
    _legend_outside(ax)
    note = f" {dropped} more series are in the export tables." if dropped else ""
    return Figure("attack-success-per-suite", "Attack success per suite",
                  "Bars per model, defense and attack; each suite is named with its version." + note, _embed(fig))


def task_heatmaps(tasks: Sequence[dict[str, Any]]) -> tuple[list[Figure], int]:
    """Per suite version, small multiples of heat maps over user x injection tasks: one panel per
    (model, defense, attack). Returns the figures and the number of panels left out."""
    by_suite: dict[tuple[str, str], dict[tuple[str, str, str], list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list))
    for t in tasks:
        by_suite[(t["suite"], t["suite_version"])][(t["model"], t["defense"], t["attack"])].append(t)
    out, left = [], 0
    for (suite, version), panels in sorted(by_suite.items()):
        keys = sorted(panels)
        left += max(0, len(keys) - MAX_HEATMAPS)
        out.append(_heatmaps(suite, version, {k: panels[k] for k in keys[:MAX_HEATMAPS]}))
    return out, left


def _order(ids: set[str]) -> list[str]:
    return sorted(ids, key=lambda s: (len(s), s))  # user_task_2 before user_task_10


def _heatmaps(suite: str, version: str, panels: dict[tuple[str, str, str], list[dict[str, Any]]]) -> Figure:
    import numpy as np
    from matplotlib import colormaps

    cells = [c for group in panels.values() for c in group]
    users = _order({c["user_task"] for c in cells})
    injs = _order({c["injection_task"] for c in cells})
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    pw, ph = max(3.2, 1.3 + 0.2 * len(injs)), max(2.2, 0.9 + 0.15 * len(users))
    fig = _new(pw * ncols + 0.8, ph * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    cmap = colormaps["Reds"].with_extremes(bad="#dddddd")
    im = None
    overall = []
    for ax, ((model, defense, attack), group) in zip(axes.flat, panels.items(), strict=False):
        grid = np.full((len(users), len(injs)), np.nan)
        hit = n = 0
        for c in group:
            a = c["attack_success"]
            if a["n"]:
                grid[users.index(c["user_task"]), injs.index(c["injection_task"])] = a["rate"]
                hit, n = hit + a["successes"], n + a["n"]
        im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=1, aspect="auto",
                       interpolation="nearest")
        rate = f": {100 * hit / n:.0f}%" if n else ""
        ax.set_title(_wrap(f"{model} · defense {defense} · {attack}{rate}", pw * 11), fontsize=8)
        overall.append((hit / n if n else 0.0, model, defense, attack))
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xticks(range(len(injs)), [_short_task(i) for i in injs], fontsize=6)
        ax.set_xlabel("injection task", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_yticks(range(len(users)), [_short_task(u) for u in users], fontsize=6)
        ax.set_ylabel("user task", fontsize=8)
    cbar = fig.colorbar(im, ax=axes, shrink=0.6)
    _pct(cbar.ax.yaxis)
    cbar.set_label("attack success", fontsize=8)
    slug = re.sub(r"[^a-z0-9]+", "-", f"heatmap {suite} {version}".lower()).strip("-")
    return Figure(slug, f"Attack success per user x injection task: {suite}@{version}",
                  f"{len(users)} user tasks x {len(injs)} injection tasks; one panel per model, defense and "
                  "attack (overall rate in its title); grey = no scored case (not run, or errors only).",
                  _embed(fig, "png"))


def budget_curve(budget: Sequence[dict[str, Any]], colors: dict[Config, str] | None = None) -> Figure | None:
    """Attack success against the adaptive attacker's budget (tries per case), with intervals."""
    if not budget:
        return None
    series: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for b in budget:
        series[(b["model"], b["defense"], b["attack"], b["suite"])].append(b)
    fig = _new(9.0, 4.5)
    ax = fig.add_subplot()
    styles = ("-", "--", "-.", ":")
    shapes = ("o", "s", "^", "D", "v", "P", "X")
    for i, ((model, defense, attack, suite), group) in enumerate(sorted(series.items())):
        pts = sorted(group, key=lambda p: p["budget"])
        xs = [p["budget"] for p in pts]
        ys = [p["attack_success"]["rate"] for p in pts]
        # Curves often coincide (0% or 100% throughout): distinct dashes and hollow markers keep each visible.
        line = ax.plot(xs, ys, ls=styles[i % len(styles)], marker=shapes[i % len(shapes)], mfc="none", ms=7,
                       color=(colors or {}).get((model, defense, attack or "")),
                       label=_wrap(f"{model} · defense {defense} · {attack} · {suite}", 60))[0]
        ax.fill_between(xs, [p["attack_success"]["low"] for p in pts], [p["attack_success"]["high"] for p in pts],
                        color=line.get_color(), alpha=0.15)
    ax.set_xscale("log")
    ticks = sorted({b["budget"] for b in budget})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_ylim(-0.02, 1.02)
    _pct(ax.yaxis)
    ax.set_xlabel("attacker budget (victim queries per case)")
    ax.set_ylabel("attack success")
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return Figure("adaptive-budget", "Attack success against adaptive budget",
                  "Share of cases the adaptive or search attacker broke within each number of victim queries "
                  "(agent runs); bands are Wilson 95% intervals." + _attacker_spend(series), _embed(fig))


def _attacker_spend(series: dict[tuple[str, str, str, str], list[dict[str, Any]]]) -> str:
    """The attacker's spend over each curve's whole budget, where its tokens are known."""
    from randori.text import fmt_cost

    parts = []
    for (model, defense, attack, suite), group in sorted(series.items()):
        last = max(group, key=lambda p: p["budget"])
        if last.get("attacker_input_tokens") is not None:
            parts.append(f"{attack} vs {model} ({defense}, {suite}): {last['attacker_calls']} attacker calls, "
                         f"{last['attacker_input_tokens'] + last['attacker_output_tokens']:,} tokens, "
                         f"{fmt_cost(last.get('attacker_cost_usd'))}")
    return " Attacker spend: " + "; ".join(parts) + "." if parts else ""


CODE_ROUND_METRICS = (("func_sec", "func-sec@1"), ("functional", "functional"), ("security", "security"))


def code_rounds(rounds: Sequence[dict[str, Any]], config: Callable[[dict[str, Any]], str]) -> Figure | None:
    """Code track: pass rates per repair round, one colour per configuration (`config(row)` names
    it) and one line style per metric, with Wilson intervals."""
    have = [r for r in rounds if any(r[k]["n"] for k, _ in CODE_ROUND_METRICS)]
    if not have:
        return None
    names = sorted({config(r) for r in have})
    styles = ("-", "--", ":")
    fig = _new(9.0, 4.5)
    ax = fig.add_subplot()
    for color, name in zip(_colors(len(names)), names, strict=True):
        pts = sorted((r for r in have if config(r) == name), key=lambda r: r["round"])
        for style, (key, label) in zip(styles, CODE_ROUND_METRICS, strict=True):
            series = [p for p in pts if p[key]["n"]]
            if not series:
                continue
            ax.errorbar([p["round"] for p in series], [p[key]["rate"] for p in series],
                        yerr=[[_err(p[key])[0] for p in series], [_err(p[key])[1] for p in series]],
                        ls=style, marker="o", mfc="none", color=color, capsize=3, label=_wrap(f"{label}: {name}", 60))
    ax.set_ylim(-0.02, 1.02)
    _pct(ax.yaxis)
    ax.set_xlabel("repair round (0 = first answer)")
    ax.set_xticks(sorted({r["round"] for r in have}))
    ax.set_ylabel("pass rate")
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return Figure("code-rounds", "Code track: pass rates per repair round",
                  "Does repair help? Each round counts every task (a task that passed early keeps its result); "
                  "bars are Wilson 95% intervals.", _embed(fig))


def code_per_cwe(cwes: Sequence[dict[str, Any]], config: Callable[[dict[str, Any]], str]) -> Figure | None:
    """Code track: func-sec@1 per CWE as a dumbbell per configuration, from the first answer (hollow)
    to the result after repair (filled). Per-CWE counts are small, so n is printed, not error bars."""
    rows = [r for r in cwes if r["func_sec_round0"]["n"] or r["func_sec_final"]["n"]]
    if not rows:
        return None
    names = sorted({r["cwe"] for r in rows}, key=lambda c: (len(c), c))
    configs = sorted({config(r) for r in rows})
    counts = {c: max(r["tasks"] for r in rows if r["cwe"] == c) for c in names}
    step = 0.6 / max(1, len(configs))
    fig = _new(9.0, 1.3 + 0.2 * len(names) * max(1, len(configs)) ** 0.6)
    ax = fig.add_subplot()
    for i, (name, color) in enumerate(zip(configs, _colors(len(configs)), strict=True)):
        pts = [(names.index(r["cwe"]) - 0.3 + step * (i + 0.5), r) for r in rows if config(r) == name]
        for y, r in pts:
            a, b = r["func_sec_round0"]["rate"], r["func_sec_final"]["rate"]
            if a is not None and b is not None:
                ax.plot([a, b], [y, y], color=color, lw=1.2, alpha=0.7)
        ax.scatter([r["func_sec_round0"]["rate"] for _, r in pts if r["func_sec_round0"]["n"]],
                   [y for y, r in pts if r["func_sec_round0"]["n"]], s=28, facecolors="none", edgecolors=[color],
                   label=_wrap(f"round 0: {name}", 60))
        ax.scatter([r["func_sec_final"]["rate"] for _, r in pts if r["func_sec_final"]["n"]],
                   [y for y, r in pts if r["func_sec_final"]["n"]], s=28, color=color,
                   label=_wrap(f"after repair: {name}", 60))
    ax.set_yticks(range(len(names)), [f"{c} (n={counts[c]})" for c in names], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(-0.03, 1.03)
    _pct(ax.xaxis)
    ax.set_xlabel("func-sec@1: functional and security tests both pass")
    ax.grid(axis="x", alpha=0.3)
    _legend_outside(ax)
    return Figure("code-cwe", "Code track: func-sec@1 per CWE, before and after repair",
                  "Hollow: the first answer; filled: after the repair rounds; n = tasks (x repeats) per CWE. "
                  "Intervals are in the table.", _embed(fig))
