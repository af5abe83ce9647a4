"""What a results store says of the agent track: the terminal table, its export tables (json, csv) and
the pieces of the HTML report, suite counts. It knows nothing of the code track: `randori.report`
composes both tracks' reports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from randori.bench.metrics import summarize, utility_kept
from randori.bench.text import fmt_cost


def suite_counts(suite: Any) -> dict[str, Any]:
    """Counts for `suites list --format json` (keys: name, version, tools, user_tasks,
    injection_tasks, vectors, attacked_cases)."""
    return {"name": suite.name, "version": suite.version, "tools": len(suite.tools),
            "user_tasks": len(suite.user_tasks), "injection_tasks": len(suite.injection_tasks),
            "vectors": len(suite.vectors),
            "attacked_cases": len(suite.user_tasks) * len(suite.injection_tasks)}


def current_rows(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Keep rows whose suite version is the current one: the installed version of a built-in suite;
    for a plugin's suite, the version of its latest results in the store. Plugins stay unimported: a
    report reads the store alone, so a slow, noisy or broken plugin cannot slow or spoil it. Other
    suites (AgentDojo's, uninstalled ones) keep every version."""
    from randori.suites import BUILTIN, get_suite, is_plugin

    current: dict[str, str] = {}
    names = {r["suite"] for r in rows}
    for name in sorted(names & set(BUILTIN)):
        current[name] = get_suite(name).version
    plugins = {n for n in names if is_plugin(n)}
    newest: dict[str, float] = {}
    for r in rows:
        if r["suite"] in plugins and (r["created_at"] or 0) >= newest.get(r["suite"], float("-inf")):
            newest[r["suite"]], current[r["suite"]] = r["created_at"] or 0, r["suite_version"]
    kept = [r for r in rows if current.get(r["suite"], r["suite_version"]) == r["suite_version"]]
    return kept, len(rows) - len(kept)


def fmt_rate(d: dict[str, Any]) -> str:
    if not d["n"]:
        return "-"
    return f"{100 * d['rate']:.1f}% [{100 * d['low']:.0f}-{100 * d['high']:.0f}] n={d['n']}"


def print_summary(rows: list[dict[str, Any]], prices: Any = None, wide: bool = False) -> None:
    """The headline table: compact (80 columns, see `randori.bench.compact`) or, with `wide`, every
    column with n and decimals. `prices` is a `PriceTable` (default: built-in plus the user's overrides)."""
    from rich.console import Console

    summary = summarize(rows, prices)
    console = Console()
    if wide and not console.is_terminal:
        console = Console(width=300)  # piped output: don't squeeze the table into 80 columns
    if not summary:
        console.print("No results.")
        return
    if wide:
        _print_wide(console, summary)
    else:
        from randori.bench import compact
        from randori.bench.text import terminal_width

        width = terminal_width()
        text = "\n\n".join(t for t in (compact.render(summary, width), compact.render_pivot(summary, width),
                                       compact.render_progress(summary, width)) if t)
        console.print(text, markup=False, highlight=False, soft_wrap=True)
    _print_price_sources(console, summary)
    from randori.bench.agentdojo_rows import agentdojo_lines

    for line in agentdojo_lines(summary):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    _print_dos(console, rows)
    _print_budget(console, rows)
    _print_detection(console, rows)
    _print_weaknesses(console, rows)


