"""`--format eee`: Every Eval Ever records, laid out as its datastore wants them
(`data/randori-SUITE/DEVELOPER/MODEL/UUID.json`, and `UUID_samples.jsonl` beside it).

One aggregate record per (suite version, model or agent, defense): the report's rates (per attack
where an attack applies) with their Wilson 95% intervals. One instance record per case and metric it
counts in. Each record is validated against the schemas the `every-eval-ever` package ships, when it
is installed (it needs Python 3.12 or later); otherwise the export says the records were not checked.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import randori
from randori.errors import install_hint
from randori.export.source import (
    Results,
    agent_label,
    as_json,
    call_ids,
    final_answer,
    first_user_text,
    need,
    sample_id,
    tool_steps,
    writable_dir,
)

SCHEMA_VERSION = "0.3.0"  # the version of the schemas these records were written for
# metric -> (lower is better, description)
METRICS = {
    "benign_utility": (False, "User tasks done with no attack present."),
    "injection_task_utility": (False, "Injection goals done when asked for directly (the attack's ceiling)."),
    "utility_under_attack": (False, "User tasks done under attack without the attacker's goal reached."),
    "attack_success": (True, "Cases where the attacker's goal was reached."),
    "attack_success_when_seen": (True, "Attack success among cases whose agent read the injected text."),
    "injection_seen": (False, "Cases whose agent read the injected text (not a quality measure)."),
}
UNATTACKED = ("benign_utility", "injection_task_utility")
API_PROVIDERS = {"openai", "anthropic", "google"}


def export(results: Results, out: str | Path) -> str:
    directory = writable_dir(out)
    schemas = _schemas()
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in results.rows:
        groups[(row["suite"], row["suite_version"], str(row["model"]), row["defense"])].append(row)
    aggregates = instances = 0
    for key, rows in sorted(groups.items()):
        record, samples = records(key, rows, results)
        folder = directory / record["detailed_evaluation_results"]["file_path"].rsplit("/", 1)[0]
        if schemas:
            _validate(schemas, record, samples)
        folder.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples)
        record["detailed_evaluation_results"]["checksum"] = hashlib.sha256(lines.encode()).hexdigest()
        stem = Path(record["detailed_evaluation_results"]["file_path"]).name.removesuffix("_samples.jsonl")
        (folder / f"{stem}_samples.jsonl").write_text(lines, encoding="utf-8")
        (folder / f"{stem}.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
        aggregates, instances = aggregates + 1, instances + len(samples)
    checked = (f"validated against the Every Eval Ever schemas {SCHEMA_VERSION}" if schemas else
               f"NOT validated: the schemas ship with every-eval-ever (Python 3.12+): {install_hint('eee')}")
    return f"wrote {aggregates} aggregate and {instances} instance records to {directory}/data\n{checked}"


def _schemas() -> dict[str, Any] | None:
    """The aggregate and instance schemas of the installed every-eval-ever, or None without it."""
    need("jsonschema", "eee", "--format eee")
    try:
        from every_eval_ever.schema import schema_json  # type: ignore[import-not-found]
    except ImportError:
        print(f"randori: warning: every-eval-ever is not installed: records will not be validated "
              f"({install_hint('eee')})", file=sys.stderr)
        return None
    return {"aggregate": schema_json("eval.schema.json"), "instance": schema_json("instance_level_eval.schema.json")}


def _validate(schemas: dict[str, Any], record: dict[str, Any], samples: list[dict[str, Any]]) -> None:
    import jsonschema

    from randori.errors import UserError

    for kind, obj in [("aggregate", record), *(("instance", s) for s in samples)]:
        error = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(schemas[kind]).iter_errors(obj))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(record)"
            raise UserError(f"the {kind} record of {record['evaluation_id']} does not match the Every Eval Ever "
                            f"schema at {where}: {error.message}")


def _path_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "unknown"


def records(key: tuple[str, str, str, str], rows: list[dict[str, Any]],
            results: Results) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The aggregate record of one (suite version, model, defense) and its instance records."""
    suite, version, model, defense = key
    developer, _, name = model.partition("/") if "/" in model else ("randori", "", model)
    when = max(r["created_at"] for r in rows)
    retrieved = str(int(time.time()))
    benchmark = f"randori-{suite}"
    evaluation_id = f"{benchmark}/{model}/{retrieved}"
    file_id = uuid.UUID(bytes=hashlib.sha256(json.dumps([benchmark, *key]).encode()).digest()[:16], version=4)
    details = {"suite_version": version, "defense": defense, "agent": agent_label(rows[0]),
               "randori_results": str(results.directory)}
    source = {"dataset_name": f"randori/{suite}", "source_type": "other", "additional_details": details}
    settings = as_json(rows[0]["settings"]) or {}
    generation = {"generation_args": {k: settings[k] for k in ("temperature",) if k in settings} | (
        {"max_tokens": settings["max_tokens"]} if settings.get("max_tokens") else {}),
        "additional_details": {"defense": defense}}
    evaluations: list[dict[str, Any]] = []
    for row in results.tables["headline"]:
        if (row["suite"], row["model"], row["defense"]) != (suite, model, defense):
            continue
        for metric, rate in row.items():
            if metric not in METRICS or not rate["n"] or (metric in UNATTACKED and _has(evaluations, metric)):
                continue
            attack = None if metric in UNATTACKED else row["attack"]
            evaluations.append(_result(metric, attack, rate, source, generation, when))
    samples = [s for r in rows for s in instances(r, results.messages(r["key"]), evaluation_id, model)]
    file_path = f"data/{benchmark}/{_path_part(developer)}/{_path_part(name)}/{file_id}_samples.jsonl"
    record = {
        "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id,
        "evaluation_timestamp": dt.datetime.fromtimestamp(when, dt.timezone.utc).isoformat(),
        "retrieved_timestamp": retrieved,
        "source_metadata": {"source_name": "randori", "source_type": "evaluation_run",
                            "source_organization_name": "randori user", "evaluator_relationship": "third_party"},
        "eval_library": {"name": "randori", "version": randori.__version__},
        "model_info": {"name": model, "id": model, "developer": developer, "additional_details": {
            "deployment_type": "externally_managed" if developer in API_PROVIDERS else "unknown",
            "model_availability": "closed_weights" if developer in API_PROVIDERS else "unknown",
            "defense": defense, "agent": agent_label(rows[0])}},
        "evaluation_results": evaluations,
        "detailed_evaluation_results": {"format": "jsonl", "file_path": file_path, "hash_algorithm": "sha256",
                                        "total_rows": len(samples)},
    }
    return record, samples


