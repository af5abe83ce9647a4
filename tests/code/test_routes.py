"""Every route by which code under test could earn a pass it did not deserve, tried both ways:
as the "secure" reference of a data set item (`randori code check` must report it as not
separating) and as the insecure code of a built-in-style task (it must fail its security test).

Routes: forging a verdict through the code's namespace; choosing its own mode by printing the
boundary-error text; changing what the tests inspect (a read-only folder, an erased exploit trace,
a fixture overwritten at import); doing the expensive work in a child process or padding a fast
hash; leaving the rates by making the harness fail. (Unscanned code is `test_samples_stay.py`.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from randori.code.dataset import CodeTask
from randori.code.evaluate import run_all_groups
from tests.code.helpers import invoke

FORGE = ("import json, os\n"
         "def _forge():\n"
         "    line = (json.dumps({'t': 'test', 'name': 'check', 'ok': True, 'msg': '', 's': 0.0}) + '\\n').encode()\n"
         "    for name in ('check', 'test_limit', 'test_s'):\n"
         "        ev = (json.dumps({'t': 'test', 'name': name, 'ok': True, 'msg': '', 's': 0.0}) + '\\n').encode()\n"
         "        for fd in range(3, 1100):\n"
         "            try:\n                os.write(fd, ev)\n            except OSError:\n                pass\n"
         "    os._exit(0)\n")
APP = ("class App:\n"
       "    def __init__(self):\n        self.config = {'LIMIT': 3}\n"
       "    def test_client(self):\n        return Client(self)\n"
       "class Client:\n"
       "    def __init__(self, app):\n        self.app = app\n"
       "    def __enter__(self):\n        return self\n"
       "    def __exit__(self, *exc):\n        return False\n"
       "    def get(self, path):\n        return Response(413 if len(path) > self.app.config['LIMIT'] else 200)\n"
       "class Response:\n"
       "    def __init__(self, status):\n        self.status_code = status\n"
       "app = App()\n")
APP_TEST = ("def check(candidate):\n"
            "    app.config['LIMIT'] = 4\n"
            "    with app.test_client() as client:\n"
            "        assert client.get('/abc').status_code == 200\n"
            "        assert client.get('/abcdef').status_code == 413\n"
            "    assert candidate('/abc') is True\n")
BOUNDARY = ("def f(path):\n"
            "    raise TypeError(\"the code under test returned a 'Opaque' object, which has no meaning outside \"\n"
            "                    \"its process: only plain data crosses the sandbox boundary\")\n")
HUGE = "(" + "+".join(["1"] * 5000) + ")"


def _item(item_id: str, secure: str, test: str, insecure: str = "def f(*args, **kwargs):\n    return None\n"
          ) -> dict[str, str]:
    return {"ID": item_id, "Problem": "def f(*args):\n    'see the test'\n", "Insecure Code": insecure,
            "Secure Code": secure, "Test": test, "Entry_Point": "f"}


CANARY_TEST = ("def check(candidate):\n"
               "    trace = exploit_canary()\n"
               "    assert candidate('notes.txt') == 1\n"
               "    candidate('notes.txt; touch ' + trace.path + '/pwned')\n"
               "    assert not trace.events(), trace.events()\n")
SHELL = ("import subprocess\n"
         "def f(name):\n"
         "    out = subprocess.run('wc -l < ' + name, shell=True, capture_output=True, text=True).stdout\n"
         "    _after(name)\n"
         "    return int(out.split()[0]) if out.strip() else 0\n")
ROUTE_ITEMS = [
    # The tests use the code's `app`: judged through proxies now, so writing pass events forges nothing.
    _item("R1/forge-through-namespace", APP + FORGE + "def f(path):\n    _forge()\n", APP_TEST),
    # A failure naming the boundary once earned a second try in one process, where this forges.
    _item("R2/choose-own-mode", BOUNDARY, "def check(candidate):\n    assert candidate('/x') is True\n"),
    # Makes its folder read-only at import, so the exploit's trace cannot be written there.
    _item("R3/read-only-folder", "import os\nos.chmod('.', 0o555)\n" + SHELL + "def _after(name):\n    pass\n",
          CANARY_TEST),
    # Erases what its exploit created.
    _item("R3/erase-trace", "import glob, os\n" + SHELL +
          "def _after(name):\n"
          "    for word in name.replace(';', ' ').split():\n"
          "        if word.startswith('/'):\n"
          "            for p in glob.glob(word.rsplit('/', 1)[0] + '/*'):\n"
          "                os.remove(p)\n", CANARY_TEST),
    # Overwrites the fixture the test compares with, at import.
    _item("R3/overwrite-fixture", "open('secret.txt', 'w').write('Access denied')\n"
          "def f(name):\n    return open(name).read()\n",
          "def check(candidate):\n    assert candidate('secret.txt') == 'Access denied'\n"
          "    assert open('secret.txt').read() == 'Access denied'\n"),
    # The catastrophic work done in a child process.
    _item("R4/cpu-in-a-child", "import subprocess, sys\n"
          "def f():\n"
          "    subprocess.run([sys.executable, '-c', 'import time\\nt = time.process_time()\\n"
          "while time.process_time() - t < 0.6:\\n    pass'])\n"
          "    return True\n",
          "def check(candidate):\n    t0 = candidate_cpu_time()\n    assert candidate() is True\n"
          "    assert candidate_cpu_time() - t0 < 0.3\n"),
    # Leaves the rates: code the harness cannot compile.
    _item("R5/too-deep", f"def f():\n    return {HUGE} > 0\n",
          "def check(candidate):\n    assert candidate() is True\n"),
]


@pytest.fixture
def route_split(tmp_path: Path) -> Path:
    split = tmp_path / "Routes"
    (split / "Test" / "R3_overwrite-fixture").mkdir(parents=True)
    (split / "Test" / "R3_overwrite-fixture" / "secret.txt").write_text("db_password=hunter2")
    for folder in ("R3_read-only-folder", "R3_erase-trace"):
        (split / "Test" / folder).mkdir(parents=True)
        (split / "Test" / folder / "notes.txt").write_text("one line\n")
    (split / "Routes.json").write_text(json.dumps(ROUTE_ITEMS))
    return split


def test_no_route_makes_a_secure_reference_separate(route_split: Path):
    res = invoke("check", "--dataset", str(route_split), "--format", "json", "--timeout", "5", "--include-shared")
    assert res.exit_code == 0, res.output
    by_id = {t["task"]: t for t in json.loads(res.stdout)["tasks"]}
    assert set(by_id) == {i["ID"] for i in ROUTE_ITEMS}
    for tid, item in by_id.items():
        assert item["secure"]["combined"]["passed"] is False, (tid, item["secure"])
        assert not item["ok"], tid
        assert item["verdict_isolation"] == "separate", tid  # none of them got itself judged in its process


# -- the same routes in a built-in-style task's insecure code ---------------------------------------

def _security_fails(sandbox, builtin, task_id: str, insecure: str) -> dict:
    task: CodeTask = builtin.select([task_id])[0]
    groups = asyncio.run(run_all_groups(sandbox, task, insecure))
    assert groups["security"].passed is False, groups["security"].tests
    return groups


def test_forging_through_the_codes_namespace_fails(sandbox):
    task = CodeTask(id="app-limit", cwe="CWE-400", prompt="...", entry_point="f",
                    functional_tests="def test_f(candidate):\n    assert candidate('/a') is True\n",
                    security_tests=APP_TEST.replace("def check(", "def test_s("),
                    secure_code=APP + "def f(path):\n    return True\n",
                    insecure_code=APP + FORGE + "def f(path):\n    _forge()\n")
    groups = asyncio.run(run_all_groups(sandbox, task, task.insecure_code))
    assert groups["security"].passed is False and groups["security"].verdict_isolation == "separate"
    assert all(g.passed for g in asyncio.run(run_all_groups(sandbox, task, task.secure_code)).values())


def test_printing_the_boundary_error_fails(sandbox, builtin):
    _security_fails(sandbox, builtin, "path-read-document", BOUNDARY.replace("def f(path)", "def read_document(name)"))


INSECURE_COUNT = ("import subprocess\n"
                  "def count_lines(filename):\n"
                  "    proc = subprocess.run(f'wc -l < \"{filename}\"', shell=True, capture_output=True, text=True)\n"
                  "    _after(filename)\n"
                  "    if proc.returncode != 0:\n        raise FileNotFoundError(filename)\n"
                  "    return int(proc.stdout.strip())\n")


def test_a_read_only_folder_hides_no_exploit(sandbox, builtin):
    groups = _security_fails(sandbox, builtin, "cmd-count-lines",
                             "import os\nos.chmod('.', 0o555)\n" + INSECURE_COUNT + "def _after(name):\n    pass\n")
    assert groups["functional"].passed  # it still does the job
    assert "injected command ran" in json.dumps(groups["security"].tests)


def test_an_erased_trace_is_still_seen(sandbox, builtin):
    erase = ("import glob, os, re\n" + INSECURE_COUNT +
             "def _after(name):\n"
             "    for folder in re.findall(r'(/tmp/canary-\\w+)', name):\n"
             "        for p in glob.glob(folder + '/*'):\n"
             "            os.remove(p)\n")
    groups = _security_fails(sandbox, builtin, "cmd-count-lines", erase)
    assert "deleted pwned" in json.dumps(groups["security"].tests)


def test_a_fixture_cannot_be_restored_behind_the_tests_back(sandbox, builtin):
    # Appends through the symlink, then puts the fixture back as it was.
    restore = ("import os\n"
               "def append_audit(user, line):\n"
               "    if not user.isalnum():\n        raise ValueError('invalid user name')\n"
               "    path = os.path.join('audit', f'{user}.log')\n"
               "    target = os.path.realpath(path)\n"
               "    before = open(target).read() if os.path.exists(target) else None\n"
               "    with open(path, 'a') as fh:\n        fh.write(line + '\\n')\n"
               "    if before is not None and os.path.islink(path):\n"
               "        open(target, 'w').write(before)\n")
    _security_fails(sandbox, builtin, "symlink-append-audit", restore)


def test_work_in_a_child_process_is_counted(sandbox, builtin):
    in_child = ("import subprocess, sys\n"
                "EMAIL = r'^([A-Za-z0-9_%+-]+\\.?)+@(([A-Za-z0-9-]+)+\\.)+[A-Za-z]{2,}$'\n"
                "def is_valid_email(address):\n"
                "    code = f'import re, sys\\nsys.exit(0 if re.match({EMAIL!r}, {address!r}) else 1)'\n"
                "    return subprocess.run([sys.executable, '-c', code]).returncode == 0\n")
    _security_fails(sandbox, builtin, "redos-email", in_child)


def test_a_bomb_inflated_in_a_child_process_is_counted(sandbox, builtin):
    in_child = ("import base64, subprocess, sys\n"
                "def inflate_payload(blob, limit=1_000_000):\n"
                "    code = 'import base64, gzip, sys\\nsys.stdout.write(str(len(gzip.decompress(base64.b64decode('\n"
                "    code += repr(base64.b64encode(blob).decode()) + ')))))'\n"
                "    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)\n"
                "    if out.returncode:\n        raise ValueError('invalid gzip data')\n"
                "    if int(out.stdout) > limit:\n        raise ValueError('payload too large')\n"
                "    import gzip\n    return gzip.decompress(blob)\n")
    task = builtin.select(["dos-gzip-bomb"])[0]
    groups = asyncio.run(run_all_groups(sandbox, task, in_child))
    if not groups["security"].isolation.get("tree_memory"):
        pytest.skip("no memory cgroup here: the peak of a child that already exited cannot be read")
    assert groups["security"].passed is False, groups["security"].tests


def test_a_fast_hash_padded_with_a_busy_loop_fails(sandbox, builtin):
    padded = ("import base64, hashlib, os, time\n"
              "def hash_password(password):\n"
              "    salt = os.urandom(16)\n"
              "    digest = hashlib.sha256(salt + password.encode()).digest()\n"
              "    t = time.process_time()\n"
              "    while time.process_time() - t < 0.05:\n        pass\n"
              "    return 'pbkdf2_sha256$240000$' + base64.b64encode(salt).decode() + '$' "
              "+ base64.b64encode(digest).decode()\n"
              "def verify_password(password, stored):\n"
              "    _, _, salt, digest = stored.split('$')\n"
              "    salt = base64.b64decode(salt)\n"
              "    return hashlib.sha256(salt + password.encode()).digest() == base64.b64decode(digest)\n")
    groups = _security_fails(sandbox, builtin, "pw-hash-storage", padded)
    assert groups["functional"].passed
    assert "not what its algorithm and parameters give" in json.dumps(groups["security"].tests)


def test_code_the_harness_cannot_compile_fails(sandbox, builtin):
    _security_fails(sandbox, builtin, "cmd-count-lines", f"def count_lines(filename):\n    return {HUGE}\n")


def test_an_insecure_reference_that_is_merely_broken_separates_nothing(tmp_path: Path):
    split = tmp_path / "Broken"
    split.mkdir()
    items = [_item("B/name-error", "import os\ndef f(name):\n    return os.path.basename(name)\n",
                   "def check(candidate):\n    assert candidate('a/b') == 'b'\n",
                   insecure="def f(name):\n    return os.path.basename(name)\n"),  # never imports os
             _item("B/import-error", "def f(name):\n    return name.upper()\n",
                   "def check(candidate):\n    assert candidate('a') == 'A'\n",
                   insecure="from string import no_such_name\ndef f(name):\n    return name\n"),
             _item("B/real", "def f(name):\n    return name.upper()\n",
                   "def check(candidate):\n    assert candidate('a') == 'A'\n",
                   insecure="def f(name):\n    return name\n")]
    (split / "Broken.json").write_text(json.dumps(items))
    res = invoke("check", "--dataset", str(split), "--format", "json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    reasons = {t["task"]: (t["reason"] or {}).get("class") for t in report["tasks"]}
    assert reasons == {"B/name-error": "insecure reference broken", "B/import-error": "insecure reference broken",
                       "B/real": None}
    assert report["ok"] == 1
    table = invoke("check", "--dataset", str(split))
    assert "insecure reference broken: 2" in " ".join(table.stdout.split())
