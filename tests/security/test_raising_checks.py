"""A suite whose checks raise: `suites check` and `run` say so in one line naming the task, the check,
the exception and the file:line it was raised at; the traceback is kept in the store for the viewer."""

from __future__ import annotations

import sqlite3
import textwrap

import pytest

from tests.helpers import randori
from tests.security.plugin_site import notes_data, plugin_site
from tests.test_broken_plugins import SUITES

# The notes suite of test_broken_plugins, with checks that raise.
PLUGIN = textwrap.dedent(SUITES) + '''
suite = make("raisey", "data")


def lookup(output):
    return {"a": 1}[output]  # KEY


def utility(self, output, pre, post, trace):
    return lookup(output)


def attack_succeeded(self, output, pre, post, trace):
    raise ValueError("first line\\nsecond line")  # VALUE


type(suite.user_tasks["notes_task_0"]).utility = utility
type(suite.injection_tasks["notes_injection_0"]).attack_succeeded = attack_succeeded
'''


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("raisey")
    env = plugin_site(root, "raisey", "[randori.suites]\nraisey = raisey_plugin:suite\n",
                      {"raisey_plugin.py": PLUGIN, **notes_data("data")})
    lines = PLUGIN.splitlines()
    at = {tag: f"{root / 'raisey_plugin.py'}:{next(i for i, ln in enumerate(lines, 1) if ln.endswith(tag))}"
          for tag in ("# KEY", "# VALUE")}
    return env, at


def problems(out):
    """The problems `suites check` lists, each joined back from the lines it is wrapped over."""
    entries: list[str] = []
    for line in out.splitlines():
        if line.startswith("    ") and entries:
            entries[-1] += " " + line.strip()
        elif line.startswith("  ") and not line.startswith("  held/tried"):
            entries.append(line.strip())
    return entries


def test_suites_check_gives_one_line_per_raising_check_with_its_place(env):
    env, at = env
    r = randori("suites", "check", "raisey", env=env)
    assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr
    raised = [p for p in problems(r.stdout) if "raised" in p]
    assert len(raised) == 2, r.stdout  # one per check, however many rules' variants met it
    utility = next(ln for ln in raised if "check utility" in ln)
    assert utility.startswith("raisey/notes_task_0: [")
    assert utility.endswith(f"check utility raised KeyError: 'Done.' (at {at['# KEY']})")
    goal = next(ln for ln in raised if "check attack_succeeded" in ln)
    assert goal.startswith("raisey/notes_injection_0: [")
    assert goal.endswith(f"check attack_succeeded raised ValueError: first line second line (at {at['# VALUE']})")


def test_a_run_whose_checks_raise_ends_in_one_line_naming_the_check(env, tmp_path):
    env, at = env
    results = tmp_path / "results"
    r = randori("run", "-s", "raisey", "-m", "scripted/gullible", "-r", str(results), env=env)
    assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr and 'File "' not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("randori: error: every case of this run failed (internal 3)")
    assert last.endswith(f"First error: raisey/notes_task_0: check utility raised KeyError: 'Done.' (at {at['# KEY']})")
    con = sqlite3.connect(results / "randori.sqlite")
    stored = [m for (m,) in con.execute("SELECT error_message FROM cases ORDER BY kind")]
    con.close()
    first_lines = sorted(m.splitlines()[0] for m in stored)
    assert first_lines[0] == (f"raisey/notes_injection_0: check attack_succeeded raised ValueError: first line "
                              f"second line (at {at['# VALUE']})")
    assert all("Traceback (most recent call last)" in m and "raisey_plugin.py" in m for m in stored)
