"""How a task's tests reach the code: decided from the tests and the secure reference."""

from __future__ import annotations

from randori.sandbox.verdict import SEPARATE, SHARED, plan_verdict

REFERENCE = ("import os\nimport hashlib as hl\nfrom json import dumps\nLIMIT = 3\napp = object()\n"
             "def helper(x):\n    return x\ndef f(x):\n    return helper(x)\n")


def test_plain_tests_run_separately():
    plan = plan_verdict("def check(candidate):\n    assert candidate(1) == 1\n", REFERENCE, "f")
    assert plan == plan_verdict("def check(candidate):\n    assert candidate(1) == 1\n", REFERENCE, "f")
    assert plan.isolation == SEPARATE and plan.imports == () and plan.functions == ()


def test_names_from_the_reference_become_imports_and_stand_ins():
    tests = ("def check(candidate):\n    assert helper(candidate(1)) == 1\n"
             "    assert hl.sha256(dumps(1).encode()) and os.sep\n")
    plan = plan_verdict(tests, REFERENCE, "f")
    assert plan.isolation == SEPARATE
    assert set(plan.imports) == {"import os", "import hashlib as hl", "from json import dumps"}
    assert plan.functions == ("helper",)


def test_the_code_namespace_is_reached_through_proxies():
    for tests, names in (("def check(candidate):\n    assert app is not None\n", ("app",)),
                         ("def check(candidate):\n    assert candidate(LIMIT) == LIMIT\n", ("LIMIT",)),
                         ("def check(candidate):\n    c = app.test_client()\n    with app.test_request_context():\n"
                          "        assert c.get('/').status_code == 200\n", ("app",))):
        plan = plan_verdict(tests, REFERENCE, "f")
        assert plan.isolation == SEPARATE and plan.code_names == names


def test_what_proxies_cannot_carry_needs_shared_mode():
    cases = {
        "from flask import Flask\ndef check(candidate):\n    own = Flask('t')\n"
        "    with own.test_request_context():\n        candidate(1)\n": "context of their own",
        "def check(candidate):\n    assert candidate.__globals__['LIMIT'] == 3\n": "globals",
    }
    for tests, why in cases.items():
        plan = plan_verdict(tests, REFERENCE, "f")
        assert plan.isolation == SHARED and why in plan.reason, tests
    for crossing in ("import datetime\ndef check(candidate):\n"
                     "    assert candidate(datetime.date(2020, 1, 1)) is None\n",
                     # Objects and functions of the tests' own cross as records and callbacks.
                     "class Req:\n    form = {}\ndef check(candidate):\n    assert candidate(Req()) is None\n",
                     "def check(candidate):\n    assert candidate(lambda: 1) is None\n",
                     # A global of the code handed to a library arrives there as its value.
                     "import hashlib\ndef check(candidate):\n    assert hashlib.sha256(str(LIMIT).encode())\n",
                     # Library objects of the tests' cross as copies the code's process unpickles.
                     "import io\ndef check(candidate):\n    c = app.test_client()\n"
                     "    c.post('/', data={'f': (io.BytesIO(b'x'), 'a')})\n"):
        assert plan_verdict(crossing, REFERENCE, "f").isolation == SEPARATE, crossing


def test_patching_and_process_state_need_shared_mode():
    cases = ["import os\ndef check(candidate):\n    os.system = lambda c: 0\n    candidate(1)\n",
             "from unittest import mock\ndef check(candidate):\n"
             "    with mock.patch('os.system'):\n        candidate(1)\n",
             "import psutil\ndef check(candidate):\n    assert not psutil.Process().children()\n",
             "import random\ndef check(candidate):\n    random.seed(1)\n"]
    for tests in cases:
        assert plan_verdict(tests, REFERENCE, "f").isolation == SHARED, tests
    # Environment variables the tests read or set are passed on to the code's process.
    for env in ("import os\ndef check(candidate):\n    assert candidate(os.environ.get('HOME')) is None\n",
                "import os\ndef check(candidate):\n    os.environ['KEY'] = 'v'\n    candidate(1)\n"):
        assert plan_verdict(env, REFERENCE, "f").isolation == SEPARATE


def test_every_builtin_task_runs_separately(builtin):
    for t in builtin.tasks:
        for _, source, _ in t.test_groups():
            assert plan_verdict(source, t.secure_code, t.entry_point).isolation == SEPARATE, t.id
