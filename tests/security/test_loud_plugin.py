"""A plugin that prints while it is imported cannot write into randori's output: its text becomes a
warning on stderr and `--format json` stays JSON."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from tests.helpers import randori
from tests.test_broken_plugins import SUITES

LOUD = '''
print("hello from a loud plugin \\x1b]0;title\\x07")
from randori.suites import get_suite

suite = get_suite("banking")
'''


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    (root / "loud_plugin.py").write_text(LOUD)
    (root / "notes_plugin.py").write_text(textwrap.dedent(SUITES) + '\nmalformed = make("malformed", "bad_data")\n')
    (root / "bad_data").mkdir()
    (root / "bad_data" / "environment.yaml").write_text("notes: [unclosed\n  - {note\n")
    (root / "bad_data" / "vectors.yaml").write_text("note:\n  description: a note\n  default: hi\n")
    info = root / "loud_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: loud-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[randori.suites]\nloud = loud_plugin:suite\nmalformed = notes_plugin:malformed\n")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}


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