def _print_wide(console: Any, summary: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from randori.bench.compact import ordered

    t = Table(title="randori results (rates with Wilson 95% intervals; errors excluded)")
    for col in ("suite", "model", "defense", "attack"):
        t.add_column(col, no_wrap=True)  # names are read whole, never broken mid-word
    for col in ("benign utility", "utility under attack", "attack success", "attack attempted", "attack blocked",
                "injection seen", "injection tasks alone", "errors", "cost (USD)", "per case: agent, +defense"):
        t.add_column(col, overflow="fold")
    for r in ordered(summary):
        # Names are escaped: a spec such as adaptive[budget=5] would otherwise read as rich markup.
        t.add_row(_suite_label(r), *map(escape, (r["model"], r["defense"], r["attack"] or "-")),
                  fmt_rate(r["benign_utility"]),
                  fmt_rate(r["utility_under_attack"]), fmt_rate(r["attack_success"]),
                  fmt_rate(r["attack_attempted"]), fmt_rate(r["attack_blocked"]), fmt_rate(r["injection_seen"]),
                  fmt_rate(r["injection_task_utility"]), str(r["errors"]),
                  fmt_cost(r["cost_usd"]), f"{fmt_agent_cost(r)}\n{fmt_defense_cost(r)}")
    console.print(t)


def price_lines(summary: list[dict[str, Any]]) -> list[str]:
    """Which source priced each model (an unknown price is said to be unknown), and cache use: the
    lines under the text report's table and the HTML report's."""
    seen: dict[str, Any] = {}
    cached: dict[str, list[int]] = {}
    for r in summary:
        seen.setdefault(r["model"], r.get("price_source"))
        if r["suite"] != "all":
            c = cached.setdefault(r["model"], [0, 0, 0])
            c[0] += r["input_tokens"]
            c[1] += r.get("cached_input_tokens", 0)
            c[2] += r.get("cache_write_tokens", 0)
    lines = []
    for model, source in seen.items():
        line = f"prices of {model}: {source or 'unknown: cost not shown (add a price with --prices FILE)'}"
        inp, read, write = cached.get(model, [0, 0, 0])
        if read or write:
            line += f"; prompt cache: {100 * read / max(inp, 1):.0f}% of input tokens read, {_tokens(write)} written"
        lines.append(line)
    return lines


def _print_price_sources(console: Any, summary: list[dict[str, Any]]) -> None:
    from rich.markup import escape

    for line in price_lines(summary):
        console.print(escape(line), highlight=False, soft_wrap=True)


def _suite_label(r: dict[str, Any]) -> str:
    if r["suite"] == "all":  # the versions pooled stand on the per-suite rows above
        return f"all ({len(r['suite_versions'])} suites)"
    return str(r["suite_versions"][0]) if r["suite_versions"] else str(r["suite"])


def _tokens(n: float) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else f"{n:.0f}"


def fmt_agent_cost(r: dict[str, Any]) -> str:
    """Mean per case: the agent's model calls and tokens (in + out)."""
    n = r["cases"] or 1
    tok = (r["input_tokens"] + r["output_tokens"]) / n
    return f"{r['model_calls'] / n:.1f} calls" + (f", {_tokens(tok)} tok" if tok else "")


def fmt_defense_cost(r: dict[str, Any]) -> str:
    """Mean per case: the defense's own model calls, tokens and wall time ("+0" when it costs nothing)."""
    n = r["cases"] or 1
    calls, tok = r["defense_calls"] / n, (r.get("defense_input_tokens", 0) + r.get("defense_output_tokens", 0)) / n
    ms = 1000 * r.get("defense_time_s", 0.0) / n
    if not calls and not tok and ms < 0.05:
        return "+0"
    parts = [f"{calls:.1f} calls"] if calls else []
    parts += [f"{_tokens(tok)} tok"] if tok else []
    return "+" + ", ".join([*parts, f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"])


def _print_dos(console: Any, rows: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from randori.bench.metrics import dos_summary

    dos = dos_summary(rows)
    if not dos:
        return
    t = Table(title="denial of service (reported apart: success = the user's task was not done)")
    for col in ("suite", "model", "defense", "attack", "benign utility", "utility under attack", "utility loss",
                "DoS success", "injection seen", "errors", "defense per case"):
        t.add_column(col)
    for r in dos:
        loss = "-" if r["utility_loss"] is None else f"{100 * r['utility_loss']:+.1f} pts"
        t.add_row(_suite_label(r), *map(escape, (r["model"], r["defense"], r["attack"])), fmt_rate(r["benign_utility"]),
                  fmt_rate(r["utility_under_attack"]), loss, fmt_rate(r["dos_success"]),
                  fmt_rate(r["injection_seen"]), str(r["errors"]), fmt_defense_cost(r))
    console.print(t)


def _print_budget(console: Any, rows: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.table import Table

    curve = budget_rows(rows)
    if not curve:
        return
    budgets = sorted({b["budget"] for b in curve})
    t = Table(title="adaptive and search attacks: attack success within a budget of tries (agent runs)")
    for col in ("suite", "model", "defense", "attack", *(f"{b} tries" if b > 1 else "1 try" for b in budgets)):
        t.add_column(col)
    lines: dict[tuple[str, str, str, str], dict[int, dict[str, Any]]] = {}
    for b in curve:
        lines.setdefault((_suite_label(b), b["model"], b["defense"], b["attack"]), {})[b["budget"]] = b
    for (suite, model, defense, attack), points in lines.items():
        t.add_row(suite, *map(escape, (model, defense, attack)),
                  *(fmt_rate(points[b]["attack_success"]) if b in points else "-" for b in budgets))
    console.print(t)


def _print_detection(console: Any, rows: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from randori.bench.metrics import detection_summary

    det = detection_summary(rows)
    if not det:
        return
    t = Table(title="detectors, per tool output (injected = held attack text before any defense ran)")
    for col in ("suite", "model", "defense", "attack", "outputs (injected)", "precision", "recall",
                "false positives"):
        t.add_column(col)
    for r in det:
        t.add_row(_suite_label(r), *map(escape, (r["model"], r["defense"], r["attack"] or "- (no attack)")),
                  f"{r['outputs']} ({r['injected_outputs']})", fmt_rate(r["precision"]), fmt_rate(r["recall"]),
                  fmt_rate(r["false_positive_rate"]))
    console.print(t)


def _print_weaknesses(console: Any, rows: list[dict[str, Any]]) -> None:
    """Compact, like the table above: a line per group, then a line per CWE and per vector."""
    from randori.bench.compact import short_rate
    from randori.bench.metrics import weakness_summary

    summary = weakness_summary(rows)
    if not summary:
        return
    # Names whole (never cut): the columns are as wide as their longest entry.
    whats = [r["cwe"] or f"via {r['vector']}" for r in summary]
    sw, ww = max(5, *(len(r["suite"]) for r in summary)), max(12, *(len(w) for w in whats))
    lines = ["weakness introduced in the code: % of cases, [Wilson 95% interval]",
             f"  {'suite':<{sw}} {'CWE / vector':<{ww}} {'without attack':<15} {'with attack':<13} n"]
    group = None
    for r, what in zip(summary, whats, strict=True):
        if (r["model"], r["defense"], r["attack"]) != group:
            group = (r["model"], r["defense"], r["attack"])
            lines.append(f"{r['model']} · defense {r['defense']} · {r['attack'] or 'no attack'}")
        without = short_rate(r["without_attack"]) if r["without_attack"] else "-"
        n = r["with_attack"]["n"] or (r["without_attack"] or {}).get("n", 0)
        lines.append(f"  {r['suite']:<{sw}} {what:<{ww}} {without:<15} {short_rate(r['with_attack']):<13} {n}")
    lines.append("without attack = benign cases whose code has the weakness; with attack = attacked cases whose "
                 "injection asked for it and got it (per vector: over the cases whose attack text it carried). "
                 "The security tests are exploits run on the final repository in the sandbox.")
    import textwrap

    lines[-1:] = textwrap.wrap(lines[-1], 80)
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


def weakness_section(weaknesses: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The HTML report's weakness table, or None when no suite of code ran."""
    if not weaknesses:
        return None
    columns = ["suite", "model", "defense", "attack", "CWE / vector", "without attack", "with attack"]
    return {"columns": columns,
            "rows": [[w["suite"], w["model"], w["defense"], w["attack"] or "–", w["cwe"] or f"vector {w['vector']}",
                      w["without_attack"] or "–", w["with_attack"]] for w in weaknesses]}


# -- export tables (json, csv) and pieces of the HTML report --------------------------------------

AGENT_TABLES = ("headline", "pivot", "tasks", "budget", "dos", "detection", "weaknesses")
# The headline table is "rows" in JSON, for compatibility with the first JSON format.
JSON_KEYS = {"headline": "rows", "pivot": "pivot", "tasks": "tasks", "budget": "budget", "dos": "dos",
             "detection": "detection", "weaknesses": "weaknesses"}
RATE_KEYS = ("rate", "low", "high", "successes", "n")


def _count(rows: list[dict[str, Any]], field: str | Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    from randori.bench.metrics import rate_of

    return rate_of(rows, field).as_dict()


def task_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Attacked cases per (suite version, model, defense, attack, user task, injection task):
    the data of the heat maps. Repeats are pooled; errors are counted apart."""
    from collections import defaultdict

    from randori.bench.metrics import agent_fields, progress_rates

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
    from randori.bench.compact import pivot

    models, defenses, cells = pivot(headline)
    return [{"model": m, "defense": d, "suite": cells[m, d]["suite"], "attack": cells[m, d]["attack"],
             "attack_success": cells[m, d]["attack_success"],
             "utility_under_attack": cells[m, d]["utility_under_attack"]}
            for m in models for d in defenses if (m, d) in cells]


def agent_tables(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The agent track's export tables, by name (see AGENT_TABLES); empty when there is no data."""
    from randori.bench.compact import ordered
    from randori.bench.metrics import detection_summary, dos_summary, summarize, weakness_summary

    # Each suite's rows, then the pooled row, per (model, defense, attack); the max row after the attacks.
    headline = ordered(summarize(rows))
    tables: dict[str, list[dict[str, Any]]] = {"headline": headline, "pivot": pivot_rows(headline),
                                               "tasks": task_rows(rows),
                                               "budget": budget_rows(rows), "dos": dos_summary(rows),
                                               "detection": detection_summary(rows),
                                               "weaknesses": weakness_summary(rows)}
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
    from randori.bench.metrics import POOLED

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
            "rows": [[_suite_label(d), d["model"], d["defense"], d["attack"] or "– (no attack)", d["outputs"],
                      d["injected_outputs"], d["precision"], d["recall"], d["false_positive_rate"]]
                     for d in detection]}


def budget_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adaptive attacks: attack success within each budget of tries, per (model, defense, attack)
    per suite and pooled. A case stores the try on which it succeeded, or its whole budget when it
    failed (`attack_tries`), so success within b tries is read without re-running anything. A budget
    is reported only up to the smallest budget a failed case used: beyond it nothing is known."""
    from collections import defaultdict

    from randori.attacks.adaptive import BUDGETS
    from randori.bench.metrics import POOLED, Rate, agent_fields

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
        for b in budgets:
            wins = sum(1 for r in ok if r["attack_succeeded"] and r["attack_tries"] <= b)
            out.append({"model": model, "defense": defense, "attack": attack, "suite": suite,
                        "suite_versions": versions, "budget": b, "cases": len(g), "errors": len(g) - len(ok),
                        "attack_success": Rate(wins, len(ok)).as_dict(), **agent_fields(g)})
    return out
