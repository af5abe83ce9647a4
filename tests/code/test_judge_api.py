"""`randori.sandbox.judge` (also `randori.code.judge`): the API other parts of randori use to run tests
and exploits against code."""

from __future__ import annotations

import asyncio

import pytest

from randori.code.judge import judge as documented_judge
from randori.sandbox.judge import NeedsSharedProcess, judge

APP = ("import subprocess\n"
       "class Service:\n"
       "    def __init__(self):\n        self.calls = 0\n"
       "    def lookup(self, host):\n"
       "        self.calls += 1\n"
       "        return subprocess.run('echo ' + host, shell=True, capture_output=True, text=True).stdout.strip()\n"
       "service = Service()\n"
       "def handle(host):\n    return service.lookup(host)\n")
EXPLOIT = ("def test_lookup_works(candidate):\n"
           "    assert candidate('example.org') == 'example.org'\n"
           "    assert service.calls == 1\n"
           "def test_no_command_injection(candidate):\n"
           "    canary = exploit_canary()\n"
           "    candidate('x; touch ' + canary.path + '/pwned')\n"
           "    assert not canary.events(), canary.events()\n")


def test_tests_and_exploits_against_code(sandbox):
    res = asyncio.run(judge(APP, EXPLOIT, entry_point="handle", sandbox=sandbox))
    assert [(o.name, o.passed) for o in res.outcomes] == [("test_lookup_works", True),
                                                          ("test_no_command_injection", False)]
    assert "created pwned" in res.outcomes[1].message
    assert res.isolation["verdict_isolation"] == "separate"
    fixed = APP.replace("'echo ' + host, shell=True", "['echo', host]")
    assert asyncio.run(judge(fixed, EXPLOIT, entry_point="handle", sandbox=sandbox)).passed


def test_tests_that_need_the_codes_process_are_refused(sandbox):
    tests = "import os\ndef test_pid(candidate):\n    assert candidate() == os.getpid()\n"
    with pytest.raises(NeedsSharedProcess, match="own process"):
        asyncio.run(judge("import os\ndef f():\n    return os.getpid()\n", tests, entry_point="f", sandbox=sandbox))
    res = asyncio.run(judge("import os\ndef f():\n    return os.getpid()\n", tests, entry_point="f",
                            sandbox=sandbox, allow_shared=True))
    assert res.isolation["verdict_isolation"] == "shared"


def test_the_documented_path_is_the_same_judge():
    assert documented_judge is judge
