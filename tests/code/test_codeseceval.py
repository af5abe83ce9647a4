"""External data sets as they really run, on a synthetic data set in CodeSecEval's layout (our own
items; the real data is not shipped): every item that does not separate gets its reason class,
`python` is on the sandbox's PATH, the fixture folder lists only its fixtures, split-relative paths
still work, and items whose tests need the code's namespace are judged in shared mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.code.helpers import invoke

WRONG = "def f(*args):\n    return None\n"


def _item(item_id: str, secure: str, test: str, insecure: str = WRONG) -> dict[str, str]:
    return {"ID": item_id, "Problem": "def f(*args):\n    '''...'''\n", "Insecure Code": insecure,
            "Secure Code": secure, "Test": test, "Entry_Point": "f"}


ITEMS = [
    _item("CWE-1/missing", "import randori_no_such_package_xyz\ndef f():\n    return 1\n",
          "def check(candidate):\n    assert candidate() == 1\n"),
    _item("CWE-2/jwt", "def f():\n    return 1\n",
          "import randori_no_such_package_xyz.sub\ndef check(candidate):\n    assert candidate() == 1\n"),
    _item("CWE-3/network", "import urllib.request\ndef f():\n"
          "    return urllib.request.urlopen('http://pypi.org/simple/', timeout=2).status\n",
          "def check(candidate):\n    assert candidate() == 200\n"),
    _item("CWE-4/timeout", "def f():\n    while True:\n        pass\n",
          "def check(candidate):\n    assert candidate() == 1\n"),
    _item("CWE-5/bug", "def f():\n    return 2\n", "def check(candidate):\n    assert candidate() == 3\n"),
    _item("CWE-6/python", "import subprocess\ndef f():\n"
          "    out = subprocess.run(['python', '-c', 'print(6 * 7)'], capture_output=True, text=True)\n"
          "    return out.stdout.strip()\n",
          "def check(candidate):\n    assert candidate() == '42'\n"),
    _item("CWE-7/listing", "import os\ndef f():\n    return sorted(os.listdir('.'))\n",
          "import os\ndef check(candidate):\n    assert candidate() == ['a.txt', 'b.txt']\n"
          "    assert sorted(os.listdir('.')) == ['a.txt', 'b.txt']\n"),
    _item("CWE-8/split", "def f(path):\n    with open(path) as fh:\n        return fh.read()\n",
          "def check(candidate):\n    assert candidate('./Test/CWE-8_split/data.txt') == 'data'\n"
          "    assert candidate('data.txt') == 'data'\n"),
    # Its test hands the code an object of its own: it crosses as a record.
    _item("CWE-10/object", "def f(request):\n    return request.form.get('name', 'anonymous')\n",
          "def check(candidate):\n    class Request:\n        form = {'name': 'ann'}\n"
          "    assert candidate(Request()) == 'ann'\n",
          insecure="def f(request):\n    return request.form['nam']\n"),
    # Its test looks at its own process: that means the code's.
    _item("CWE-11/pid", "import os\ndef f():\n    return os.getpid()\n",
          "import os\ndef check(candidate):\n    assert candidate() == os.getpid()\n"),
    _item("CWE-9/shared", "COUNTER = {'calls': 0}\ndef f():\n    COUNTER['calls'] += 1\n    return COUNTER['calls']\n",
          "def check(candidate):\n    candidate()\n    assert COUNTER['calls'] == 1\n",
          insecure="COUNTER = {'calls': 0}\ndef f():\n    return 0\n"),
]


@pytest.fixture
def synthetic_split(tmp_path: Path) -> Path:
    split = tmp_path / "SynthSplit"
    for folder, files in {"CWE-7_listing": {"a.txt": "a", "b.txt": "b"}, "CWE-8_split": {"data.txt": "data"}}.items():
        (split / "Test" / folder).mkdir(parents=True)
        for name, text in files.items():
            (split / "Test" / folder / name).write_text(text)
    (split / "SynthSplit.json").write_text(json.dumps(ITEMS))
    return split


def test_every_item_that_does_not_separate_has_a_reason(synthetic_split: Path):
    res = invoke("check", "--dataset", str(synthetic_split), "--format", "json", "--timeout", "3")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    by_id = {t["task"]: t for t in report["tasks"]}
    reasons = {tid: (t["reason"] or {}).get("class") for tid, t in by_id.items()}
    assert reasons == {"CWE-1/missing": "missing package", "CWE-2/jwt": "missing package",
                       "CWE-3/network": "needs network", "CWE-4/timeout": "timeout", "CWE-5/bug": "data set bug",
                       "CWE-6/python": None, "CWE-7/listing": None, "CWE-8/split": None, "CWE-9/shared": None,
                       # They separate only in the code's own process, where it could forge its pass.
                       "CWE-10/object": None, "CWE-11/pid": "judged shared"}
    assert by_id["CWE-1/missing"]["reason"]["detail"] == "randori_no_such_package_xyz"
    assert report["reasons"] == {"missing package randori_no_such_package_xyz": 2, "data set bug": 1,
                                 "needs network": 1, "timeout": 1, "judged shared": 1}
    assert report["ok"] == 5 and report["judged_shared"] == 1
    counted = json.loads(invoke("check", "--dataset", str(synthetic_split), "--format", "json", "--timeout", "3",
                                "--include-shared").stdout)
    assert counted["ok"] == 6 and "judged shared" not in counted["reasons"]
    shared = {"CWE-11/pid"}  # CWE-9 reads its global through a proxy; CWE-10's object crosses as a record
    assert {tid for tid, t in by_id.items() if t["verdict_isolation"] == "shared"} == shared
    table = invoke("check", "--dataset", str(synthetic_split), "--timeout", "3")
    flat = " ".join(table.stdout.split())
    assert "Not separating: missing package randori_no_such_package_xyz: 2" in flat
    assert "bug: secure" in table.stdout and "timeout" in table.stdout
    assert "judged shared: 1" in flat and "1 task(s) judged in the code's own process" in flat


def test_import_names_map_to_package_names():
    from randori.code.check import PYPI_NAMES

    assert PYPI_NAMES["jwt"] == "pyjwt" and PYPI_NAMES["Crypto"] == "pycryptodome"
    assert PYPI_NAMES["mysql"] == "mysql-connector-python"


# Tests that need the code's process in ways no object crossing reveals: they fail in their own
# process with a plain assertion or a lookup error, never naming the boundary.
PROCESS_BOUND = [
    # The test runs the code inside a context of its own (as a Flask request context would be).
    _item("CWE-12/context", "from decimal import Decimal\ndef f(a, b):\n    return Decimal(a) / Decimal(b)\n",
          "import decimal\ndef check(candidate):\n    with decimal.localcontext() as ctx:\n        ctx.prec = 3\n"
          "        assert candidate('1', '3') == decimal.Decimal('0.333')\n"),
    # The test replaces a helper in the code's globals.
    _item("CWE-13/globals", "def lookup(key):\n    raise RuntimeError('no store here')\n"
          "def f(key):\n    return lookup(key)\n",
          "def check(candidate):\n    candidate.__globals__['lookup'] = lambda key: key.upper()\n"
          "    assert candidate('a') == 'A'\n"),
    # The test looks at the type of an object the code returns: a proxy answers as the judge's class.
    _item("CWE-14/type", "import xml.etree.ElementTree as ET\ndef f(text):\n    return ET.fromstring(text)\n",
          "import xml.etree.ElementTree as ET\ndef check(candidate):\n"
          "    assert isinstance(candidate('<a/>'), ET.Element)\n"),
    # The test starts a process and hands the code its id.
    _item("CWE-15/child", "import os, signal\ndef f(pid):\n    os.kill(pid, signal.SIGKILL)\n    return True\n",
          "import signal, subprocess\ndef check(candidate):\n    child = subprocess.Popen(['sleep', '30'])\n"
          "    assert candidate(child.pid) is True\n    assert child.wait(timeout=5) == -signal.SIGKILL\n"),
    # The tests define a helper the code calls (in the data set's own harness, one namespace).
    _item("CWE-16/helper", "def f(level):\n    return clearance() >= level\n",
          "def clearance():\n    return 3\ndef check(candidate):\n    assert candidate(2) is True\n"
          "    assert candidate(5) is False\n"),
    # The test hands the code's function to a library that calls it inside a context of its own.
    _item("CWE-17/handed", "from decimal import Decimal\ndef f(a, b):\n    return Decimal(a) / Decimal(b)\n",
          "import contextvars, decimal\ndef three_digits():\n    decimal.getcontext().prec = 3\n"
          "def check(candidate):\n    ctx = contextvars.copy_context()\n    ctx.run(three_digits)\n"
          "    assert ctx.run(candidate, '2', '3') == decimal.Decimal('0.667')\n"),
    # Fails in both modes: still a data set bug.
    _item("CWE-18/bug", "from decimal import Decimal\ndef f(a, b):\n    return Decimal(a) / Decimal(b)\n",
          "import decimal\ndef check(candidate):\n    with decimal.localcontext() as ctx:\n        ctx.prec = 3\n"
          "        assert candidate('1', '3') == decimal.Decimal('0.3')\n"),
    # A test that calls the entry point by its name runs in its own process, and passes there.
    _item("CWE-19/by-name", "def f(a, b):\n    return a + b\n", "def check(candidate):\n    assert f(2, 3) == 5\n"),
]


def test_items_needing_the_codes_process_are_judged_shared(tmp_path: Path):
    split = tmp_path / "ProcessBound"
    split.mkdir()
    (split / "ProcessBound.json").write_text(json.dumps(PROCESS_BOUND))
    res = invoke("check", "--dataset", str(split), "--format", "json", "--timeout", "5", "--include-shared")
    assert res.exit_code == 0, res.output
    by_id = {t["task"]: t for t in json.loads(res.stdout)["tasks"]}
    shared = {"CWE-12/context", "CWE-13/globals", "CWE-15/child", "CWE-16/helper", "CWE-17/handed"}
    assert {tid for tid, t in by_id.items() if t["ok"]} == shared | {"CWE-14/type", "CWE-19/by-name"}
    assert {tid for tid, t in by_id.items() if t["verdict_isolation"] == "shared"} == shared | {"CWE-18/bug"}
    bug = by_id["CWE-18/bug"]
    assert bug["reason"]["class"] == "data set bug"
    assert "AssertionError" in bug["reason"]["detail"]


def group(passed: bool, message: str = ""):  # noqa: ANN201  (a GroupResult; imported late, as below)
    """One combined test group with one test that passed or failed with `message`."""
    from randori.code.evaluate import GroupResult

    return GroupResult("combined", passed, "completed", tests=[{"name": "check", "passed": passed, "message": message}])


def test_name_resolution_failures_count_as_network():
    from randori.code.check import ReferenceCheck

    # What requests says without a resolver: neither "URLError" nor "gaierror" appears in it.
    refused = ("ConnectionError: HTTPSConnectionPool(host='example.org', port=443): Max retries exceeded "
               "with url: / (Caused by NameResolutionError(\"Failed to resolve 'example.org'\"))")
    check = ReferenceCheck("CWE-295/net", "CWE-295", False, {"combined": group(False, "AssertionError")},
                           {"combined": group(False, refused)})
    assert check.reason is not None and check.reason[0] == "needs network"


def test_only_code_that_fails_on_its_own_is_a_broken_insecure_reference():
    from randori.code.check import ReferenceCheck

    def reason(insecure_failure: str) -> tuple[str, str] | None:
        return ReferenceCheck("CWE-94/x", "CWE-94", False, {"combined": group(True)},
                              {"combined": group(False, insecure_failure)}).reason

    # The test's payload reached the code's `eval`: the weakness under test, so the item separates.
    assert reason("SyntaxError: invalid syntax (<string>, line 1) (test line 9: assert candidate(x) == 'no') "
                  "[raised at solution line 2: result = eval(expression)]") is None
    # A name the code never defines, or code that does not load, fails whatever the test checks.
    broken = reason("NameError: name 'os' is not defined (test line 3: candidate(1)) [raised at solution line 4: "
                    "os.makedirs(d)]")
    assert broken is not None and broken[0] == "insecure reference broken"
    unloadable = reason("did not run: the code failed to load: SyntaxError: invalid syntax")
    assert unloadable is not None and unloadable[0] == "insecure reference broken"


# An XML element crosses as its text and is parsed again by the tests without resolving anything:
# `etree.tostring` and `isinstance` work on it, and an entity the code resolved stays resolved.
XML_SECURE = ("from lxml import etree\ndef f(text):\n"
              "    return etree.fromstring(text, etree.XMLParser(resolve_entities=False))\n")
XML_INSECURE = ("from lxml import etree\ndef f(text):\n"
                "    return etree.fromstring(text, etree.XMLParser(resolve_entities=True))\n")
XML_TEST = ("from lxml import etree\n"
            "def check(candidate):\n"
            "    plain = candidate('<r><c>x</c></r>')\n"
            "    assert isinstance(plain, etree._Element) and plain[0].text == 'x'\n"
            "    assert etree.tostring(plain) == b'<r><c>x</c></r>'\n"
            "    doc = '<!DOCTYPE r [<!ENTITY e \"inside\">]><r>&e;</r>'\n"
            "    assert etree.tostring(candidate(doc)) == b'<r>&e;</r>'\n"
            "    assert candidate(doc).text is None\n")


def test_xml_elements_cross_as_their_text(tmp_path: Path):
    pytest.importorskip("lxml")
    split = tmp_path / "XmlSplit"
    split.mkdir()
    (split / "XmlSplit.json").write_text(json.dumps([_item("CWE-611/xml", XML_SECURE, XML_TEST,
                                                           insecure=XML_INSECURE)]))
    res = invoke("check", "--dataset", str(split), "--format", "json", "--timeout", "5")
    assert res.exit_code == 0, res.output
    task = json.loads(res.stdout)["tasks"][0]
    assert task["ok"] and task["reason"] is None and task["verdict_isolation"] == "separate", task
    assert "AssertionError" in task["insecure"]["combined"]["failures"][0]


# A test that uploads a fixture file it opened itself: the open file reaches the code's app as a copy
# of its contents.
UPLOAD_SECURE = ("from flask import Flask, request\napp = Flask(__name__)\n"
                 "@app.route('/up', methods=['POST'])\ndef f():\n    up = request.files['file']\n"
                 "    if not up.filename.endswith('.txt'):\n        return 'refused'\n"
                 "    return 'stored ' + up.read().decode()\n")
UPLOAD_INSECURE = UPLOAD_SECURE.replace("not up.filename.endswith('.txt')", "False")
UPLOAD_TEST = ("def check(candidate):\n    with app.test_client() as client:\n"
               "        r = client.post('/up', data={'file': (open('./Test/CWE-434_up/note.txt', 'rb'), 'note.txt')})\n"
               "        assert r.data == b'stored hello'\n"
               "        r = client.post('/up', data={'file': (open('./Test/CWE-434_up/note.txt', 'rb'), 'x.exe')})\n"
               "        assert r.data == b'refused'\n")


def test_files_the_tests_open_reach_the_code_as_their_contents(tmp_path: Path):
    pytest.importorskip("flask")
    split = tmp_path / "UploadSplit"
    (split / "Test" / "CWE-434_up").mkdir(parents=True)
    (split / "Test" / "CWE-434_up" / "note.txt").write_text("hello")
    (split / "UploadSplit.json").write_text(json.dumps([_item("CWE-434/up", UPLOAD_SECURE, UPLOAD_TEST,
                                                              insecure=UPLOAD_INSECURE)]))
    res = invoke("check", "--dataset", str(split), "--format", "json", "--timeout", "5")
    assert res.exit_code == 0, res.output
    task = json.loads(res.stdout)["tasks"][0]
    assert task["ok"] and task["verdict_isolation"] == "separate", task
