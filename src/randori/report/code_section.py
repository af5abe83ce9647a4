"""The code track's section of the HTML report: its tables per repair round and per CWE, their figures,
and a note per configuration on what the tables do not show."""

from __future__ import annotations

from typing import Any


def code_section(tables: dict[str, list[dict[str, Any]]],
                 summaries: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The HTML report's code-track section: tables and figures, or None when there is no data."""
    from randori.report import figures as figs

    rounds, cwes = tables.get("code_rounds") or [], tables.get("code_cwe") or []
    if not rounds:
        return None

    def config(r: dict[str, Any]) -> str:
        return (f"{r['dataset']}@{r['dataset_version']} · {r['model']} · prompt {r['prompt']}"
                + (" · fuzz" if r["fuzz"] else "") + f" · {r['analyzers']}")

    round_table = {"title": "Pass rates per repair round (round 0 = first answer)", "collapsed": False,
                   "columns": ["configuration", "round", "tasks", "parses", "functional", "security",
                               "func-sec@1 (both)", "static findings", "errors"],
                   "rows": [[config(r), r["round"], r["tasks"], r["parses"], r["functional"], r["security"],
                             r["func_sec"], r["static_flagged"], r["errors"]] for r in rounds]}
    cwe_table = {"title": "Per CWE: round 0 and after repair", "collapsed": len(cwes) > 12,
                 "columns": ["configuration", "CWE", "tasks", "func-sec@1 round 0", "func-sec@1 final",
                             "security round 0", "security final", "Bandit flagged round 0"],
                 "rows": [[config(c), c["cwe"], c["tasks"], c["func_sec_round0"], c["func_sec_final"],
                           c["security_round0"], c["security_final"], c["bandit_flagged_round0"]] for c in cwes]}
    drawn = [figs.code_rounds(rounds, config), figs.code_per_cwe(cwes, config)]
    return {"tables": [round_table, cwe_table] if cwes else [round_table], "figures": [f for f in drawn if f],
            "notes": _code_notes(summaries or [])}


def _code_notes(summaries: list[dict[str, Any]]) -> list[str]:
    """One line per configuration on what the tables do not show: Bandit against the tests, repair."""
    notes = []
    for s in summaries:
        name = f"{s['label']} · {s['model']} · prompt {s['prompt']}"
        ag, rep = s["bandit_agreement_round0"], s["repair"]
        text = (f"{name}: {s['tasks']} tasks, {s['errors']} errors; "
                f"repair fixed {rep['fixed']} and broke {rep['broken']}.")
        if ag["n"]:
            text += (f" Bandit against the security tests (round 0, {ag['n']} samples): agreement "
                     f"{100 * ag['agreement']:.0f}%, flagged and insecure {ag['flagged_and_insecure']}, flagged but "
                     f"secure {ag['flagged_but_secure']}, missed insecure {ag['missed_insecure']}.")
        shared = s.get("shared") or {}
        if shared.get("samples"):
            where = "are in these rates" if shared.get("included_in_rates") else "are left out of these rates"
            text += (f" {shared['samples']} sample(s) judged in the code's own process (it could have forged "
                     f"them) {where}.")
        if s.get("samples_unscanned"):
            text += f" {s['samples_unscanned']} sample(s) an analyzer could not scan count as flagged."
        notes.append(text)
    return notes