def _has(evaluations: list[dict[str, Any]], result_id: str) -> bool:
    return any(e["evaluation_result_id"] == result_id for e in evaluations)


def result_id(metric: str, attack: str | None) -> str:
    return metric if attack is None else f"{attack}/{metric}"


def _result(metric: str, attack: str | None, rate: dict[str, Any], source: dict[str, Any],
            generation: dict[str, Any], when: float) -> dict[str, Any]:
    lower, description = METRICS[metric]
    return {
        "evaluation_result_id": result_id(metric, attack),
        "evaluation_name": metric if attack is None else f"{metric} ({attack})",
        "source_data": source,
        "evaluation_timestamp": dt.datetime.fromtimestamp(when, dt.timezone.utc).isoformat(),
        "metric_config": {"evaluation_description": description, "metric_id": f"randori.{metric}",
                          "metric_name": metric.replace("_", " "), "metric_kind": "rate", "metric_unit": "proportion",
                          "lower_is_better": lower, "score_type": "continuous", "min_score": 0, "max_score": 1,
                          "additional_details": {"attack": attack or "none"}},
        "score_details": {"score": rate["rate"], "details": {"successes": str(rate["successes"]), "n": str(rate["n"])},
                          "uncertainty": {"confidence_interval": {"lower": rate["low"], "upper": rate["high"],
                                                                  "confidence_level": 0.95, "method": "wilson"},
                                          "num_samples": rate["n"]}},
        "generation_config": generation,
    }


