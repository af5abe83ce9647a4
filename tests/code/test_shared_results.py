"""`randori suites check` splits a suite whose checks run code over worker processes; their parts judge
many of the same states, so completed sandbox results are shared through a private folder
(`randori.sandbox.sync.share_results`). A result that did not complete is never shared, and a file that
is not a whole result is ignored."""

from __future__ import annotations

import subprocess
import sys

import pytest

from randori.sandbox import sync
from randori.sandbox.runner import RunResult

CODE = "def add(a, b):\n    return a + b\n"
TESTS = "def test_add(candidate):\n    assert candidate(2, 3) == 5\n"


@pytest.fixture
def shared(tmp_path):
    sync.clear_cache()
    sync.share_results(tmp_path)
    yield tmp_path
    sync.share_results(None)
    sync.clear_cache()


CHILD = """
import sys
from randori.sandbox import sync
sync.share_results(sys.argv[1])
print(sync.judge_sync(sys.argv[2], sys.argv[3], entry_point="add").passed)
"""


def _no_sandbox(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    ran: list[str] = []

    async def fake_judge(code: str, tests: str, **kw: object) -> RunResult:
        ran.append(code)
        return RunResult(status="timeout", loaded=False, load_error=None, outcomes=[], output="", isolation={},
                         duration_s=0.0, error="would have run")

    monkeypatch.setattr(sync, "judge", fake_judge)
    return ran


@pytest.mark.slow
def test_a_result_judged_in_another_process_is_read_back_not_run_again(shared, monkeypatch):
    child = subprocess.run([sys.executable, "-c", CHILD, str(shared), CODE, TESTS], capture_output=True, text=True,
                           timeout=600)
    assert child.stdout.strip() == "True", child.stderr[-2000:]
    assert [p for p in shared.iterdir() if not p.name.startswith(".")]  # one whole result, no temporary left
    ran = _no_sandbox(monkeypatch)
    result = sync.judge_sync(CODE, TESTS, entry_point="add")
    assert result.status == "completed" and result.passed and ran == []
    # Other inputs are not answered from it.
    assert sync.judge_sync(CODE.replace("+", "-"), TESTS, entry_point="add").status == "timeout"


def test_a_run_that_did_not_complete_is_not_shared_and_a_broken_file_is_ignored(shared, monkeypatch):
    ran = _no_sandbox(monkeypatch)
    assert sync.judge_sync(CODE, TESTS, entry_point="add").status == "timeout"
    assert list(shared.iterdir()) == []
    key = sync.cache_key(CODE, TESTS, "add", {}, "", None, None, None)
    (shared / key).write_bytes(b"not a pickle")
    assert sync.judge_sync(CODE, TESTS, entry_point="add").status == "timeout"
    assert len(ran) == 2  # run both times: nothing usable was shared
