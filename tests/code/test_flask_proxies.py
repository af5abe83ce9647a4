"""A Flask app judged from outside its process, as CodeSecEval's Flask items are: the tests use the
code's `app`, its test client, responses, the config and a session, all through proxies."""

from __future__ import annotations

import pytest

from randori.sandbox.runner import TestJob
from randori.sandbox.verdict import SEPARATE, plan_verdict

pytest.importorskip("flask")

APP = ("from flask import Flask, jsonify, redirect, request, session\n"
       "app = Flask(__name__)\n"
       "app.secret_key = 'k'\n"
       "@app.route('/go')\n"
       "def go():\n"
       "    target = request.args.get('to', '')\n"
       "    if not target.startswith('https://example.org/'):\n"
       "        return 'Invalid target', 400\n"
       "    return redirect(target)\n"
       "@app.route('/me')\n"
       "def me():\n"
       "    if app.config.get('LOCKED'):\n        return jsonify(error='locked'), 403\n"
       "    return jsonify(user=session.get('user'))\n")
TESTS = ("def check(candidate):\n"
         "    client = app.test_client()\n"
         "    r = client.get('/go?to=https://example.org/x')\n"
         "    assert r.status_code == 302 and r.headers['Location'] == 'https://example.org/x'\n"
         "    assert client.get('/go?to=https://evil.test').data == b'Invalid target'\n"
         "    with client.session_transaction() as sess:\n"
         "        sess['user'] = 'ann'\n"
         "    assert client.get('/me').json == {'user': 'ann'}\n"
         "    app.config['LOCKED'] = True\n"
         "    with app.test_client() as c2:\n"
         "        r = c2.get('/me')\n"
         "        assert r.status_code == 403 and r.get_json()['error'] == 'locked'\n"
         "    assert isinstance(r, flask.Response)\n")


def test_a_flask_app_is_judged_from_outside(sandbox):
    tests = "import flask\n" + TESTS
    plan = plan_verdict(tests, APP, "go")
    assert plan.isolation == SEPARATE and plan.code_names == ("app",)
    res = sandbox.run_sync(TestJob(code=APP, tests=tests, entry_point="go", test_names=["check"],
                                   site_packages=True, code_names=plan.code_names))
    assert res.passed, res.failure_messages()
    assert res.isolation["verdict_isolation"] == "separate"


# A test that builds its expected answer with a Flask helper needing the application context its
# `with app.test_client()` block keeps open in the code's process: that helper is the code's own.
ERRORS = ("from flask import Flask, jsonify\n"
          "app = Flask(__name__)\n"
          "@app.route('/boom')\n"
          "def boom():\n"
          "    return jsonify({'error': 'hidden'}), 500\n")
ERRORS_TESTS = ("def check(candidate):\n"
                "    with app.test_client() as client:\n"
                "        r = client.get('/boom')\n"
                "        assert r.status_code == 500\n"
                "        assert r.data.decode() == jsonify({'error': 'hidden'}).get_data(as_text=True)\n")


def test_flask_helpers_needing_the_codes_context_are_read_from_the_code(sandbox):
    plan = plan_verdict(ERRORS_TESTS, ERRORS, "boom")
    assert plan.isolation == SEPARATE and plan.code_names == ("app", "jsonify") and plan.imports == ()
    res = sandbox.run_sync(TestJob(code=ERRORS, tests=ERRORS_TESTS, entry_point="boom", test_names=["check"],
                                   site_packages=True, code_names=plan.code_names))
    assert res.passed, res.failure_messages()
    assert res.isolation["verdict_isolation"] == "separate"
    leaky = ERRORS.replace("jsonify({'error': 'hidden'}), 500", "'Traceback: secret', 500")
    res = sandbox.run_sync(TestJob(code=leaky, tests=ERRORS_TESTS, entry_point="boom", test_names=["check"],
                                   site_packages=True, code_names=plan.code_names))
    assert not res.passed
    # Without the code's `app`, a test's own helper stays the test's own import.
    assert plan_verdict("from flask import Flask\ndef check(candidate):\n    assert jsonify(1)\n", ERRORS,
                        "boom").imports == ("from flask import jsonify",)
