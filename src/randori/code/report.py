"""Terminal tables and JSON for the code track, and its export tables for the results report (the read
side, `randori.report`, composes them with the agent track's and draws its HTML section)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from randori.code.check import ReferenceCheck, reason_counts

CWE_ROWS = 8  # the worst CWEs shown by default; --all-cwes shows every one


def _pct(rate: dict[str, Any] | None, *, ci: bool = False) -> str:
    if rate is None or rate.get("rate") is None:
        return "—"
    text = f"{100 * rate['rate']:.1f}%"
    if ci and rate.get("low") is not None:
        text += f" [{100 * rate['low']:.0f}–{100 * rate['high']:.0f}]"
    return text


def render_summaries(summaries: Sequence[dict[str, Any]], console: Console, *, per_cwe: bool = True,
                     cwe_limit: int | None = CWE_ROWS) -> None:
    """Each configuration's table by round and its CWEs, worst first (`cwe_limit` of them; None: all)."""
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
            for line in cwe_lines(s["per_cwe"], cwe_limit):
                console.print(line, markup=False, highlight=False, soft_wrap=True)
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
        console.print(f"  Static findings by severity: round 0 {_counts(f0['by_severity'])} → final "
                      f"{_counts(ff['by_severity'])}")
        rep = s["repair"]
        used = ", ".join(f"{n} in {r}" for r, n in sorted(rep["rounds_used"].items(), key=lambda kv: int(kv[0])))
        console.print(f"  Repair: {rep['fixed']} task(s) fixed, {rep['broken']} broken; rounds used: "
                      f"{used or 'none'}; {s['model_calls']} model calls, {s['input_tokens']} input / "
                      f"{s['output_tokens']} output tokens")
        if s["errors"]:
            console.print(f"  [yellow]{s['errors']} task(s) ended in provider or harness errors "
                          f"{s['error_categories']}; they are excluded from the rates and retried on the next run[/]",
                          soft_wrap=True)
        if s.get("samples_unscanned"):
            console.print(f"  [yellow]{s['samples_unscanned']} sample(s) could not be scanned by an analyzer: "
                          "counted as flagged[/]", soft_wrap=True)
        if s.get("samples_harness_failed"):
            console.print(f"  [yellow]{s['samples_harness_failed']} sample(s) made the harness fail: counted as "
                          "failing[/]", soft_wrap=True)
        left = s.get("left_out")
        if left and left["left_out"]:
            why = ", ".join(f"{k}: {v}" for k, v in left["by_reason"].items())
            console.print(f"  [yellow]{left['left_out']} of {left['checked']} item(s) of this data set left out: their "
                          f"references do not separate here ({why})[/]", soft_wrap=True)
        if left and left.get("separating_but_shared"):
            console.print(f"  {left['separating_but_shared']} item(s) of this data set separate only when judged in "
                          "the code's own process: run only with --include-shared", soft_wrap=True)
        console.print(f"  {shared_note(s)}", soft_wrap=True)
        if s["samples_without_network_isolation"]:
            console.print(f"  [yellow]{s['samples_without_network_isolation']} sample(s) ran without network "
                          "isolation[/]")


# Short names of the CWEs the shipped tasks cover (MITRE's titles, shortened to fit a terminal row).
CWE_NAMES = {
    "CWE-20": "improper input validation", "CWE-22": "path traversal", "CWE-59": "link following",
    "CWE-78": "OS command injection", "CWE-79": "cross-site scripting", "CWE-88": "argument injection",
    "CWE-89": "SQL injection", "CWE-90": "LDAP injection", "CWE-91": "XML injection",
    "CWE-93": "CRLF injection", "CWE-94": "code injection", "CWE-95": "eval injection",
    "CWE-113": "HTTP response splitting", "CWE-117": "log injection", "CWE-295": "bad certificate check",
    "CWE-327": "broken cryptography", "CWE-330": "weak randomness", "CWE-338": "weak PRNG",
    "CWE-377": "insecure temp file", "CWE-400": "resource exhaustion", "CWE-434": "unrestricted upload",
    "CWE-502": "unsafe deserialization", "CWE-601": "open redirect", "CWE-611": "XML external entity",
    "CWE-643": "XPath injection", "CWE-798": "hard-coded credentials", "CWE-835": "infinite loop",
    "CWE-862": "missing authorization", "CWE-863": "incorrect authorization", "CWE-915": "mass assignment",
    "CWE-916": "weak password hash", "CWE-918": "server-side request forgery", "CWE-942": "permissive CORS",
    "CWE-1236": "CSV formula injection", "CWE-1284": "unchecked quantity", "CWE-1333": "regex DoS",
    "CWE-1392": "default credentials", "CWE-116": "improper output encoding", "CWE-134": "format string",
    "CWE-200": "information exposure", "CWE-204": "response discrepancy", "CWE-208": "timing discrepancy",
    "CWE-209": "error message leak", "CWE-276": "bad default permissions", "CWE-307": "no brute-force limit",
    "CWE-328": "weak hash", "CWE-347": "unverified signature", "CWE-367": "TOCTOU race",
    "CWE-384": "session fixation", "CWE-409": "decompression bomb", "CWE-470": "unsafe reflection",
    "CWE-521": "weak password rules", "CWE-532": "secrets in logs", "CWE-613": "no session expiry",
    "CWE-614": "cookie without Secure", "CWE-639": "user-controlled key", "CWE-674": "unbounded recursion",
    "CWE-732": "bad file permissions", "CWE-770": "unlimited allocation", "CWE-776": "XML entity expansion",
    "CWE-789": "oversized allocation",
}