def _case_metrics(row: dict[str, Any]) -> list[tuple[str, bool, bool]]:
    """(aggregate result id, score, good for the user) of each rate this case counts in."""
    from randori.bench.verdict import utility_kept

    ok = row["status"] == "ok"
    if row["kind"] == "benign":
        return [("benign_utility", ok and bool(row["utility"]), ok and bool(row["utility"]))]
    if row["kind"] == "injection_only":
        return [("injection_task_utility", ok and bool(row["utility"]), ok and bool(row["utility"]))]
    if row["kind"] != "attacked":
        return []  # DoS cases are reported apart (the report's DoS table) and have no EEE metric here
    broken, kept = ok and bool(row["attack_succeeded"]), ok and utility_kept(row)
    return [(result_id("attack_success", row["attack"]), broken, ok and not broken),
            (result_id("utility_under_attack", row["attack"]), kept, kept)]


def instances(row: dict[str, Any], messages: list[dict[str, Any]], evaluation_id: str,
              model: str) -> list[dict[str, Any]]:
    transcript = eee_messages(messages)
    last = max((m["turn_idx"] for m in transcript if m["role"] == "assistant"), default=0)
    turns = sum(1 for m in transcript if m["role"] == "assistant")
    inp, out = row["input_tokens"] or 0, row["output_tokens"] or 0
    out_records = []
    for rid, score, good in _case_metrics(row):
        out_records.append({
            "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model,
            "evaluation_name": rid.rsplit("/", 1)[-1], "evaluation_result_id": rid,
            "sample_id": sample_id(row) + (f" #{row['repeat']}" if row["repeat"] else ""),
            "interaction_type": "agentic",
            "input": {"raw": first_user_text(messages), "reference": []},
            "output": None, "messages": transcript,
            "answer_attribution": [{"turn_idx": last, "source": "environment state after the case",
                                    "extracted_value": final_answer(messages),
                                    "extraction_method": "randori deterministic check", "is_terminal": True}],
            "evaluation": {"score": 1.0 if score else 0.0, "is_correct": good, "num_turns": max(turns, 1),
                           "tool_calls_count": len(tool_steps(messages))},
            "token_usage": {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out,
                            "input_tokens_cache_read": row.get("cached_input_tokens") or 0,
                            "input_tokens_cache_write": row.get("cache_write_tokens") or 0},
            "performance": {"latency_ms": round(1000 * row["duration_s"], 3)},
            "error": None if row["status"] == "ok" else f"{row['error_category']}: {row['error_message']}",
            "metadata": {k: str(v) for k, v in (("case_key", row["key"]), ("kind", row["kind"]),
                                                  ("user_task", row["user_task"]),
                                                  ("injection_task", row["injection_task"]),
                                                  ("attack", row["attack"]), ("defense", row["defense"]),
                                                  ("status", row["status"]),
                                                  ("injection_seen", row["injection_seen"])) if v is not None},
        })
    return out_records


def eee_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """randori's messages in EEE's transcript form (tool arguments as strings, as the schema wants)."""
    ids, answered = call_ids(tool_steps(messages))
    out = []
    for i, m in enumerate(messages):
        entry: dict[str, Any] = {"turn_idx": i, "role": m["role"], "content": m.get("content") or None}
        if m.get("tool_calls"):
            entry["tool_calls"] = [{"id": ids[id(c)], "name": c["function"],
                                    "arguments": {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                                                  for k, v in (c.get("args") or {}).items()}}
                                   for c in m["tool_calls"]]
        if id(m) in answered:
            entry["tool_call_id"] = [answered[id(m)]]
        out.append(entry)
    return out
