"""Every `ast.parse` randori makes where threads meet holds one lock: on CPython 3.11 and 3.12 two at
once can fail with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905).
Under load, a coding case's check running in a thread beside another's Bandit scan failed that way
and the case was stored as an internal error: a run's numbers changed with the machine's load."""

from __future__ import annotations

import ast
import threading

import pytest

from randori.sandbox import verdict
from randori.sandbox.verdict import PARSE_LOCK


@pytest.fixture
def parses_under_the_lock(monkeypatch):
    """Replaces `ast.parse` with one that records, for each call, whether another thread would find
    PARSE_LOCK taken (it is held by the parsing thread, or the parse is unguarded)."""
    seen: list[bool] = []
    real = ast.parse

    def spy(*args, **kwargs):
        taken: list[bool] = []

        def try_lock() -> None:
            got = PARSE_LOCK.acquire(blocking=False)
            taken.append(not got)
            if got:
                PARSE_LOCK.release()

        probe = threading.Thread(target=try_lock)
        probe.start()
        probe.join()
        seen.append(taken[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", spy)
    return seen


def test_randoris_own_parse_and_literal_eval_hold_the_lock(parses_under_the_lock):
    verdict.parse("x = 1")
    verdict.literal_eval("['a', 'b']")
    assert parses_under_the_lock == [True, True]


def test_a_bandit_scan_holds_the_lock(request):
    pytest.importorskip("bandit")
    from randori.sandbox.analyzers import BanditAnalyzer

    bandit = BanditAnalyzer()  # loading Bandit's plugins is not a scan (pytest may parse as it logs)
    parses_under_the_lock = request.getfixturevalue("parses_under_the_lock")
    (found, skipped), = bandit.scan_many(["import pickle\n\ndef load(b):\n    return pickle.loads(b)\n"])
    assert skipped is None and any(f.rule == "B301" for f in found)
    assert parses_under_the_lock and all(parses_under_the_lock)


def test_agentdojo_list_arguments_are_read_under_the_lock(parses_under_the_lock):
    pytest.importorskip("agentdojo")
    from randori.suites.agentdojo.tools import _string_lists

    assert _string_lists({"recipients": "['a@x.org', 'b@x.org']", "subject": "hi"}) == {
        "recipients": ["a@x.org", "b@x.org"], "subject": "hi"}
    assert parses_under_the_lock and all(parses_under_the_lock)


def test_the_spy_sees_an_unguarded_parse(parses_under_the_lock):
    ast.parse("x = 1")  # what the tests above would see if a path parsed without the lock
    assert parses_under_the_lock == [False]
