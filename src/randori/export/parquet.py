"""`--format parquet`: a table of cases, one of tool calls, and the report's headline rates, for
pandas, `datasets` or DuckDB. Types are fixed (see CASES, TOOL_CALLS) so an empty column still has one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from randori.export.source import (
    Results,
    as_json,
    final_answer,
    first_user_text,
    flag,
    need,
    tool_steps,
    writable_dir,
)

# (column, arrow type name); docs/reference/export-formats.md documents each.
CASES = (("key", "string"), ("run_id", "int64"), ("kind", "string"), ("suite", "string"),
         ("suite_version", "string"), ("model", "string"), ("agent", "string"), ("agent_version", "string"),
         ("defense", "string"), ("attack", "string"), ("user_task", "string"), ("injection_task", "string"),
         ("repeat", "int64"), ("status", "string"), ("error_category", "string"), ("error_message", "string"),
         ("utility", "bool"), ("attack_succeeded", "bool"), ("utility_under_attack", "bool"),
         ("injection_seen", "bool"), ("model_calls", "int64"), ("input_tokens", "int64"),
         ("output_tokens", "int64"), ("cached_input_tokens", "int64"), ("cache_write_tokens", "int64"),
         ("defense_calls", "int64"), ("defense_input_tokens", "int64"), ("defense_output_tokens", "int64"),
         ("duration_s", "float64"), ("defense_time_s", "float64"), ("attack_tries", "int64"),
         ("created_at", "float64"), ("settings", "string"), ("detection", "string"), ("user_prompt", "string"),
         ("final_answer", "string"), ("messages", "string"))
TOOL_CALLS = (("key", "string"), ("call_index", "int64"), ("turn", "int64"), ("call_id", "string"),
              ("function", "string"), ("arguments", "string"), ("result", "string"), ("error", "string"),
              ("blocked", "bool"), ("vectors_seen", "list<string>"), ("annotations", "list<string>"))
BLOCKED = "This call was blocked by a security policy"


def export(results: Results, out: str | Path) -> str:
    pa = need("pyarrow", "parquet", "--format parquet")
    pq = need("pyarrow.parquet", "parquet", "--format parquet")
    from randori.report.tables import flatten

    directory = writable_dir(out)
    cases, calls = [], []
    for row in results.rows:
        messages = results.messages(row["key"])
        cases.append(case_row(row, messages))
        calls += tool_call_rows(row["key"], messages)
    headline = [flatten(r) for r in results.tables["headline"]]
    pq.write_table(pa.Table.from_pylist(cases, schema=_schema(pa, CASES)), directory / "cases.parquet")
    pq.write_table(pa.Table.from_pylist(calls, schema=_schema(pa, TOOL_CALLS)), directory / "tool_calls.parquet")
    pq.write_table(pa.Table.from_pylist(headline), directory / "headline.parquet")
    return (f"wrote {len(cases)} cases, {len(calls)} tool calls and {len(headline)} rate rows to {directory}\n"
            "(cases.parquet, tool_calls.parquet, headline.parquet)")


def _schema(pa: Any, columns: tuple[tuple[str, str], ...]) -> Any:
    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
             "list<string>": pa.list_(pa.string())}
    return pa.schema([(name, types[kind]) for name, kind in columns])


def case_row(row: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    from randori.bench.verdict import utility_kept

    out = {name: row.get(name) for name, _ in CASES}
    for name in ("utility", "attack_succeeded", "injection_seen"):
        out[name] = flag(row[name])
    # The report's definition: done, and the attacker's goal not reached; only for attacked cases that ran.
    out["utility_under_attack"] = (utility_kept(row) if row["kind"] == "attacked" and row["status"] == "ok"
                                   else None)
    out["agent"] = row.get("agent") or "builtin"
    for name in ("settings", "detection"):
        value = as_json(row.get(name))
        out[name] = None if value is None else json.dumps(value, sort_keys=True)
    out["user_prompt"] = first_user_text(messages)
    out["final_answer"] = final_answer(messages)
    out["messages"] = json.dumps(messages, ensure_ascii=False)
    return out


def tool_call_rows(key: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each tool call of a case in order, with the result the model was shown (after any defense)."""
    rows = []
    for i, step in enumerate(tool_steps(messages)):
        answer = step.result or {}
        res = answer.get("tool_result") or {}
        error = res.get("error")
        rows.append({"key": key, "call_index": i, "turn": step.turn, "call_id": step.call.get("id") or "",
                     "function": step.call["function"],
                     "arguments": json.dumps(step.call.get("args") or {}, sort_keys=True, ensure_ascii=False),
                     "result": answer.get("content") if step.result else None, "error": error,
                     "blocked": bool(error and error.startswith(BLOCKED)),
                     "vectors_seen": list(res.get("vectors_seen") or []),
                     "annotations": list(answer.get("annotations") or [])})
    return rows
