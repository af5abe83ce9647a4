"""Every sample stays in the rates, and unscanned is not clean.

Code that makes the harness itself fail (a 5,000-term expression the compiler gives up on) is that
sample's failure, with its reason: never a provider error, never retried. Code an analyzer cannot
read (Bandit skips a 1,000-term expression) counts as flagged, and the report says how many."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from randori.bench.store import Store
from randori.code.coders import CoderReply
from randori.code.loop import Evaluator, LoopConfig, plan, run_tasks
from randori.code.store import CodeStore
from randori.sandbox.analyzers import StaticAnalysis
from randori.sandbox.runner import Limits, Sandbox
from randori.vocabulary import Usage
from tests.code.helpers import invoke

TASK = "cmd-count-lines"


def _huge(terms: int) -> str:
    return "(" + "+".join(["1"] * terms) + ")"


# Too deep for the compiler: the code could never run.
TOO_DEEP = f"def count_lines(path):\n    return {_huge(5000)}\n"
# Compiles and even passes no test, but Bandit skips it, though it holds `shell=True` and `eval`.
UNREADABLE = ("import subprocess\n\ndef count_lines(path):\n"
              f"    _ = {_huge(1000)}\n"
              "    eval('1')\n"
              "    out = subprocess.run('wc -l < ' + path, shell=True, capture_output=True, text=True)\n"
              "    return int(out.stdout)\n")


class _Fixed:
    name = "fixed"

    def __init__(self, code: str):
        self.code = code

    async def write(self, task, messages, round_no):
        return CoderReply(text=f"```python\n{self.code}```", code=self.code, usage=Usage(model_calls=1))

    async def aclose(self):
        return None


def _run(builtin, tmp_path: Path, code: str, rounds: int = 1) -> list[dict]:
    config = LoopConfig(rounds=rounds, limits=Limits(wall_s=5))
    items = plan(builtin, builtin.select([TASK]), "fixed", {}, config, "bandit")
    store = Store(tmp_path)
    cs = CodeStore(store)
    run_id = store.start_run({})
    ev = Evaluator(Sandbox(Limits(wall_s=5)), StaticAnalysis(), config)
    recs = asyncio.run(run_tasks(items, _Fixed(code), ev, builtin, "fixed", {}, "bandit", cs, run_id))
    assert [r.status for r in recs] == ["ok"]  # never an error, so never left out nor retried
    assert {i.key for i in items} <= cs.done_keys()
    store.close()
    res = invoke("report", "--results", str(tmp_path), "--format", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_code_the_compiler_gives_up_on_is_the_samples_failure(builtin, tmp_path: Path):
    [s] = _run(builtin, tmp_path, TOO_DEEP)
    assert s["tasks"] == 1 and s["errors"] == 0
    assert s["per_round"][0]["parses"]["rate"] == 0.0
    assert s["per_round"][0]["func_sec"]["rate"] == 0.0


def test_unscanned_code_counts_as_flagged_and_is_reported(builtin, tmp_path: Path):
    [s] = _run(builtin, tmp_path, UNREADABLE, rounds=1)
    assert s["tasks"] == 1 and s["errors"] == 0
    assert s["per_round"][0]["static_flagged"]["rate"] == 1.0
    assert s["samples_unscanned"] == 1
    assert s["seed_summary"]["rates"]["initially_bandit_unsafe"]["successes"] == 1
    # The repair loop treats it as flagged: it asked for another round.
    assert s["repair"]["rounds_used"] == {"1": 1}
    text = invoke("report", "--results", str(tmp_path))
    assert "could not be scanned" in text.output


def test_a_harness_failure_in_the_sandbox_is_the_samples_failure(builtin, tmp_path: Path, monkeypatch):
    async def broken(self, job, *, limits=None):
        raise RecursionError("maximum recursion depth exceeded while encoding the job")

    monkeypatch.setattr(Sandbox, "run", broken)
    [s] = _run(builtin, tmp_path, "def count_lines(path):\n    return 3\n", rounds=0)
    assert s["tasks"] == 1 and s["errors"] == 0 and s["samples_harness_failed"] == 1
    assert s["per_round"][0]["tests_pass"]["rate"] == 0.0
