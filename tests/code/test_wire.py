"""The data that crosses between tests and code: the receiver builds only objects of its own."""

from __future__ import annotations

import json
import os

import pytest

from randori.sandbox import _sandbox_wire as wire


class _Permissive:
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0

    def __bool__(self):
        return True


def _cross(value):
    return wire.decode(json.loads(json.dumps(wire.Encoder()(value))))


def test_plain_values_round_trip():
    value = {"a": [1, 2.5, None, True], ("t", 1): b"\x00\xff", "s": {1, 2}, "f": frozenset({3}), "big": 2 ** 80,
             "c": 1 + 2j, "ba": bytearray(b"x")}
    assert _cross(value) == value
    assert type(_cross((1, 2))) is tuple and type(_cross(bytearray(b"x"))) is bytearray


def test_permissive_objects_become_opaque():
    out = _cross(_Permissive())
    assert isinstance(out, wire.Opaque) and out != "anything" and out != out.__class__("x", "y")
    with pytest.raises(TypeError, match="plain data"):
        bool(out)
    assert "anything" not in {out} and 0 not in {out}  # hashing and membership are the stand-in's own


def test_subclasses_of_plain_types_cross_as_their_base():
    class Sneaky(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    out = _cross([Sneaky("wrong")])
    assert out == ["wrong"] and type(out[0]) is str and out[0] != "right"


def test_unknown_or_malformed_data_is_refused():
    for bad in ({"$": "pickle", "v": "..."}, {"no": "tag"}, {"$": "dict", "v": [[1]]}, {"$": "bytes", "v": 5}):
        with pytest.raises(wire.WireError):
            wire.decode(bad)


def test_exceptions_cross_with_builtin_bases_and_capped_messages():
    class Denied(PermissionError):
        pass

    exc = wire.decode_exception(wire.encode_exception(Denied("x" * 100_000)))
    assert isinstance(exc, PermissionError) and type(exc).__name__ == "Denied"
    assert len(str(exc)) < 2100 and "characters cut" in str(exc)
    key = wire.decode_exception(wire.encode_exception(KeyError("k")))
    assert type(key) is KeyError and key.args == ("k",)


def test_messages_above_the_cap_are_refused_unread():
    r, w = os.pipe()
    try:
        os.write(w, (10 ** 9).to_bytes(4, "big"))
        with pytest.raises(wire.WireError, match="exceeds"):
            wire.recv(r, cap=1024)
    finally:
        os.close(r)
        os.close(w)


def test_objects_of_the_tests_cross_as_records_with_callbacks(sandbox):
    from randori.sandbox.runner import TestJob

    code = ("def f(request):\n"
            "    return request.form.get('name', 'anonymous'), request.get_json()['n'] + 1, request.kind\n"
            "def g(fn):\n    return fn(2)\n")
    tests = ("class Base:\n    kind = 'mock'\n"
             "class Request(Base):\n"
             "    form = {'name': 'ann'}\n"
             "    def __init__(self, n):\n        self.n = n\n"
             "    def get_json(self):\n        return {'n': self.n}\n"
             "def check(candidate):\n"
             "    assert candidate(Request(41)) == ('ann', 42, 'mock')\n"
             "    assert g(lambda x: x * 21) == 42\n"
             "    def sneaky(x):\n        return candidate(Request(x))\n"  # a callback cannot call the code
             "    try:\n        g(sneaky)\n"
             "    except RuntimeError as e:\n        assert 'cannot call the code' in str(e)\n"
             "    else:\n        raise AssertionError('a callback called the code')\n")
    res = sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="f", test_names=["check"], functions=["g"]))
    assert res.passed, res.failure_messages()
    assert res.isolation["verdict_isolation"] == "separate"


def test_environment_the_tests_set_reaches_the_code(sandbox):
    from randori.sandbox.runner import TestJob

    code = "import os\ndef f():\n    return os.environ.get('API_MODE'), os.environ.get('HOME') is None\n"
    tests = ("import os\ndef check(candidate):\n    os.environ['API_MODE'] = 'strict'\n    del os.environ['HOME']\n"
             "    assert candidate() == ('strict', True)\n    os.environ['API_MODE'] = 'lax'\n"
             "    assert candidate()[0] == 'lax'\n")
    res = sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="f", test_names=["check"]))
    assert res.passed, res.failure_messages()


def test_library_objects_of_the_tests_reach_the_code_as_copies(sandbox):
    from randori.sandbox.runner import TestJob

    code = "def f(stream):\n    return stream.read().upper()\n"
    tests = "import io\ndef check(candidate):\n    assert candidate(io.BytesIO(b'abc')) == b'ABC'\n"
    res = sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="f", test_names=["check"]))
    assert res.passed, res.failure_messages()


def test_the_judge_never_unpickles_what_the_code_sends():
    import base64
    import pickle

    blob = {"$": "pickled", "type": "x", "v": base64.b64encode(pickle.dumps([1])).decode()}
    with pytest.raises(wire.WireError):
        wire.decode(blob, remote=object())
    assert wire.decode(blob, local=[]) == [1]  # the code's side may
