"""Code-track results in the viewer: a list per configuration and a page per task with every round."""

import html
import re

import pytest

from randori.bench.store import Store
from randori.code.store import CodeStore, RoundRow, TaskRecord

pytest.importorskip("starlette", reason="the viewer extra is not installed (pip install 'randori[viewer]')")


def _round(i, ok, findings=(), tests=()):
    return RoundRow(round=i, parses=True, functional=True, security=ok, tests_pass=ok, both=ok,
                    static_flagged=bool(findings), bandit_flagged=bool(findings), fuzz_flagged=None,
                    parse_error=None, findings=list(findings), fuzz_findings=None, tests=list(tests),
                    code=f"def read(name):  # round {i}\n    return open(name).read()", reply="Here it is.",
                    isolation={})


def _store(directory):
    finding = {"tool": "bandit", "rule": "B608", "cwe": "CWE-89", "severity": "MEDIUM", "line": 2,
               "message": "Possible SQL injection <via string formatting>", "confidence": "HIGH"}
    failing = {"group": "security", "name": "test_rejects_quote", "passed": False,
               "message": "AssertionError: the quote reached the query"}
    passing = {"group": "functional", "name": "test_finds_alice", "passed": True, "message": ""}
    with Store(directory) as store:
        code = CodeStore(store)
        run = store.start_run({"model": "scripted/insecure-then-secure"})
        for n in (10, 2):
            code.add(run, TaskRecord(key=f"k{n}", dataset="builtin", dataset_version="1", task_id=f"task-{n}",
                                     cwe="CWE-89", model="scripted/insecure-then-secure", settings={},
                                     prompt="plain", max_rounds=2, fuzz=False, analyzers="bandit", repeat=0,
                                     rounds=[_round(0, False, [finding], [passing, failing]),
                                             _round(1, True, [], [passing])]))
        store.finish_run(run)
    return directory


@pytest.fixture
def code_client(tmp_path):
    from starlette.testclient import TestClient

    from randori.viewer.app import create_app

    return TestClient(create_app(_store(tmp_path)), base_url="http://127.0.0.1")


def test_code_list_per_configuration_in_natural_order(code_client):
    page = code_client.get("/code").text
    assert 'href="/code">code track</a>' in page
    assert "builtin@1 · scripted/insecure-then-secure · prompt plain · bandit" in page
    assert re.findall(r'<a href="/code/(k\d+)">', page) == ["k2", "k10"]
    row = re.search(r'<a href="/code/k2">task-2</a>(.*?)</tr>', page, re.S).group(1)
    verdicts = re.findall(r'class="(ok|bad)"', row)
    # Round 0: functional pass, security fail, func-sec fail; final: all three pass.
    assert verdicts == ["ok", "bad", "bad", "ok", "ok", "ok"]


def test_code_task_page_shows_rounds_code_findings_and_test_messages(code_client):
    r = code_client.get("/code/k2")
    assert r.status_code == 200
    page = r.text
    assert page.count('<section class="round"') == 2
    assert "def read(name):  # round 0" in page and "def read(name):  # round 1" in page
    assert "Possible SQL injection &lt;via string formatting&gt;" in page  # escaped
    assert "AssertionError: the quote reached the query" in html.unescape(page)
    assert re.search(r'<tr class="failed"><td>security</td><td><code>test_rejects_quote</code>', page)
    assert code_client.get("/code/nope").status_code == 404


def test_agent_only_store_has_no_code_link(client):
    page = client.get("/").text
    assert 'href="/code"' not in page
    assert "No code-track results" in client.get("/code").text


def test_a_store_with_only_code_track_results_lists_its_runs_with_their_tasks(tmp_path):
    from starlette.testclient import TestClient

    from randori.viewer.app import create_app

    client = TestClient(create_app(_store(tmp_path / "r")), base_url="http://127.0.0.1")
    page = client.get("/").text
    assert re.search(r'<a href="/code">\d+</a>', page)  # the run leads to the code-track list
    assert "2 tasks" in page and "code run" in page