def cwe_lines(per_cwe: dict[str, dict[str, Any]], limit: int | None) -> list[str]:
    """The per-CWE table in 80 columns, worst first: lowest func-sec@1 after repair, then at round 0."""
    from randori.text import columns

    def rate(r: dict[str, Any] | None) -> float:
        return 2.0 if r is None or r.get("rate") is None else r["rate"]

    def pct(r: dict[str, Any] | None) -> str:
        return "-" if rate(r) > 1 else f"{100 * rate(r):.0f}%"

    order = sorted(per_cwe.items(), key=lambda kv: (rate(kv[1]["func_sec_final"]), rate(kv[1]["func_sec_round0"]),
                                                   -kv[1]["tasks"], kv[0]))
    shown = order if limit is None else order[:limit]
    table = [["CWE", "name", "tasks", "fs r0", "fs end", "sec r0", "sec end", "bandit"]]
    table += [[cwe, CWE_NAMES.get(cwe, ""), str(c["tasks"]), pct(c["func_sec_round0"]), pct(c["func_sec_final"]),
               pct(c["security_round0"]), pct(c["security_final"]), pct(c["bandit_flagged_round0"])]
              for cwe, c in shown]
    title = "Per CWE, worst first" + (f" ({len(shown)} of {len(order)}: --all-cwes for every one)"
                                       if len(shown) < len(order) else "")
    return [title, *columns(table, right=range(2, 8)),
            "  fs = func-sec@1, sec = security tests pass; r0 = first attempt,",
            "  end = after repair; bandit = flagged by Bandit at r0"]


def _counts(by_severity: dict[str, int] | None) -> str:
    order = ("HIGH", "MEDIUM", "LOW")
    items = sorted((by_severity or {}).items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 9)
    return ", ".join(f"{k.lower()} {v}" for k, v in items) or "none"


def shared_note(s: dict[str, Any]) -> str:
    """Every report names the samples judged in the code's own process, and where they went."""
    n = s.get("shared", {}).get("samples", 0)
    if not n:
        return "No sample was judged in the code's own process."
    if s["shared"]["included_in_rates"]:
        return (f"[yellow]{n} sample(s) judged in the code's own process are IN these rates "
                "(--include-shared): the code could have forged their verdicts[/]")
    return (f"[yellow]{n} sample(s) judged in the code's own process (forgeable) are left out of these "
            "rates; --include-shared counts them[/]")


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
        console.print(shared_note(s), soft_wrap=True)
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
    shared = sum(1 for c in checks if c.shared_reason)
    if shared:
        counted = any(c.include_shared for c in checks)
        console.print(f"{shared} task(s) judged in the code's own process, where the code could forge its "
                      + ("verdict: counted (--include-shared)" if counted else
                         "verdict: not counted as separating (--include-shared counts them)"), soft_wrap=True)


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False, default=str)


# -- the code track's tables of the results report (json, csv) -------------------------------------

_NO_RATE = {"rate": None, "low": None, "high": None, "successes": 0, "n": 0}
_CODE_CONFIG = ("dataset", "dataset_version", "model", "prompt", "max_rounds", "fuzz", "analyzers")
_ROUND_RATES = ("parses", "functional", "security", "tests_pass", "func_sec", "static_flagged", "fuzz_flagged")
_CWE_RATES = ("func_sec_round0", "func_sec_final", "security_round0", "security_final", "bandit_flagged_round0")


def code_summaries(results_dir: Any) -> list[dict[str, Any]]:
    """The code track's summaries (randori.code.metrics) when the store holds code-track results."""
    if results_dir is None:
        return []
    from randori.bench.store import STORE_FILE, Store

    if not (Path(results_dir) / STORE_FILE).exists():
        return []
    with Store(results_dir, readonly=True) as store:
        exists = store.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'code_results'").fetchone()
        if not exists:
            return []
        from randori.code.metrics import summarize as summarize_code
        from randori.code.store import CodeStore

        return summarize_code(CodeStore(store).rows())


def code_tables(results_dir: Any, summaries: list[dict[str, Any]] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Code track, flat for export: pass rates per (configuration, round) and per (configuration, CWE).
    A rate with no data is {rate: None, ..., n: 0}, so every row has the same columns."""
    summaries = code_summaries(results_dir) if summaries is None else summaries
    rounds, cwes = [], []
    for s in summaries:
        config = {k: s[k] for k in _CODE_CONFIG}
        for r in s["per_round"]:
            rounds.append({**config, "round": r["round"], "tasks": r["tasks"], "errors": s["errors"],
                           **{k: r.get(k) or _NO_RATE for k in _ROUND_RATES}})
        for cwe, c in s["per_cwe"].items():
            cwes.append({**config, "cwe": cwe, "tasks": c["tasks"], **{k: c.get(k) or _NO_RATE for k in _CWE_RATES}})
    return {"code_rounds": rounds, "code_cwe": cwes}
