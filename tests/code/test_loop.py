"""The generate -> check -> repair loop with scripted coders: expected per-round numbers."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from randori.bench.store import Store
from randori.code.coders import CoderReply
from randori.code.loop import Evaluator, LoopConfig, plan, run_task
from randori.code.store import CodeStore
from randori.errors import AuthError, ModelError
from randori.sandbox.analyzers import StaticAnalysis
from randori.sandbox.runner import Limits, Sandbox
from randori.vocabulary import Message, Usage
from tests.code.helpers import QUICK_TASKS, invoke, rates, run_json


def test_insecure_then_secure_round_numbers(tmp_path: Path):
    [s] = run_json(tmp_path, "--model", "scripted/insecure-then-secure", "--rounds", "2", tasks=QUICK_TASKS)
    assert s["tasks"] == len(QUICK_TASKS) and s["errors"] == 0 and s["split_tests"]
    assert rates(s, "parses") == [1.0, 1.0, 1.0]
    assert rates(s, "functional") == [1.0, 1.0, 1.0]
    assert rates(s, "security") == [0.0, 1.0, 1.0]
    assert rates(s, "func_sec") == [0.0, 1.0, 1.0]  # round 2 carries round 1 forward
    assert s["repair"] == {"fixed": len(QUICK_TASKS), "broken": 0, "rounds_used": {"1": len(QUICK_TASKS)},
                           "mean_rounds": 1.0}
    assert s["per_cwe"]["CWE-89"]["func_sec_round0"]["rate"] == 0.0
    assert s["per_cwe"]["CWE-89"]["func_sec_final"]["rate"] == 1.0
    assert s["per_cwe"]["CWE-89"]["bandit_flagged_round0"]["rate"] == 1.0
    ag = s["bandit_agreement_round0"]
    assert ag["n"] == len(QUICK_TASKS) and ag["flagged_but_secure"] == 0 and ag["clean_and_secure"] == 0
    assert ag["flagged_and_insecure"] + ag["missed_insecure"] == len(QUICK_TASKS)
    assert s["findings_round0"]["samples_flagged"] > s["findings_final"]["samples_flagged"]


@pytest.mark.slow
def test_insecure_then_secure_on_the_whole_builtin_set(tmp_path: Path, builtin):
    [s] = run_json(tmp_path, "--model", "scripted/insecure-then-secure", "--rounds", "1", "--concurrency", "8")
    assert s["tasks"] == len(builtin.tasks)
    # Every built-in insecure reference is caught by the security tests, so repair fixes all.
    assert rates(s, "security") == [0.0, 1.0]
    assert rates(s, "functional") == [1.0, 1.0]
    assert rates(s, "func_sec") == [0.0, 1.0]
    assert 0 < s["per_round"][0]["static_flagged"]["rate"] < 1  # Bandit sees only some of them


def test_writing_nothing_useful_never_scores(tmp_path: Path):
    [s] = run_json(tmp_path, "--model", "scripted/invalid", "--rounds", "1", tasks=QUICK_TASKS[:4])
    for field in ("parses", "functional", "security", "func_sec"):
        assert rates(s, field) == [0.0, 0.0], field
    rows = _rows(tmp_path)
    assert all("does not parse" in r["parse_error"] for r in rows)
    assert all(r["tests"] == "[]" for r in rows)


def test_secure_coder_needs_no_repair(tmp_path: Path):
    [s] = run_json(tmp_path, "--model", "scripted/secure", "--rounds", "3", tasks=QUICK_TASKS)
    assert rates(s, "func_sec") == [1.0] * 4
    assert s["repair"]["rounds_used"] == {"0": len(QUICK_TASKS)}


def test_insecure_coder_stays_insecure(tmp_path: Path):
    [s] = run_json(tmp_path, "--model", "scripted/insecure", "--rounds", "1", tasks=QUICK_TASKS[:3])
    assert rates(s, "security") == [0.0, 0.0] and rates(s, "functional") == [1.0, 1.0]


def test_hostile_coder_is_contained_and_the_next_run_is_normal(tmp_path: Path, builtin):
    tasks = [t.id for t in builtin.tasks][:10]
    [s] = run_json(tmp_path, "--model", "scripted/hostile", "--rounds", "0", "--timeout", "2",
                   "--concurrency", "4", tasks=tasks)
    assert s["tasks"] == 10 and s["errors"] == 0
    assert rates(s, "func_sec") == [0.0]
    [ok] = run_json(tmp_path, "--model", "scripted/secure", "--rounds", "0", tasks=tasks)
    assert rates(ok, "func_sec") == [1.0]


def test_fuzzing_findings_are_recorded(tmp_path: Path):
    [s] = run_json(tmp_path, "--model", "scripted/insecure-then-secure", "--rounds", "1", "--fuzz",
                   tasks=["redos-hostname", "sqli-find-user"])
    assert s["fuzz"] == 1
    assert rates(s, "fuzz_flagged") == [1.0, 0.0]
    rows = _rows(tmp_path)
    r0 = {r["task_id"]: r for r in rows if r["round"] == 0}
    assert '"rule": "timeout"' in r0["redos-hostname"]["fuzz_findings"]
    assert "OperationalError" in r0["sqli-find-user"]["fuzz_findings"]


def _rows(results: Path) -> list[dict]:
    con = sqlite3.connect(results / "randori.sqlite")
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM code_results ORDER BY task_id, round")]
    finally:
        con.close()


# -- the loop's API: feedback, errors, keys ---------------------------------------------------------

class _Recorder:
    """Insecure first, secure after feedback; keeps every conversation it was given."""

    name = "recorder"

    def __init__(self, fail: Exception | None = None):
        self.seen: list[list[Message]] = []
        self.fail = fail

    async def write(self, task, messages, round_no):
        self.seen.append(list(messages))
        if self.fail is not None:
            raise self.fail
        code = task.insecure_code if round_no == 0 else task.secure_code
        return CoderReply(text=f"```python\n{code}```", code=code, usage=Usage(model_calls=1, input_tokens=5))

    async def aclose(self):
        return None


def _one(builtin, coder, tmp_path: Path, task_id: str = "sqli-find-user", **cfg):
    ds = builtin
    config = LoopConfig(rounds=2, limits=Limits(wall_s=5), **cfg)
    [item] = plan(ds, ds.select([task_id]), "recorder", {}, config, "bandit")
    ev = Evaluator(Sandbox(Limits(wall_s=5)), StaticAnalysis(), config)
    return item, asyncio.run(run_task(item, coder, ev, ds, "recorder", {}, "bandit"))


def test_repair_feedback_has_findings_and_failing_tests(builtin, tmp_path: Path):
    coder = _Recorder()
    _, rec = _one(builtin, coder, tmp_path)
    assert [r.both for r in rec.rounds] == [False, True]
    feedback = coder.seen[1][-1]
    assert feedback.role == "user"
    assert "B608" in feedback.content and "CWE-89" in feedback.content and "line 8" in feedback.content
    assert "Failing tests:" in feedback.content and "test_tautology_matches_nobody" in feedback.content
    assert "[security]" in feedback.content
    assert coder.seen[1][-2].role == "assistant"  # the model sees its own previous answer


def test_aware_prompt_names_the_cwe(builtin, tmp_path: Path):
    coder = _Recorder()
    _one(builtin, coder, tmp_path, prompt="aware")
    assert "CWE-89" in coder.seen[0][-1].content and "bound parameter" in coder.seen[0][-1].content
    plain = _Recorder()
    _one(builtin, plain, tmp_path)
    assert "CWE-89" not in plain.seen[0][-1].content


def test_provider_errors_are_recorded_not_scored_and_retried(builtin, tmp_path: Path):
    item, rec = _one(builtin, _Recorder(fail=ModelError("rate_limit", "slow down")), tmp_path)
    assert rec.status == "error" and rec.error_category == "rate_limit" and rec.rounds == []
    store = Store(tmp_path)
    cs = CodeStore(store)
    run_id = store.start_run({})
    cs.add(run_id, rec)
    assert item.key not in cs.done_keys()  # a resumed run retries it
    _, ok = _one(builtin, _Recorder(), tmp_path)
    cs.add(run_id, ok)
    assert item.key in cs.done_keys()
    assert [r["status"] for r in cs.rows()] == ["ok", "ok"]  # the error row was replaced
    store.close()


def test_auth_errors_stop_the_run(builtin, tmp_path: Path):
    with pytest.raises(AuthError):
        _one(builtin, _Recorder(fail=AuthError("bad key")), tmp_path)


def test_keys_change_with_anything_that_changes_the_result(builtin):
    ds, t = builtin, builtin.select(["sqli-find-user"])
    base = plan(ds, t, "m", {}, LoopConfig(), "bandit")[0].key
    assert base == plan(ds, t, "m", {}, LoopConfig(), "bandit")[0].key
    for other in (plan(ds, t, "m", {}, LoopConfig(prompt="aware"), "bandit"),
                  plan(ds, t, "m", {}, LoopConfig(rounds=3), "bandit"),
                  plan(ds, t, "m", {"temperature": 0.5}, LoopConfig(), "bandit"),
                  plan(ds, t, "m2", {}, LoopConfig(), "bandit"),
                  plan(ds, t, "m", {}, LoopConfig(fuzz=True), "bandit"),
                  plan(ds, t, "m", {}, LoopConfig(), "bandit+semgrep"),
                  plan(ds, t, "m", {}, LoopConfig(repeats=2), "bandit")[1:]):
        assert other[0].key != base


def test_resume_after_kill(tmp_path: Path, builtin):
    """Kill a run mid-way: finished tasks are kept and not redone; the rest run on resume."""
    tasks = [t.id for t in builtin.tasks][:24]
    args = ["run", "--results", str(tmp_path), "--model", "scripted/insecure-then-secure", "--rounds", "1",
            "--concurrency", "1", *[a for t in tasks for a in ("--task", t)]]
    script = "import sys\nfrom randori.cli.code import code_app\ncode_app(sys.argv[1:])\n"
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    db = tmp_path / "randori.sqlite"
    deadline = time.monotonic() + 60
    finished_before = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                con = sqlite3.connect(db)
                finished_before = con.execute("SELECT COUNT(*) FROM code_results WHERE final = 1").fetchone()[0]
                con.close()
            except sqlite3.OperationalError:
                finished_before = 0
            if finished_before >= 3:
                break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    con = sqlite3.connect(db)
    before = dict(con.execute("SELECT key, created_at FROM code_results WHERE final = 1").fetchall())
    con.close()
    assert 3 <= len(before) < len(tasks), "the run was not killed mid-way"

    res = invoke(*args)
    assert res.exit_code == 0, res.output
    assert f"{len(before)} already done" in res.output
    con = sqlite3.connect(db)
    after = dict(con.execute("SELECT key, created_at FROM code_results WHERE final = 1").fetchall())
    per_key = con.execute("SELECT key, COUNT(*), SUM(final), MIN(round), MAX(round) FROM code_results "
                          "GROUP BY key").fetchall()
    con.close()
    assert len(after) == len(tasks)
    assert all(after[k] == v for k, v in before.items()), "a finished task was run again"
    for key, n, finals, lo, hi in per_key:  # no half-written task anywhere
        assert finals == 1 and lo == 0 and hi == n - 1, key
