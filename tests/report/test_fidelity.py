"""Fidelity (utility on the tasks that need their data) at the user's level: the terminal report,
JSON and CSV, the HTML report, `compare`, and the viewer's case page."""

import csv
import io
import json

import pytest

from tests.helpers import randori

# Two data-directed banking tasks and one that is not: the tool filter, chosen from the user's words,
# loses the card notice's step; the oracle keeps everything else.
TASKS = ("user_task_23", "user_task_24", "user_task_2")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("fidelity")
    args = [a for t in TASKS for a in ("-u", t)]
    r = randori("run", "-s", "banking", *args, "-i", "injection_task_1", "-m", "scripted/oracle",
                "-d", "none", "-d", "tool_filter", "--results", str(path))
    assert r.returncode == 0, r.stderr
    return path


def headline(store):
    rows = json.loads(randori("report", "-r", str(store), "-f", "json").stdout)["rows"]
    return {r["defense"]: r for r in rows if r["suite"] == "banking"}


def test_json_and_csv_carry_fidelity_and_a_filter_that_withholds_a_step_loses_it(store):
    rows = headline(store)
    assert rows["none"]["fidelity_benign"]["n"] == 2 and rows["none"]["fidelity_benign"]["rate"] == 1.0
    assert rows["tool_filter"]["fidelity_benign"]["rate"] == 0.5  # the card notice's step is lost
    assert rows["tool_filter"]["benign_utility"]["rate"] == pytest.approx(2 / 3)
    assert rows["none"]["fidelity_under_attack"]["n"] == 2
    table = list(csv.DictReader(io.StringIO(randori("report", "-r", str(store), "-f", "csv").stdout)))
    by = {r["defense"]: r for r in table if r["suite"] == "banking"}
    assert float(by["tool_filter"]["fidelity_benign"]) == 0.5 and by["tool_filter"]["fidelity_benign_n"] == "2"


def test_terminal_report_and_compare_show_fidelity(store):
    out = randori("report", "-r", str(store), env={"COLUMNS": "80"}).stdout
    section = out.split("fidelity: utility on tasks that need their data", 1)[1]
    assert "defense tool_filter" in section and "50 [" in section
    compared = randori("compare", "-r", str(store), "--by", "defense", env={"COLUMNS": "80"}).stdout
    assert "fidelity " in compared and "fid. attacked" in compared


def test_html_report_has_the_fidelity_columns(store, tmp_path):
    out = tmp_path / "r.html"
    assert randori("report", "-r", str(store), "--html", str(out)).returncode == 0
    html = out.read_text()
    assert ">fidelity</th>" in html and "fidelity under attack</th>" in html
    assert '<span class="n">1/2</span>' in html  # tool_filter's fidelity: one of the two data-directed tasks


def test_viewer_case_page_marks_the_data_given_value(store):
    pytest.importorskip("starlette", reason="the viewer extra is not installed")
    from starlette.testclient import TestClient

    from randori.viewer.app import create_app

    with TestClient(create_app(store), base_url="http://127.0.0.1") as client:
        grid = client.get("/cases?user_task=user_task_23&kind=benign&defense=none&view=list").text
        key = grid.split('href="/case/', 1)[1].split("?", 1)[0].split('"', 1)[0]
        page = client.get(f"/case/{key}").text
        assert 'id="data-given"' in page and "send_payment.amount" in page
        assert "from the data: the value of send_payment.amount" in page
        other = client.get("/cases?user_task=user_task_2&kind=benign&defense=none&view=list").text
        key2 = other.split('href="/case/', 1)[1].split("?", 1)[0].split('"', 1)[0]
        assert 'id="data-given"' not in client.get(f"/case/{key2}").text


def test_the_store_keeps_the_mark_and_the_report_reads_it_from_there(store, monkeypatch):
    from randori.bench.store import Store
    from randori.report import fidelity

    with Store(store) as s:
        marks = {(c["kind"], c["user_task"]): c["data_directed"] for c in s.cases()}
    assert marks[("benign", "user_task_23")] == 1 and marks[("benign", "user_task_2")] == 0
    assert marks[("attacked", "user_task_24")] == 1 and marks[("injection_only", None)] is None
    # The stored mark decides; no suite is looked up (a plugin's suite is never imported by a report).
    monkeypatch.setattr(fidelity, "_marked", lambda *a: pytest.fail("looked the suite up"))
    assert fidelity.data_directed({"suite": "somebody-elses", "user_task": "t", "data_directed": 1})
    assert not fidelity.data_directed({"suite": "banking", "user_task": "user_task_23", "data_directed": 0})


def test_rows_stored_before_the_mark_are_looked_up_in_builtin_suites_only():
    from randori.report.fidelity import data_directed
    from randori.suites import get_suite

    version = get_suite("banking").version
    assert data_directed({"suite": "banking", "suite_version": version, "user_task": "user_task_23",
                          "data_directed": None})
    assert not data_directed({"suite": "banking", "suite_version": "0.0.1", "user_task": "user_task_23"})
    assert not data_directed({"suite": "a-plugin", "suite_version": "1", "user_task": "user_task_23"})
