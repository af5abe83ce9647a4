"""Terminal tables for a results store, and suite counts."""

from __future__ import annotations

from typing import Any

from randori.bench.metrics import summarize


def suite_counts(suite: Any) -> dict[str, Any]:
    """Counts for `suites list --format json` (keys: name, version, tools, user_tasks,
    injection_tasks, vectors, attacked_cases)."""
    return {"name": suite.name, "version": suite.version, "tools": len(suite.tools),
            "user_tasks": len(suite.user_tasks), "injection_tasks": len(suite.injection_tasks),
            "vectors": len(suite.vectors),
            "attacked_cases": len(suite.user_tasks) * len(suite.injection_tasks)}


def current_rows(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Keep rows whose suite version is the installed one (or whose suite is not installed)."""
    from randori.suites import get_suite, suite_names

    installed = {}
    for name in suite_names():
        try:
            installed[name] = get_suite(name).version
        except Exception:  # a broken third-party suite must not hide the report
            continue
    kept = [r for r in rows if installed.get(r["suite"], r["suite_version"]) == r["suite_version"]]
    return kept, len(rows) - len(kept)


def fmt_rate(d: dict[str, Any]) -> str:
    if not d["n"]:
        return "-"
    return f"{100 * d['rate']:.1f}% [{100 * d['low']:.0f}-{100 * d['high']:.0f}] n={d['n']}"


def print_summary(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    summary = summarize(rows)
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)  # piped output: don't squeeze the table into 80 columns
    if not summary:
        console.print("No results.")
        return
    t = Table(title="randori results (rates with Wilson 95% intervals; errors excluded)")
    for col in ("suite", "model", "defense", "attack", "benign utility", "utility under attack",
                "attack success", "injection seen", "injection tasks alone", "errors"):
        t.add_column(col)
    for r in summary:
        suite = r["suite"] if r["suite"] != "all" else "all (" + ", ".join(r["suite_versions"]) + ")"
        if r["suite"] != "all":
            suite = r["suite_versions"][0] if r["suite_versions"] else r["suite"]
        t.add_row(suite, r["model"], r["defense"], r["attack"] or "-", fmt_rate(r["benign_utility"]),
                  fmt_rate(r["utility_under_attack"]), fmt_rate(r["attack_success"]),
                  fmt_rate(r["injection_seen"]), fmt_rate(r["injection_task_utility"]), str(r["errors"]))
    console.print(t)
