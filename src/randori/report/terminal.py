"""The agent track's report on a terminal: the headline table (compact in 80 columns, or every column
with `--wide`), the lines under it (prices, AgentDojo's definition) and the tables of denial of
service, attack budgets, detectors and weaknesses."""

from __future__ import annotations

from typing import Any

from randori.report.metrics import SCENARIO_KINDS, summarize
from randori.report.tables import budget_rows
from randori.text import fmt_cost


def fmt_rate(d: dict[str, Any]) -> str:
    if not d["n"]:
        return "-"
    return f"{100 * d['rate']:.1f}% [{100 * d['low']:.0f}-{100 * d['high']:.0f}] n={d['n']}"


def print_summary(rows: list[dict[str, Any]], prices: Any = None, wide: bool = False) -> None:
    """The headline table: compact (80 columns, see `randori.report.compact`) or, with `wide`, every
    column with n and decimals. `prices` is a `PriceTable` (default: built-in plus the user's overrides)."""
    from rich.console import Console

    summary = summarize(rows, prices)
    console = Console()
    if wide and not console.is_terminal:
        console = Console(width=300)  # piped output: don't squeeze the table into 80 columns
    if not summary:
        if any(r["kind"] in SCENARIO_KINDS for r in rows):
            _print_weaknesses(console, rows)  # a suite of code's scenarios: their final repositories
            _print_kill_chain(console, rows)
        else:
            console.print("No results.")
        return
    from randori.report.fidelity import render_fidelity
    from randori.text import terminal_width

    if wide:
        _print_wide(console, summary)
        if fidelity := render_fidelity(summary, terminal_width()):
            console.print(fidelity, markup=False, highlight=False, soft_wrap=True)
    else:
        from randori.report import compact

        width = terminal_width()
        text = "\n\n".join(t for t in (compact.render(summary, width), compact.render_pivot(summary, width),
                                       compact.render_progress(summary, width), render_fidelity(summary, width))
                           if t)
        console.print(text, markup=False, highlight=False, soft_wrap=True)
    _print_price_sources(console, summary)
    from randori.report.agentdojo_rows import agentdojo_lines

    for line in agentdojo_lines(summary):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    _print_dos(console, rows)
    _print_budget(console, rows)
    _print_robustness(console, rows)
    _print_detection(console, rows)
    _print_weaknesses(console, rows)
    _print_kill_chain(console, rows)


