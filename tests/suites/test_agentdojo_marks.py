"""randori's marks on AgentDojo's user tasks that need their data (`randori.suites.agentdojo.marks`):
each mark holds on its task's ground truth in every benchmark version, the data shows what each
marked call needs before it is made, and at the user's level `scripted/literal` fails each marked
task while `scripted/oracle` passes it (and literal keeps every unmarked task)."""

from __future__ import annotations

import json
import sqlite3

import pytest

pytest.importorskip("agentdojo")

from randori.agents.defenses.structured import value_in_text  # noqa: E402
from randori.agents.models.scripted import readable_views  # noqa: E402
from randori.suites import agentdojo, get_suite  # noqa: E402
from randori.suites.agentdojo.marks import MARKS  # noqa: E402
from randori.tasks.task import FromData, data_given  # noqa: E402
from randori.validity.audit import audit_suite  # noqa: E402
from tests.helpers import randori  # noqa: E402

MARKED = [(short, tid) for short, tasks in MARKS.items() for tid in tasks]


def test_the_marks_cover_the_tasks_that_hand_a_step_to_the_data():
    assert {s: sorted(t) for s, t in MARKS.items()} == {
        "banking": ["user_task_0", "user_task_12", "user_task_13", "user_task_2"],
        "workspace": ["user_task_13", "user_task_19", "user_task_25"],
        "slack": ["user_task_11", "user_task_18", "user_task_19"],
        "travel": []}


@pytest.mark.parametrize("version", agentdojo.versions())
def test_every_mark_marks_a_ground_truth_call_the_data_shows_first(version):
    for short, tid in MARKED:
        suite = get_suite(agentdojo.canonical(short, version))
        ut = suite.user_tasks[tid]
        assert ut.data_directed and ut.data_given
        env = suite.load_env()
        calls = ut.ground_truth(env)
        results = suite.replay(suite.load_env(), calls)
        for fd in ut.data_given:
            hits = [i for i, c in enumerate(calls) if fd in data_given(ut, c)]
            assert hits, f"{suite.name} {tid}: {fd} marks no call of its ground truth"
            for i in hits:
                # What the oracle must have read to make this call stands in an earlier tool output.
                shown = [v for r in results[:i] for v in readable_views(r.content)]
                assert any(value_in_text(fd.evidence(calls[i]), v) for v in shown), (suite.name, tid, fd)
    unmarked = [t for tid, t in get_suite(agentdojo.canonical("travel", version)).user_tasks.items()]
    assert not any(t.data_directed or t.data_given for t in unmarked)


def _utility(results: str) -> dict[str, bool]:
    con = sqlite3.connect(f"{results}/randori.sqlite")
    rows = con.execute("SELECT user_task, utility, data_directed FROM cases WHERE kind = 'benign'").fetchall()
    con.close()
    assert all(d == (t in TASKS) for t, _, d in rows)  # the store keeps the mark with each row
    return {t: bool(u) for t, u, _ in rows}


TASKS = ["user_task_0", "user_task_2", "user_task_13"]


def test_literal_fails_each_marked_task_and_the_oracle_passes_it(tmp_path):
    run = ["run", "-s", "agentdojo:banking", "--no-attack", *(a for t in [*TASKS, "user_task_3"] for a in ("-u", t))]
    for model in ("oracle", "literal"):
        done = randori(*run, "-m", f"scripted/{model}", "-r", str(tmp_path / model))
        assert done.returncode == 0, done.stderr
    assert _utility(str(tmp_path / "oracle")) == dict.fromkeys([*TASKS, "user_task_3"], True)
    # user_task_3's refund is fixed by the user's words: literal keeps it.
    assert _utility(str(tmp_path / "literal")) == {**dict.fromkeys(TASKS, False), "user_task_3": True}
    report = randori("report", "-r", str(tmp_path / "literal"), "--format", "json")
    row = next(r for r in json.loads(report.stdout)["rows"] if r["suite"] == "agentdojo:banking")
    assert row["fidelity_benign"]["n"] == len(TASKS) and row["fidelity_benign"]["rate"] == 0


def test_a_todo_list_task_reads_its_list_so_the_oracle_can_follow_it(tmp_path):
    run = ["run", "-s", "agentdojo:slack", "--no-attack", "-u", "user_task_19"]
    for model, want in (("oracle", True), ("literal", False)):
        done = randori(*run, "-m", f"scripted/{model}", "-r", str(tmp_path / model))
        assert done.returncode == 0, done.stderr
        con = sqlite3.connect(tmp_path / model / "randori.sqlite")
        assert con.execute("SELECT utility FROM cases WHERE kind = 'benign'").fetchall() == [(want,)]
        con.close()


def test_the_audit_flags_a_mark_that_marks_too_little(monkeypatch):
    suite = get_suite("agentdojo:banking")
    audit = audit_suite(suite, ["user_task_13"])
    assert audit.tried["literal"] == 1 and not [f for f in audit.findings if f.rule == "literal"]
    # Marking only the read leaves the address change to the user's words: the check still passes.
    monkeypatch.setattr(suite.user_tasks["user_task_13"], "data_given", (FromData("read_file", "file_path"),))
    [found] = [f for f in audit_suite(suite, ["user_task_13"]).findings if f.rule == "literal"]
    assert [c["function"] for c in found.calls] == ["update_user_info"]
