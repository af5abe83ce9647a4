"""`randori export --format eee`: records checked by Every Eval Ever's own validator and schemas."""

import hashlib
import json
from pathlib import Path

import pytest

from tests.export.conftest import DEFENSES, MODELS, export

# The Makefile installs it on every Python (its schemas and validator are the point of this test).
pytest.importorskip("every_eval_ever.schema")

from every_eval_ever.schema import schema_json  # noqa: E402


@pytest.fixture(scope="module")
def exported(two_by_two, tmp_path_factory):
    out = tmp_path_factory.mktemp("eee")
    assert "validated against the Every Eval Ever schemas" in export(two_by_two, "eee", out)
    return out


def _files(out, pattern):
    return sorted((out / "data").rglob(pattern))


def test_every_record_passes_the_published_validator(exported):
    from every_eval_ever.validate import validate_file

    files = _files(exported, "*.json*")
    names = {p.relative_to(exported).as_posix() for p in files}
    assert len(files) == 2 * len(MODELS) * len(DEFENSES)
    for path in files:
        repo_path = path.relative_to(exported).as_posix()
        report = validate_file(path, repo_path=repo_path, available_files=names,
                               read_repo_file=lambda p: (exported / p).read_text(), run_semantic_checks=True)
        assert report.valid and not report.warnings, (repo_path, report.errors, report.warnings)


def test_records_match_the_schemas_the_package_ships(exported):
    import jsonschema

    for path in _files(exported, "*.json"):
        record = json.loads(path.read_text())
        jsonschema.validate(record, schema_json("eval.schema.json"))
        samples = (path.parent / f"{path.stem}_samples.jsonl").read_text()
        assert record["detailed_evaluation_results"]["checksum"] == hashlib.sha256(samples.encode()).hexdigest()
        lines = [json.loads(line) for line in samples.splitlines()]
        assert len(lines) == record["detailed_evaluation_results"]["total_rows"]
        for line in lines:
            jsonschema.validate(line, schema_json("instance_level_eval.schema.json"))
            assert line["evaluation_id"] == record["evaluation_id"]


def test_aggregate_scores_are_the_reports_rates_and_instances_add_up(exported, report_json, store_rows):
    headline = {(r["model"], r["defense"], r["attack"]): r for r in report_json["rows"]}
    for path in _files(exported, "*.json"):
        record = json.loads(path.read_text())
        model, defense = record["model_info"]["id"], record["model_info"]["additional_details"]["defense"]
        results = {e["evaluation_result_id"]: e for e in record["evaluation_results"]}
        assert set(results) == {"benign_utility", "injection_task_utility",
                                *(f"important_instructions/{m}" for m in ("attack_success", "utility_under_attack",
                                                                          "attack_success_when_seen",
                                                                          "injection_seen"))}
        row = headline[(model, defense, "important_instructions")]
        for rid, e in results.items():
            rate = row[rid.rsplit("/", 1)[-1]]
            ci = e["score_details"]["uncertainty"]["confidence_interval"]
            assert (e["score_details"]["score"], ci["lower"], ci["upper"]) == (rate["rate"], rate["low"], rate["high"])
            assert e["score_details"]["uncertainty"]["num_samples"] == rate["n"]
        # The instance records of a metric recompute its aggregate score.
        lines = [json.loads(x) for x in Path(str(path).replace(".json", "_samples.jsonl")).read_text().splitlines()]
        for rid in ("benign_utility", "important_instructions/attack_success"):
            scores = [x["evaluation"]["score"] for x in lines if x["evaluation_result_id"] == rid and not x["error"]]
            assert sum(scores) / len(scores) == results[rid]["score_details"]["score"]
        cases = [r for r in store_rows if (r["model"], r["defense"]) == (model, defense)]
        attacked = sum(1 for r in cases if r["kind"] == "attacked")
        assert len(lines) == len(cases) + attacked  # attacked cases count in two metrics


def test_instance_transcripts_pair_tool_calls_with_their_answers(exported):
    path = next(p for p in _files(exported, "*_samples.jsonl") if "/openai/fake/" in p.as_posix())
    line = json.loads(path.read_text().splitlines()[0])
    calls = {c["id"]: c for m in line["messages"] if m.get("tool_calls") for c in m["tool_calls"]}
    answers = [m for m in line["messages"] if m["role"] == "tool"]
    assert answers and all(m["tool_call_id"][0] in calls for m in answers)
    assert all(isinstance(v, str) for c in calls.values() for v in c["arguments"].values())
    assert line["token_usage"]["input_tokens"] > 0 and line["interaction_type"] == "agentic"
