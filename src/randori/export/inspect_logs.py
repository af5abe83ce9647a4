"""`--format inspect`: one Inspect evaluation log (`.eval`) per configuration, written with
`inspect_ai.log`'s own API, so `inspect view` and every tool that reads Inspect logs opens them.

A configuration is (suite version, model or agent, defense, attack); cases without an attack
(benign, injection task alone) form the configuration with attack `none`. Each case is a sample:
its messages and tool calls as the model saw them, its scores (1 or 0; none when the case ended in
an error, which is the sample's error), tokens and cost. A log's metrics are the report's rates.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from randori.export.source import (
    Results,
    agent_label,
    as_json,
    call_ids,
    config_key,
    final_answer,
    first_user_text,
    flag,
    need,
    sample_id,
    tool_steps,
    writable_dir,
)

# Rates a log without an attack carries; the others belong to the logs of attacks.
UNATTACKED = ("benign_utility", "injection_task_utility")


def export(results: Results, out: str | Path) -> str:
    need("inspect_ai.log", "inspect", "--format inspect")
    from inspect_ai.log import write_eval_log

    from randori.bench.pricing import load_prices

    directory = writable_dir(out)
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in results.rows:
        groups[config_key(row)].append(row)
    prices = load_prices()
    names = []
    for key, rows in sorted(groups.items()):
        log = eval_log(key, rows, results, prices)
        name = "_".join(re.sub(r"[^A-Za-z0-9.@-]+", "-", part).strip("-") for part in key) + ".eval"
        write_eval_log(log, directory / name, format="eval")
        names.append(name)
    return (f"wrote {len(names)} Inspect logs ({len(results.rows)} samples) to {directory}\n"
            f"open them with: inspect view --log-dir {directory}")


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat()


def eval_log(key: tuple[str, ...], rows: list[dict[str, Any]], results: Results, prices: Any) -> Any:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalResults, EvalSpec, EvalStats

    suite, version, model, defense, attack = key
    rows = sorted(rows, key=lambda r: (r["kind"], r["user_task"] or "", r["injection_task"] or "", r["repeat"]))
    samples = [sample(r, results.messages(r["key"]), prices) for r in rows]
    start = min(r["created_at"] - r["duration_s"] for r in rows)
    end = max(r["created_at"] for r in rows)
    digest = hashlib.sha256(json.dumps([str(results.directory.resolve()), *key]).encode()).hexdigest()[:22]
    spec = EvalSpec(
        eval_id=digest, run_id=hashlib.sha256(str(results.directory.resolve()).encode()).hexdigest()[:22],
        created=_iso(start), task=f"randori/{suite}", task_version=version, task_id=digest,
        task_args={"defense": defense, "attack": attack}, solver=f"randori agent ({defense})",
        dataset=EvalDataset(name=suite, samples=len(samples)), model=model,
        config=EvalConfig(epochs=1 + max(r["repeat"] for r in rows)),
        metadata={"randori_results": str(results.directory), "suite_version": version, "defense": defense,
                  "attack": attack, "agent": rows[0].get("agent") or "builtin",
                  "agent_version": rows[0].get("agent_version"), "settings": as_json(rows[0]["settings"])})
    ok = sum(1 for r in rows if r["status"] == "ok")
    return EvalLog(
        eval=spec, plan=EvalPlan(name=f"randori, defense {defense}, attack {attack}"), status="success",
        results=EvalResults(total_samples=len(rows), completed_samples=ok, scores=scores(key, results.tables)),
        stats=EvalStats(started_at=_iso(start), completed_at=_iso(end), model_usage=_sum_usage(samples, "model"),
                        role_usage=_sum_usage(samples, "role")),
        samples=samples)


def report_row(key: tuple[str, ...], tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The report's row for this configuration (the headline's, or the DoS table's for a DoS attack)."""
    suite, _, model, defense, attack = key
    for table in ("headline", "dos"):
        for r in tables.get(table) or []:
            if (r["suite"], r["model"], r["defense"]) == (suite, model, defense) and (
                    attack == "none" or r["attack"] == attack):
                return r
    return None


def scores(key: tuple[str, ...], tables: dict[str, list[dict[str, Any]]]) -> list[Any]:
    """The report's rates for this configuration as Inspect scores: mean (the rate) with the Wilson
    95% interval, successes and n. Rates over no case are left out."""
    from inspect_ai.log import EvalMetric, EvalScore

    row = report_row(key, tables)
    out = []
    for name, rate in (row or {}).items():
        if not (isinstance(rate, dict) and "rate" in rate and rate["n"]):
            continue
        if (name in UNATTACKED) != (key[4] == "none"):
            continue
        metrics = {"mean": rate["rate"], "ci_low": rate["low"], "ci_high": rate["high"],
                   "successes": rate["successes"], "n": rate["n"]}
        out.append(EvalScore(name=name, scorer=name, scored_samples=rate["n"],
                             metrics={k: EvalMetric(name=k, value=v) for k, v in metrics.items()}))
    return out


