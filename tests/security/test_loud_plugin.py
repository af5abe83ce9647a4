"""A plugin that prints while it is imported cannot write into randori's output: its text becomes a
warning on stderr and `--format json` stays JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import randori
from tests.security.plugin_site import NOTES_DATA, notes_data, plugin_site
from tests.test_broken_plugins import SUITES

LOUD = '''
print("hello from a loud plugin \\x1b]0;title\\x07")
from randori.suites import get_suite

suite = get_suite("banking")
'''


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return plugin_site(tmp_path_factory.mktemp("site"), "loud-plugins",
                       "[randori.suites]\nloud = loud_plugin:suite\nmalformed = notes_plugin:malformed\n", {
                           "loud_plugin.py": LOUD,
                           "notes_plugin.py": textwrap.dedent(SUITES) + '\nmalformed = make("malformed", "bad_data")\n',
                           "bad_data/environment.yaml": "notes: [unclosed\n  - {note\n",
                           "bad_data/vectors.yaml": NOTES_DATA["vectors.yaml"]})


def test_suites_list_json_stays_json_and_the_plugin_text_is_a_warning(env):
    r = randori("suites", "list", "--format", "json", env=env)
    assert r.returncode == 0, r.stderr
    names = {s["name"] if isinstance(s, dict) else s for s in json.loads(r.stdout)}
    assert "loud" in names or "banking" in names
    assert "hello from a loud plugin" not in r.stdout
    warning = [ln for ln in r.stderr.splitlines() if "printed while loading" in ln]
    assert warning and "'loud'" in warning[0] and "\x1b" not in r.stderr


def test_report_json_stays_json_with_a_loud_plugin_installed(env, tmp_path):
    results = tmp_path / "results"
    r = randori("run", "-s", "banking", "--no-attack", "-m", "scripted/gullible", "-r", str(results), env=env)
    assert r.returncode == 0, r.stderr
    rep = randori("report", "-r", str(results), "-f", "json", env=env)
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout)
    assert "hello from a loud plugin" not in rep.stdout
    # The store holds banking only: the report imports no other suite plugin.
    assert "printed while loading" not in rep.stderr, rep.stderr


def test_a_suite_with_a_malformed_data_file_is_a_warning_naming_the_file(env):
    r = randori("suites", "list", env=env)
    assert r.returncode == 0, r.stderr
    warning = [ln for ln in r.stderr.splitlines() if ln.startswith("randori: warning:") and "malformed" in ln]
    assert warning and "environment.yaml" in warning[0]
    assert "banking" in r.stdout and "malformed" not in r.stdout


TATTLER = '''
import os
import sys

with open(os.environ["TATTLER_MARK"], "a") as mark:
    mark.write(" ".join(sys.argv) + "\\n")
print("hello from the tattler plugin")
'''


@pytest.fixture(scope="module")
def tattler(tmp_path_factory):
    """A suite plugin (with an attack, a defense and a model provider beside it) that prints on import
    and notes in a file every process that imports it; and two stores holding results of its suite."""
    root = tmp_path_factory.mktemp("tattler")
    mark = root / "imported-by"
    env = plugin_site(root, "tattler", "[randori.suites]\ntattler = tattler_plugin:tattler\n\n"
                      "[randori.attacks]\ntattle = tattler_plugin:Attack\n\n"
                      "[randori.defenses]\ntattle = tattler_plugin:Explodes\n\n"
                      "[randori.models]\ntattle = tattler_plugin:Model\n",
                      {"tattler_plugin.py": TATTLER + textwrap.dedent(SUITES) + '\ntattler = make("tattler", "data")\n',
                       **notes_data("data")})
    env["TATTLER_MARK"] = str(mark)
    stores = [root / "a", root / "b"]
    for store in stores:
        r = randori("run", "-s", "tattler", "-m", "scripted/gullible", "-r", str(store), env=env)
        assert r.returncode == 0, r.stderr
    assert "run" in mark.read_text()  # a run imports it, as it must
    mark.unlink()
    return env, stores, mark


VIEW = '''
import re
import sys

from starlette.testclient import TestClient

from randori.viewer.app import create_app

with TestClient(create_app(sys.argv[1]), base_url="http://127.0.0.1") as client:
    page = client.get("/cases?view=list").text
    for key in sorted(set(re.findall(r'href="/case/([0-9a-f]+)', page))):
        print(client.get(f"/case/{key}").text)
'''


def test_commands_that_read_results_never_import_a_plugin(tattler, tmp_path):
    env, (a, b), mark = tattler
    reads = [("report", "-r", str(a), "-f", "json"), ("report", "-r", str(a), "-f", "csv"), ("report", "-r", str(a)),
             ("report", "-r", str(a), "--html", str(tmp_path / "r.html")), ("compare", "-r", str(a), "-r", str(b)),
             ("export", "-f", "eee", "-r", str(a), "-o", str(tmp_path / "eee"))]
    for args in reads:
        r = randori(*args, env=env)
        assert r.returncode == 0, (args, r.stderr)
        assert "tattler plugin" not in r.stdout + r.stderr, args
    rep = randori("report", "-r", str(a), "-f", "json", env=env)
    assert {row["suite"] for row in json.loads(rep.stdout)["rows"]} >= {"tattler"}  # its results are reported
    assert json.loads(rep.stdout)["excluded_old_version_cases"] == 0
    pytest.importorskip("starlette")
    view = subprocess.run([sys.executable, "-c", VIEW, str(a)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)
    assert view.returncode == 0, view.stderr
    assert "Say hello." in view.stdout  # the goal, from the run's record, not from the plugin
    assert not mark.exists(), mark.read_text()


def test_a_plugin_suites_current_version_is_that_of_its_latest_results(monkeypatch):
    import randori.suites
    from randori.report.versions import current_rows

    monkeypatch.setattr(randori.suites, "is_plugin", lambda name: name == "notes")
    rows = [{"suite": "notes", "suite_version": "0.1", "created_at": 1.0},
            {"suite": "notes", "suite_version": "0.2", "created_at": 2.0},
            {"suite": "notes", "suite_version": "0.1", "created_at": 1.5},
            {"suite": "agentdojo:banking", "suite_version": "v1", "created_at": 3.0},
            {"suite": "agentdojo:banking", "suite_version": "v1.2", "created_at": 1.0}]
    kept, dropped = current_rows(rows)
    assert [(r["suite"], r["suite_version"]) for r in kept] == [
        ("notes", "0.2"), ("agentdojo:banking", "v1"), ("agentdojo:banking", "v1.2")]
    assert dropped == 2
