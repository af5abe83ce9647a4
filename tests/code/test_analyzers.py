from __future__ import annotations

import asyncio

import pytest

from randori.sandbox.analyzers import (
    BanditAnalyzer,
    SemgrepAnalyzer,
    SemgrepBatcher,
    StaticAnalysis,
    find_semgrep,
    parse_check,
)

SQLI = ("import sqlite3\n\ndef q(con, name):\n"
        "    return con.execute(\"SELECT * FROM t WHERE n = '%s'\" % name).fetchall()\n")


def test_bandit_in_process_finds_sql_injection():
    [findings] = BanditAnalyzer().analyze_many([SQLI])
    f = next(f for f in findings if f.rule == "B608")
    assert f.tool == "bandit" and f.cwe == "CWE-89" and f.severity == "MEDIUM" and f.line == 4
    assert "[bandit B608 CWE-89, medium] line 4" in f.feedback()


def test_nosec_is_ignored():
    code = "import hashlib\n\ndef h(b):\n    return hashlib.md5(b).hexdigest()  # nosec\n"
    [findings] = BanditAnalyzer().analyze_many([code])
    assert any(f.rule == "B324" for f in findings), "a `# nosec` comment silenced a finding"


def test_batch_keeps_samples_apart():
    clean = "def f(x):\n    return x + 1\n"
    res = BanditAnalyzer().analyze_many([clean, SQLI, clean])
    assert res[0] == [] and res[2] == [] and any(f.rule == "B608" for f in res[1])


def test_code_that_does_not_parse_is_never_clean():
    rep = asyncio.run(StaticAnalysis().analyze("def f(:\n    pass\n"))
    assert rep.parses is False and "does not parse" in (rep.parse_error or "") and "line 1" in rep.parse_error
    assert parse_check("x = 1\n") is None
    assert parse_check("a\x00b") is not None


def test_threshold_filter():
    rep = asyncio.run(StaticAnalysis().analyze("import subprocess\n" + SQLI))
    assert {f.severity for f in rep.findings} >= {"LOW", "MEDIUM"}
    assert all(f.severity in ("MEDIUM", "HIGH") for f in rep.at_least("medium"))
    assert rep.at_least("high") == []


@pytest.mark.skipif(find_semgrep() is None, reason="semgrep is not installed (pip install 'randori[semgrep]')")
def test_semgrep_batches_with_shipped_rules():
    codes = ["def f(x):\n    return eval(x)\n", "def g(x):\n    return x\n",
             "import pickle\n\ndef h(b):\n    return pickle.loads(b)\n"]

    async def go():
        batcher = SemgrepBatcher(SemgrepAnalyzer(), window_s=0.2)
        return await asyncio.gather(*(batcher.analyze(c) for c in codes))

    res = [found for found, why in asyncio.run(go()) if why is None]
    assert [f.rule for f in res[0]] == ["eval-or-exec-call"] and res[0][0].cwe == "CWE-95"
    assert res[1] == []
    assert [f.cwe for f in res[2]] == ["CWE-502"]


def test_semgrep_missing_is_a_user_error(monkeypatch):
    from randori.errors import UserError

    monkeypatch.setenv("RANDORI_SEMGREP", "/nonexistent/semgrep")
    with pytest.raises(UserError, match="semgrep"):
        SemgrepAnalyzer()
