from __future__ import annotations

import asyncio

import pytest

from randori.code import fuzz
from randori.code.evaluate import job_for


def test_signature_reads_annotations_and_defaults():
    params = fuzz.signature("def f(a: int, b: str | None, c: list[int] = [1], *, d=2):\n    pass\n", "f")
    assert [(p.name, p.spec.kind, p.spec.optional) for p in params] == [
        ("a", "int", False), ("b", "str", True), ("c", "list", False)]
    assert params[2].default == [1] and params[2].spec.args[0].kind == "int"
    with pytest.raises(fuzz.NotFuzzable):
        fuzz.signature("def f(:\n", "f")
    with pytest.raises(fuzz.NotFuzzable):
        fuzz.signature("def g(): pass\n", "f")


def test_examples_come_from_literal_test_calls():
    tests = "def test_a(candidate):\n    assert candidate('app.db', 'bob') == 1\n    candidate(x, 3)\n"
    ex = fuzz.example_calls(tests, 2)
    assert ex[0] == ["app.db", "bob"] and ex[1][1] == 3 and ex[1][0] is fuzz._MISSING


def test_generation_is_deterministic_type_aware_and_keeps_paths_fixed():
    params = fuzz.signature("def f(db_path: str, n: int, name: str):\n    pass\n", "f")
    examples = [["app.db", 10, "bob"]]
    a = fuzz.generate_inputs(params, examples, n=200, seed=7)
    assert a == fuzz.generate_inputs(params, examples, n=200, seed=7)
    assert a != fuzz.generate_inputs(params, examples, n=200, seed=8)
    assert all(row[0] == "app.db" for row in a)  # environment parameters are not mutated
    ints = [row[1] for row in a if row[1] != 10]
    assert len(set(ints)) > 20 and all(isinstance(i, int) for i in ints)
    assert any(0 < abs(i - 10) <= 1000 for i in ints) and any(i in fuzz._INT_EDGES for i in ints)
    assert any(isinstance(row[2], str) and row[2] != "bob" for row in a)


def test_documented_exceptions_are_rejections_not_crashes(sandbox, builtin):
    task = builtin.select(["authz-invoice-idor"])[0]
    assert "LookupError" in fuzz.documented_exceptions(task.prompt)
    assert _fuzz(sandbox, task, task.secure_code) == []


def test_slow_functions_are_calibrated_not_flagged(sandbox, builtin):
    task = builtin.select(["pw-hash-storage"])[0]  # a deliberately slow KDF
    assert _fuzz(sandbox, task, task.secure_code, n=40) == []


def test_objects_without_examples_are_not_fuzzable():
    params = fuzz.signature("def f(logger, user: 'User'):\n    pass\n", "f")
    with pytest.raises(fuzz.NotFuzzable):
        fuzz.generate_inputs(params, [], n=5)


def test_bytes_are_encoded():
    assert fuzz.encode([b"\x00ab", {"k": [b"x"]}]) == [{"__bytes__": "AGFi"}, {"k": [{"__bytes__": "eA=="}]}]


def _fuzz(sandbox, task, code, n=60):
    p = fuzz.plan(code, task.entry_point, task.functional_tests, task.prompt, n=n, seed=1)
    res = asyncio.run(sandbox.fuzz(job_for(task, code, "", []), p.inputs, calibration=p.calibration,
                                   expected=p.expected, per_call_s=0.5))
    return fuzz.findings(res, p.inputs)


def test_fuzzing_finds_catastrophic_backtracking(sandbox, builtin):
    task = builtin.select(["redos-hostname"])[0]
    insecure = _fuzz(sandbox, task, task.insecure_code)
    assert any(f.rule == "timeout" for f in insecure), insecure
    assert _fuzz(sandbox, task, task.secure_code) == []


def test_fuzzing_reports_crashes_not_deliberate_rejections(sandbox, builtin):
    task = builtin.select(["validate-port"])[0]
    assert _fuzz(sandbox, task, task.secure_code) == []  # ValueError is the documented rejection
    crashing = "def parse_port(text: str) -> int:\n    return 65535 // (len(text) - 4) + [1][len(text)]\n"
    found = _fuzz(sandbox, task, crashing)
    assert found and all(f.tool == "fuzz" and f.rule == "crash" for f in found)
    assert any("ZeroDivisionError" in f.message or "IndexError" in f.message for f in found)
    assert all(f.line == 2 for f in found)
