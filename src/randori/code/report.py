"""Terminal tables and JSON for the code track."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from randori.code.check import ReferenceCheck, reason_counts


def _pct(rate: dict[str, Any] | None, *, ci: bool = False) -> str:
    if rate is None or rate.get("rate") is None:
        return "—"
    text = f"{100 * rate['rate']:.1f}%"
    if ci and rate.get("low") is not None:
        text += f" [{100 * rate['low']:.0f}–{100 * rate['high']:.0f}]"
    return text


def render_summaries(summaries: Sequence[dict[str, Any]], console: Console, *, per_cwe: bool = True) -> None:
    if not summaries:
        console.print("No code-track results.")
        return
    for s in summaries:
        title = (f"{s['label']} · {s['model']} · prompt={s['prompt']} · rounds={s['max_rounds']}"
                 f"{' · fuzz' if s['fuzz'] else ''} · {s['analyzers']}")
        table = Table(title=title, title_justify="left")
        table.add_column("Round", justify="right")
        table.add_column("Tasks", justify="right")
        table.add_column("Parses", justify="right")
        if s["split_tests"]:
            table.add_column("Functional", justify="right")
            table.add_column("Security", justify="right")
        table.add_column("func-sec@1 (95% CI)" if s["split_tests"] else "Tests pass (95% CI)", justify="right")
        table.add_column("Static flagged", justify="right")
        if s["fuzz"]:
            table.add_column("Fuzz crashes", justify="right")
        for r in s["per_round"]:
            cells = [str(r["round"]), str(r["tasks"]), _pct(r["parses"])]
            if s["split_tests"]:
                cells += [_pct(r["functional"]), _pct(r["security"])]
            cells += [_pct(r["func_sec"], ci=True), _pct(r["static_flagged"])]
            if s["fuzz"]:
                cells.append(_pct(r["fuzz_flagged"]))
            table.add_row(*cells)
        console.print(table)
        if not s["split_tests"]:
            console.print("  This data set mixes functional and security asserts in one check: "
                          "only the combined pass rate is reported.")
        if per_cwe and s["per_cwe"]:
            cwe_table = Table(title="Per CWE (round 0 → final)", title_justify="left")
            for col in ("CWE", "Tasks", "func-sec@1 r0", "func-sec@1 final", "Security r0", "Security final",
                        "Bandit flagged r0"):
                cwe_table.add_column(col, justify="left" if col == "CWE" else "right")
            for cwe, c in s["per_cwe"].items():
                cwe_table.add_row(cwe, str(c["tasks"]), _pct(c["func_sec_round0"]), _pct(c["func_sec_final"]),
                                  _pct(c["security_round0"]), _pct(c["security_final"]),
                                  _pct(c["bandit_flagged_round0"]))
            console.print(cwe_table)
        ag = s["bandit_agreement_round0"]
        cag = s.get("bandit_vs_combined_check_round0") or {}
        if cag.get("passing") or cag.get("failed_check"):
            fa = cag["false_alarm_rate"]
            alarms = f" ({100 * fa:.1f}% false alarms)" if fa is not None else ""
            console.print(
                f"  Bandit vs the combined check (round 0): flagged {cag['flagged_but_passing']} of "
                f"{cag['passing']} samples that pass it{alarms}; {cag['failed_check']} failed checks "
                f"(functional or security: not counted as insecure), {cag['flagged_and_failed']} of them flagged",
                soft_wrap=True)
        if ag["n"]:
            console.print(
                f"  Bandit vs security tests (round 0, {ag['n']} samples): agreement "
                f"{100 * ag['agreement']:.1f}% · flagged & insecure {ag['flagged_and_insecure']} · "
                f"flagged but secure {ag['flagged_but_secure']} · missed insecure {ag['missed_insecure']} · "
                f"clean & secure {ag['clean_and_secure']}")
        f0, ff = s["findings_round0"], s["findings_final"]
        console.print(f"  Static findings by severity: round 0 {f0['by_severity'] or '{}'} → final "
                      f"{ff['by_severity'] or '{}'}")
        rep = s["repair"]
        console.print(f"  Repair: {rep['fixed']} task(s) fixed, {rep['broken']} broken; rounds used "
                      f"{rep['rounds_used']}; {s['model_calls']} model calls, {s['input_tokens']} input / "
                      f"{s['output_tokens']} output tokens")
        if s["errors"]:
            console.print(f"  [yellow]{s['errors']} task(s) ended in provider errors {s['error_categories']}; "
                          "they are excluded from the rates and retried on the next run[/]")
        left = s.get("left_out")
        if left and left["left_out"]:
            why = ", ".join(f"{k}: {v}" for k, v in left["by_reason"].items())
            console.print(f"  [yellow]{left['left_out']} of {left['checked']} item(s) of this data set left out: their "
                          f"references do not separate here ({why})[/]", soft_wrap=True)
        if s.get("samples_judged_in_shared_namespace"):
            console.print(f"  [yellow]{s['samples_judged_in_shared_namespace']} sample(s) judged in the code's own "
                          "process (the data set's tests use its namespace): the code could have forged them[/]",
                          soft_wrap=True)
        if s["samples_without_network_isolation"]:
            console.print(f"  [yellow]{s['samples_without_network_isolation']} sample(s) ran without network "
                          "isolation[/]")


SEED_LABELS = {
    "initially_bandit_unsafe": "Initially Bandit-unsafe",
    "initially_passing_tests": "Initially passing tests",
    "repair_attempted_among_flagged": "Repair attempted (of flagged)",
    "bandit_clean_after_repair": "Bandit-clean after repair (of repaired)",
    "tests_pass_after_repair": "Tests pass after repair (of repaired)",
}


def render_seed_summary(summaries: Sequence[dict[str, Any]], console: Console) -> None:
    """The six figures of the SecEval safety-agent note per configuration, with counts."""
    for s in summaries:
        seed = s["seed_summary"]
        table = Table(title=f"{s['label']} · {s['model']} · prompt={s['prompt']} · rounds={s['max_rounds']}",
                      title_justify="left")
        table.add_column("Figure")
        table.add_column("Count", justify="right")
        table.add_column("Rate (95% CI)", justify="right")
        table.add_row("Samples", str(seed["samples"]), "")
        for key, label in SEED_LABELS.items():
            r = seed["rates"][key]
            table.add_row(label, f"{r['successes']}/{r['n']}", _pct(r, ci=True))
        console.print(table)
    console.print("Definitions:")
    for key, text in (summaries[0]["seed_summary"]["definitions"] if summaries else {}).items():
        console.print(f"  {SEED_LABELS.get(key, 'Samples')}: {text}")


def _why_not(c: ReferenceCheck) -> str:
    """A short reason for the table (the JSON output has the details)."""
    reason = c.reason
    if reason is None:
        return ""
    cls, detail = reason
    if cls == "missing package":
        return f"no {detail}"
    if cls == "data set bug":
        return "bug: " + ("secure fails" if "secure reference fails" in detail else "insecure passes"
                          if "insecure reference passes" in detail else "see --format json")
    return cls


def render_checks(checks: Sequence[ReferenceCheck], console: Console, *, label: str, isolation: str) -> None:
    split = any(c.split for c in checks)
    table = Table(title=f"Reference check · {label} · sandbox: {isolation}", title_justify="left")
    table.add_column("Task")
    table.add_column("CWE")
    if split:
        for col in ("Secure func", "Secure sec", "Insecure func", "Insecure sec"):
            table.add_column(col, justify="center")
    else:
        table.add_column("Secure passes", justify="center")
        table.add_column("Insecure fails", justify="center")
    table.add_column("OK" if split else "Separates", justify="center")
    table.add_column("Why not" if not split else "Problem")

    def mark(v: bool | None, want: bool = True) -> str:
        if v is None:
            return "—"
        return "[green]✓[/]" if v == want else "[red]✗[/]"

    for c in checks:
        if c.split:
            cells = [mark(c.secure["functional"].passed), mark(c.secure["security"].passed),
                     mark(c.insecure["functional"].passed), mark(c.insecure["security"].passed, want=False)]
        else:
            cells = [mark(c.secure["combined"].passed), mark(c.insecure["combined"].passed, want=False)]
        table.add_row(c.task_id, c.cwe, *cells, "[green]yes[/]" if c.separates else "[red]no[/]",
                      _why_not(c) if not split else (c.problems[0] if c.problems else "")[:120])
    console.print(table)
    good = sum(1 for c in checks if c.separates)
    what = "valid" if split else "separate secure from insecure here"
    console.print(f"{good}/{len(checks)} tasks {what}; {len({c.cwe for c in checks})} CWEs")
    counts = reason_counts(checks)
    if counts:
        console.print("Not separating: " + "; ".join(f"{k}: {v}" for k, v in counts.items()))
    shared = sum(1 for c in checks if any(g.verdict_isolation == "shared" for g in c.secure.values()))
    if shared:
        console.print(f"{shared} task(s) judged in the code's own process (their tests use its namespace)")


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False, default=str)