def _print_wide(console: Any, summary: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from randori.report.compact import ordered

    t = Table(title="randori results (rates with Wilson 95% intervals; errors excluded)")
    for col in ("suite", "model", "defense", "attack"):
        t.add_column(col, no_wrap=True)  # names are read whole, never broken mid-word
    for col in ("benign utility", "utility under attack", "attack success", "attack attempted", "attack blocked",
                "injection seen", "injection tasks alone", "errors", "cost (USD)", "per case: agent, +defense"):
        t.add_column(col, overflow="fold")
    for r in ordered(summary):
        # Names are escaped: a spec such as adaptive[budget=5] would otherwise read as rich markup.
        t.add_row(scope_label(r), *map(escape, (r["model"], r["defense"], r["attack"] or "-")),
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


def scope_label(r: dict[str, Any]) -> str:
    """The suite a row covers, as the wide tables name it: its version, or how many suites it pools."""
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

    from randori.report.metrics import dos_summary

    dos = dos_summary(rows)
    if not dos:
        return
    t = Table(title="denial of service (reported apart: success = the user's task was not done)")
    for col in ("suite", "model", "defense", "attack", "benign utility", "utility under attack", "utility loss",
                "DoS success", "injection seen", "errors", "defense per case"):
        t.add_column(col)
    for r in dos:
        loss = "-" if r["utility_loss"] is None else f"{100 * r['utility_loss']:+.1f} pts"
        t.add_row(scope_label(r), *map(escape, (r["model"], r["defense"], r["attack"])), fmt_rate(r["benign_utility"]),
                  fmt_rate(r["utility_under_attack"]), loss, fmt_rate(r["dos_success"]),
                  fmt_rate(r["injection_seen"]), str(r["errors"]), fmt_defense_cost(r))
    console.print(t)


def _print_kill_chain(console: Any, rows: list[dict[str, Any]]) -> None:
    from randori.report.killchain import kill_chain_lines

    lines = kill_chain_lines(rows)
    if lines:
        console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


def _print_budget(console: Any, rows: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.table import Table

    curve = budget_rows(rows)
    if not curve:
        return
    budgets = sorted({b["budget"] for b in curve})
    t = Table(title="adaptive and search attacks: attack success within a budget of victim queries (agent runs "
              "per case)")
    for col in ("suite", "model", "defense", "attack", *(f"{b} tries" if b > 1 else "1 try" for b in budgets)):
        t.add_column(col)
    lines: dict[tuple[str, str, str, str], dict[int, dict[str, Any]]] = {}
    for b in curve:
        lines.setdefault((scope_label(b), b["model"], b["defense"], b["attack"]), {})[b["budget"]] = b
    for (suite, model, defense, attack), points in lines.items():
        t.add_row(suite, *map(escape, (model, defense, attack)),
                  *(fmt_rate(points[b]["attack_success"]) if b in points else "-" for b in budgets))
    console.print(t)
    for (suite, model, defense, attack), points in lines.items():
        last = points[max(points)]
        if last["attacker_input_tokens"] is None:
            continue
        console.print(escape(
            f"  {suite} · {attack} vs {model} · {defense}: {last['victim_queries']} victim queries; attacker "
            f"{last['attacker']}: {last['attacker_calls']} calls, {last['attacker_input_tokens']:,} in + "
            f"{last['attacker_output_tokens']:,} out tokens, {fmt_cost(last['attacker_cost_usd'])}"),
            highlight=False, soft_wrap=True)


def _print_robustness(console: Any, rows: list[dict[str, Any]]) -> None:
    """Per model and defense, fixed attacks beside each adaptive attack at its budgets, and utility:
    printed when some adaptive or search attack ran (the fixed rates alone are the headline's)."""
    from rich.markup import escape
    from rich.table import Table

    from randori.report.robustness import robustness_rows

    table = [r for r in robustness_rows(rows, budget_rows) if r["adaptive_attack_success"]]
    if not table:
        return
    budgets = sorted({int(b) for r in table for curve in r["adaptive_attack_success"].values() for b in curve})
    split = next((r["split"] for r in table if r["split"]), None)
    t = Table(title="robustness: attack success of the fixed attacks and of each adaptive one within a budget, "
              "and utility" + (f" (the {split} split only)" if split else ""))
    for col in ("model", "defense", "fixed attacks", "adaptive attack",
                *(f"{b} tries" if b > 1 else "1 try" for b in budgets), "benign utility", "utility under attack"):
        t.add_column(col)
    for r in table:
        for attack, curve in sorted(r["adaptive_attack_success"].items()):
            t.add_row(*map(escape, (r["model"], r["defense"])), fmt_rate(r["static_attack_success"]), escape(attack),
                      *(fmt_rate(curve[str(b)]) if str(b) in curve else "-" for b in budgets),
                      fmt_rate(r["benign_utility"]), fmt_rate(r["utility_under_attack"]))
    console.print(t)


def _print_detection(console: Any, rows: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from randori.report.metrics import detection_summary

    det = detection_summary(rows)
    if not det:
        return
    t = Table(title="detectors, per tool output (injected = held attack text before any defense ran)")
    for col in ("suite", "model", "defense", "attack", "outputs (injected)", "precision", "recall",
                "false positives"):
        t.add_column(col)
    for r in det:
        t.add_row(scope_label(r), *map(escape, (r["model"], r["defense"], r["attack"] or "- (no attack)")),
                  f"{r['outputs']} ({r['injected_outputs']})", fmt_rate(r["precision"]), fmt_rate(r["recall"]),
                  fmt_rate(r["false_positive_rate"]))
    console.print(t)


def _print_weaknesses(console: Any, rows: list[dict[str, Any]]) -> None:
    """Compact, like the table above: a line per group, then a line per CWE, per vector and per analyzer
    finding."""
    from randori.report.compact import short_rate
    from randori.report.metrics import weakness_summary

    summary = weakness_summary(rows)
    if not summary:
        return
    # Names whole (never cut): the columns are as wide as their longest entry.
    whats = [r["cwe"] or (f"via {r['vector']}" if r["vector"] else r["analyzer"]) for r in summary]
    sw, ww = max(5, *(len(r["suite"]) for r in summary)), max(23, *(len(w) for w in whats))
    lines = ["weakness introduced in the code: % of cases, [Wilson 95% interval]",
             f"  {'suite':<{sw}} {'CWE / vector / analyzer':<{ww}} {'without attack':<15} {'with attack':<13} n"]
    group = None
    for r, what in zip(summary, whats, strict=True):
        if (r["model"], r["defense"], r["attack"], r["cases"]) != group:
            group = (r["model"], r["defense"], r["attack"], r["cases"])
            over = " · scenarios" if r["cases"] == "scenario" else ""
            lines.append(f"{r['model']} · defense {r['defense']} · {r['attack'] or 'no attack'}{over}")
        without = short_rate(r["without_attack"]) if r["without_attack"] else "-"
        n = r["with_attack"]["n"] or (r["without_attack"] or {}).get("n", 0)
        lines.append(f"  {r['suite']:<{sw}} {what:<{ww}} {without:<15} {short_rate(r['with_attack']):<13} {n}")
    lines.append("without attack = benign cases whose code has the weakness; with attack = attacked cases whose "
                 "injection asked for it and got it (per vector: over the cases whose attack text it carried). "
                 "The security tests are exploits run on the final repository in the sandbox; the analyzer "
                 "lines (Bandit's rule and CWE) count the cases whose final code it flags, a second signal "
                 "beside them, never a verdict.")
    import textwrap

    lines[-1:] = textwrap.wrap(lines[-1], 80)
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)
