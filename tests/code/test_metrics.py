from __future__ import annotations

from randori.code.metrics import agreement, summarize


def _row(key, rnd, *, final, both, security=None, functional=True, parses=True, flagged=False, cwe="CWE-89",
         status="ok"):
    sec = both if security is None else security
    return {"key": key, "round": rnd, "final": final, "status": status, "dataset": "d", "dataset_version": "1",
            "model": "m", "prompt": "plain", "max_rounds": 2, "fuzz": 0, "analyzers": "bandit", "cwe": cwe,
            "parses": parses, "functional": functional, "security": sec, "tests_pass": both, "both": both,
            "static_flagged": flagged, "bandit_flagged": flagged, "fuzz_flagged": None, "findings": [],
            "error_category": None, "model_calls": 1, "input_tokens": 10, "output_tokens": 5, "duration_s": 0.1,
            "isolation": {"network": True}}


def test_stopped_tasks_carry_their_last_result_forward():
    rows = [_row("a", 0, final=True, both=True),                                   # passed at once
            _row("b", 0, final=False, both=False), _row("b", 1, final=True, both=True),  # fixed in round 1
            _row("c", 0, final=False, both=False, cwe="CWE-22"), _row("c", 1, final=False, both=False, cwe="CWE-22"),
            _row("c", 2, final=True, both=False, cwe="CWE-22")]
    [s] = summarize(rows)
    assert [r["tasks"] for r in s["per_round"]] == [3, 3, 3]
    assert [r["func_sec"]["successes"] for r in s["per_round"]] == [1, 2, 2]
    assert s["repair"]["fixed"] == 1 and s["repair"]["rounds_used"] == {"0": 1, "1": 1, "2": 1}
    assert s["per_cwe"]["CWE-89"]["tasks"] == 2


def test_errors_are_counted_apart():
    rows = [_row("a", 0, final=True, both=True),
            {**_row("e", 0, final=True, both=False), "status": "error", "error_category": "timeout"}]
    [s] = summarize(rows)
    assert s["tasks"] == 1 and s["errors"] == 1 and s["error_categories"] == {"timeout": 1}
    assert s["per_round"][0]["func_sec"]["n"] == 1


def test_bandit_agreement():
    rows = [_row("a", 0, final=True, both=False, flagged=True),    # flagged and insecure
            _row("b", 0, final=True, both=True, flagged=True),     # flagged but secure
            _row("c", 0, final=True, both=False, flagged=False),   # missed
            _row("d", 0, final=True, both=True, flagged=False),    # clean and secure
            _row("e", 0, final=True, both=False, parses=False)]    # not analysable: excluded
    ag = agreement(rows)
    assert (ag["n"], ag["flagged_and_insecure"], ag["flagged_but_secure"], ag["missed_insecure"],
            ag["clean_and_secure"]) == (4, 1, 1, 1, 1)
    assert ag["agreement"] == 0.5 and ag["precision"] == 0.5 and ag["recall"] == 0.5


def test_configurations_are_kept_apart():
    rows = [_row("a", 0, final=True, both=True), {**_row("b", 0, final=True, both=False), "prompt": "aware"}]
    assert [s["prompt"] for s in summarize(rows)] == ["aware", "plain"]
