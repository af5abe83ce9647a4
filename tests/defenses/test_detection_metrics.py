"""Detection metrics: per tool output, did it hold injected text, and did a detector-type defense flag
it? Precision, recall and false-positive rate, in the report, its JSON and CSV."""

import csv
import io
import json

import pytest

from randori.report.metrics import detection_summary
from tests.helpers import randori


def row(counts, *, attack="a", kind="attacked", suite="banking", status="ok", defense="detector"):
    return {"status": status, "detection": json.dumps(counts) if counts is not None else None, "attack": attack,
            "kind": kind, "model": "m", "defense": defense, "suite": suite, "suite_version": "1"}


def test_precision_recall_and_false_positives_are_counted_per_output():
    rows = [row({"injected_flagged": 3, "injected_passed": 1, "benign_flagged": 1, "benign_passed": 5}),
            row({"injected_flagged": 1, "injected_passed": 0, "benign_flagged": 0, "benign_passed": 2}),
            row({"injected_flagged": 0, "injected_passed": 0, "benign_flagged": 2, "benign_passed": 8}, attack=None,
                kind="benign"),
            row({"injected_flagged": 9, "injected_passed": 9, "benign_flagged": 9, "benign_passed": 9}, status="error"),
            row(None, defense="none")]
    out = {d["attack"]: d for d in detection_summary(rows)}
    assert set(out) == {"a", None}  # errors and defenses that detect nothing are left out
    a = out["a"]
    assert (a["outputs"], a["injected_outputs"], a["benign_outputs"], a["cases"]) == (13, 5, 8, 2)
    assert (a["precision"]["successes"], a["precision"]["n"]) == (4, 5)
    assert (a["recall"]["successes"], a["recall"]["n"]) == (4, 5)
    assert (a["false_positive_rate"]["successes"], a["false_positive_rate"]["n"]) == (1, 8)
    assert out[None]["false_positive_rate"]["rate"] == 0.2 and out[None]["recall"]["n"] == 0
    pooled = detection_summary([*rows, row({"injected_flagged": 1}, suite="chat")])
    assert {d["suite"] for d in pooled if d["attack"] == "a"} == {"banking", "chat", "all"}


@pytest.fixture(scope="module")
def detected(tmp_path_factory):
    path = tmp_path_factory.mktemp("detected")
    r = randori("run", "-s", "banking", "-u", "user_task_1", "-u", "user_task_2", "-i", "injection_task_0",
                "-a", "important_instructions", "-a", "search", "-d", "detector", "-d", "detector[mode=abort]",
                "-d", "tool_filter+detector", "-d", "none", "-r", str(path))
    assert r.returncode == 0, r.stderr
    return path


def test_the_heuristic_detector_in_the_report_json_and_csv(detected):
    report = json.loads(randori("report", "-r", str(detected), "-f", "json").stdout)
    det = {(d["defense"], d["attack"]): d for d in report["detection"]}
    assert {d for d, _ in det} == {"detector", "detector[mode=abort]", "tool_filter+detector"}  # not `none`
    fixed = det[("detector", "important_instructions")]
    assert fixed["precision"]["rate"] == fixed["recall"]["rate"] == 1.0 and fixed["injected_outputs"] == 2
    assert fixed["false_positive_rate"]["n"] > 0 and fixed["false_positive_rate"]["rate"] == 0.0
    benign = det[("detector", None)]
    assert benign["injected_outputs"] == 0 and benign["false_positive_rate"]["rate"] == 0.0
    # the search's plain texts pass the heuristic: recall falls, every try's outputs count
    search = next(d for (defense, a), d in det.items() if defense == "detector" and a and a.startswith("search"))
    assert search["recall"]["rate"] < 1.0 and search["precision"]["rate"] == 1.0
    assert det[("detector[mode=abort]", "important_instructions")]["recall"]["rate"] == 1.0
    assert det[("tool_filter+detector", None)]["outputs"] > 0
    text = randori("report", "-r", str(detected), "-f", "csv", "-t", "detection").stdout
    first = next(csv.DictReader(io.StringIO(text)))
    assert {"precision", "recall_low", "false_positive_rate_n", "injected_outputs"} <= set(first)
    table = randori("report", "-r", str(detected)).stdout
    assert "detectors, per tool output" in table


def test_the_html_report_has_the_detector_table(detected, tmp_path):
    html = tmp_path / "report.html"
    r = randori("report", "-r", str(detected), "--html", str(html))
    assert r.returncode == 0, r.stderr
    page = html.read_text()
    table = page[page.index('id="detection-table"'):]
    table = table[:table.index("</table>")]
    assert "detector[mode=abort]" in table and "tool_filter+detector" in table and "(no attack)" in table
    assert "none</td>" not in table  # a defense that detects nothing has no row