def sample(row: dict[str, Any], messages: list[dict[str, Any]], prices: Any) -> Any:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput

    from randori.bench.pricing import row_cost
    from randori.bench.verdict import utility_kept

    ok = row["status"] == "ok"
    marks: dict[str, Any] = {}
    if ok and row["utility"] is not None:
        marks["utility"] = row["utility"]
    if ok and row["kind"] == "attacked":
        marks["attack_success"] = row["attack_succeeded"]
        marks["utility_under_attack"] = utility_kept(row)
    cost = row_cost(prices, row)
    model = str(row["model"])
    return EvalSample(
        id=sample_id(row), epoch=row["repeat"] + 1, input=first_user_text(messages), target="",
        messages=chat_messages(messages, model), output=ModelOutput.from_content(model, final_answer(messages)),
        scores={name: _score(bool(v)) for name, v in marks.items()},
        metadata={"case_key": row["key"], "kind": row["kind"], "suite": row["suite"],
                  "suite_version": row["suite_version"], "user_task": row["user_task"],
                  "injection_task": row["injection_task"], "attack": row["attack"], "defense": row["defense"],
                  "agent": agent_label(row), "injection_seen": flag(row["injection_seen"]),
                  "attack_attempted": flag(row.get("attack_attempted")),
                  "attack_blocked": flag(row.get("attack_blocked")),
                  "model_calls": row["model_calls"], "defense_calls": row["defense_calls"],
                  "defense_time_s": row["defense_time_s"], "attack_tries": row.get("attack_tries"),
                  "cost_usd": cost, "detection": as_json(row.get("detection")), "status": row["status"],
                  "error_category": row["error_category"]},
        model_usage={model: _usage(row, "", cost)},
        role_usage={"defense": _usage(row, "defense_", None)} if row["defense_calls"] else {},
        started_at=_iso(row["created_at"] - row["duration_s"]), completed_at=_iso(row["created_at"]),
        total_time=row["duration_s"],
        error=None if ok else EvalError(message=f"{row['error_category']}: {row['error_message']}",
                                        traceback="", traceback_ansi=""))


def _score(value: bool) -> Any:
    from inspect_ai.scorer import Score

    return Score(value=1.0 if value else 0.0)


def _usage(row: dict[str, Any], prefix: str, cost: float | None) -> Any:
    from inspect_ai.model import ModelUsage

    inp, out = row[f"{prefix}input_tokens"] or 0, row[f"{prefix}output_tokens"] or 0
    return ModelUsage(input_tokens=inp, output_tokens=out, total_tokens=inp + out,
                      input_tokens_cache_read=row.get(f"{prefix}cached_input_tokens") or 0,
                      input_tokens_cache_write=row.get(f"{prefix}cache_write_tokens") or 0, total_cost=cost)


def _sum_usage(samples: list[Any], kind: str) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for s in samples:
        for name, u in (s.model_usage if kind == "model" else s.role_usage).items():
            total[name] = total[name] + u if name in total else u.model_copy()
    return total


def chat_messages(messages: list[dict[str, Any]], model: str) -> list[Any]:
    """randori's stored messages as Inspect chat messages; a defense's notes go in the metadata."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallError

    ids, answered = call_ids(tool_steps(messages))
    out: list[Any] = []
    for m in messages:
        meta = {"annotations": m["annotations"]} if m.get("annotations") else None
        content = str(m.get("content") or "")
        if m["role"] == "system":
            out.append(ChatMessageSystem(content=content, metadata=meta))
        elif m["role"] == "user":
            out.append(ChatMessageUser(content=content, metadata=meta))
        elif m["role"] == "assistant":
            calls = [ToolCall(id=ids[id(c)], function=c["function"], arguments=c.get("args") or {},
                              parse_error=c.get("parse_error")) for c in m.get("tool_calls") or []]
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None, model=model, metadata=meta))
        else:
            res = m.get("tool_result") or {}
            error = ToolCallError("unknown", res["error"]) if res.get("error") else None
            if res.get("vectors_seen"):
                meta = {**(meta or {}), "vectors_seen": res["vectors_seen"]}
            out.append(ChatMessageTool(content=content, tool_call_id=answered.get(id(m)), function=res.get("function"),
                                       error=error, metadata=meta))
    return out
