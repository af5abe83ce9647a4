"""`randori export --format inspect`, read back with inspect_ai's own log reader."""

from collections import defaultdict

import pytest

from randori.suites import get_suite
from tests.export.conftest import DEFENSES, MODELS, export
from tests.report.stores import synthetic, write_store

pytest.importorskip("inspect_ai")

from inspect_ai.log import list_eval_logs, read_eval_log  # noqa: E402


def export_logs(results, out):
    export(results, "inspect", out)
    paths = sorted(out.glob("*.eval"))
    assert len(list_eval_logs(str(out))) == len(paths)  # what `inspect view` lists
    return [read_eval_log(str(p)) for p in paths]


@pytest.fixture(scope="module")
def logs(two_by_two, tmp_path_factory):
    return export_logs(two_by_two, tmp_path_factory.mktemp("inspect"))


def _flag(value):
    return None if value is None else float(bool(value))


def test_one_log_per_configuration_and_one_sample_per_case(logs, store_rows):
    configs = defaultdict(list)
    for row in store_rows:
        configs[(row["model"], row["defense"], row["attack"] or "none")].append(row)
    assert len(configs) == len(MODELS) * len(DEFENSES) * 2  # no attack, and important_instructions
    assert len(logs) == len(configs)
    for log in logs:
        assert log.status == "success" and log.eval.task == "randori/banking"
        rows = configs[(log.eval.model, log.eval.task_args["defense"], log.eval.task_args["attack"])]
        assert len(log.samples) == log.results.total_samples == len(rows)
        assert {s.metadata["case_key"] for s in log.samples} == {r["key"] for r in rows}
    assert sum(len(log.samples) for log in logs) == len(store_rows)


def test_every_sample_score_is_the_stored_verdict(logs, store_rows):
    by_key = {r["key"]: r for r in store_rows}
    checked = 0
    for log in logs:
        for s in log.samples:
            row = by_key[s.metadata["case_key"]]
            assert s.scores["utility"].value == _flag(row["utility"])
            if row["kind"] == "attacked":
                assert s.scores["attack_success"].value == _flag(row["attack_succeeded"])
                kept = bool(row["utility"]) and not row["attack_succeeded"]
                assert s.scores["utility_under_attack"].value == float(kept)
                checked += 1
            else:
                assert set(s.scores) == {"utility"}
    assert checked > 0
    # The gullible model obeys injections without a defense: both verdicts occur, or the test proves little.
    values = {s.scores["attack_success"].value for log in logs for s in log.samples if "attack_success" in s.scores}
    assert values == {0.0, 1.0}


def test_log_metrics_are_the_reports_rates(logs, report_json):
    headline = {(r["model"], r["defense"], r["attack"]): r for r in report_json["rows"]}
    seen = 0
    for log in logs:
        model, defense, attack = log.eval.model, log.eval.task_args["defense"], log.eval.task_args["attack"]
        row = headline[(model, defense, None if attack == "none" else attack)] if attack != "none" else next(
            r for (m, d, _), r in headline.items() if (m, d) == (model, defense))
        names = {s.name for s in log.results.scores}
        assert names == ({"benign_utility", "injection_task_utility"} if attack == "none" else
                         {"attack_success", "utility_under_attack", "attack_success_when_seen", "injection_seen",
                          "attack_attempted", "attack_blocked"})
        for score in log.results.scores:
            rate = row[score.name]
            got = {k: m.value for k, m in score.metrics.items()}
            assert got == {"mean": rate["rate"], "ci_low": rate["low"], "ci_high": rate["high"],
                           "successes": rate["successes"], "n": rate["n"]}
            seen += 1
    assert seen == 2 * len(MODELS) * len(DEFENSES) + 6 * len(MODELS) * len(DEFENSES)


def test_token_totals_equal_the_report(logs, report_json):
    totals = defaultdict(lambda: [0, 0])
    for log in logs:
        for name, usage in log.stats.model_usage.items():
            assert name == log.eval.model
            t = totals[(log.eval.model, log.eval.task_args["defense"])]
            t[0] += usage.input_tokens
            t[1] += usage.output_tokens
        per_sample = sum(s.model_usage[log.eval.model].input_tokens for s in log.samples)
        assert per_sample == log.stats.model_usage[log.eval.model].input_tokens
    for r in report_json["rows"]:  # one attack: a headline row holds every case of its (model, defense)
        assert totals[(r["model"], r["defense"])] == [r["input_tokens"], r["output_tokens"]]
    assert all(totals[("openai/fake", d)][0] > 0 for d in DEFENSES)


def test_samples_carry_the_conversation_as_the_model_saw_it(logs, store_rows):
    log = next(log for log in logs if log.eval.model == "scripted/gullible"
               and log.eval.task_args == {"defense": "detector", "attack": "important_instructions"})
    sample = next(s for s in log.samples if s.id == "user_task_2 x injection_task_0")
    row = next(r for r in store_rows if r["key"] == sample.metadata["case_key"])
    assert [m.role for m in sample.messages] == [m["role"] for m in row["messages"]]
    calls = {c.id: c.function for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []}
    tools = [m for m in sample.messages if m.role == "tool"]
    assert tools and all(calls[m.tool_call_id] == m.function for m in tools)
    withheld = [m for m in tools if "withheld" in m.text]
    assert withheld and any("detector: withheld" in n for m in withheld for n in m.metadata["annotations"])
    assert sample.input == next(m["content"] for m in row["messages"] if m["role"] == "user")
    assert sample.metadata["injection_seen"] is True and sample.epoch == 1


def test_an_error_case_is_an_error_without_scores_and_out_of_the_rates(tmp_path):
    v = get_suite("banking").version
    store = write_store(tmp_path / "r", [
        synthetic("k1", user_task="u1", version=v), synthetic("k2", user_task="u2", version=v, attack_succeeded=True),
        synthetic("k3", user_task="u3", version=v, status="error", error_category="rate_limit",
                  error_message="429 slow down")])
    [log] = export_logs(store, tmp_path / "out")
    by_key = {s.metadata["case_key"]: s for s in log.samples}
    assert len(by_key) == 3
    assert by_key["k3"].error.message == "rate_limit: 429 slow down" and not by_key["k3"].scores
    success = next(s for s in log.results.scores if s.name == "attack_success")
    assert success.metrics["n"].value == 2 and success.metrics["mean"].value == 0.5
    assert log.stats.model_usage["m/a"].input_tokens == 300  # an error's tokens are spent all the same
