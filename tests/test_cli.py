import json
import re
import sqlite3

import pytest

from tests.helpers import randori


@pytest.mark.parametrize("args, message", [
    (["run", "--suite", "nope"], "unknown suite 'nope'"),
    (["run", "--model", "foo/bar"], "unknown model provider 'foo'"),
    (["run", "--model", "gpt-4o"], "must be named provider/model"),
    (["run", "-s", "banking", "--user-task", "user_task_999"], "no user task user_task_999"),
    (["run", "-s", "banking", "--injection-task", "x"], "no injection task x"),
    (["run", "-s", "banking", "--attack", "nope"], "unknown attack 'nope'"),
    (["run", "-s", "banking", "--defense", "nope"], "unknown defense 'nope'"),
    (["run", "--model", "openai/gpt-4o-mini"], "OPENAI_API_KEY is not set"),
    (["report", "--results", "/nonexistent/dir"], "no results in /nonexistent/dir"),
])
def test_user_mistakes_exit_nonzero_with_one_line(args, message, tmp_path):
    r = randori(*args, "--results", str(tmp_path)) if args[0] == "run" else randori(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("randori: error:")]
    assert len(errors) == 1 and message in errors[0]


def test_default_run_uses_gullible_and_reports(tmp_path):
    r = randori("run", "-s", "banking", "-u", "user_task_2", "-u", "user_task_5", "--results", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "using scripted/gullible" in r.stderr
    assert "attack success" in r.stdout
    rep = randori("report", "--results", str(tmp_path), "--format", "json")
    rows = json.loads(rep.stdout)["rows"]
    [row] = rows
    assert row["model"] == "scripted/gullible" and row["attack"] == "important_instructions"
    assert row["suite_versions"] == ["banking@1.4.0"]
    assert row["benign_utility"]["n"] == 2 and row["benign_utility"]["rate"] == 1.0
    assert row["attack_success"]["n"] == 22 and row["attack_success"]["rate"] == 1.0
    assert row["injection_seen"]["rate"] == 1.0
    assert row["injection_task_utility"]["n"] == 11 and row["injection_task_utility"]["rate"] == 1.0
    assert row["cases"] == 2 + 11 + 22 and row["errors"] == 0


def test_rerun_resumes_and_changed_settings_are_new_cases(tmp_path):
    args = ("run", "-s", "banking", "-u", "user_task_0", "-m", "scripted/oracle", "--results", str(tmp_path))
    first = randori(*args)
    assert "23 cases planned, 0 already in" in first.stderr and "23 to run" in first.stderr
    second = randori(*args)
    assert "23 already in" in second.stderr and "0 to run" in second.stderr
    third = randori(*args, "--temperature", "0.7")
    assert "23 to run" in third.stderr
    n = sqlite3.connect(tmp_path / "randori.sqlite").execute("select count(*) from cases").fetchone()[0]
    assert n == 46


def test_oracle_full_utility_and_no_attack_success(tmp_path):
    r = randori("run", "-s", "banking", "-m", "scripted/oracle", "--results", str(tmp_path), "--format", "json")
    assert r.returncode == 2  # run has no --format; a wrong flag is a usage error, not a crash
    r = randori("run", "-s", "banking", "-m", "scripted/oracle", "--results", str(tmp_path))
    assert r.returncode == 0, r.stderr
    rows = json.loads(randori("report", "-r", str(tmp_path), "-f", "json").stdout)["rows"]
    [row] = rows
    assert row["benign_utility"]["rate"] == 1.0
    assert row["attack_success"]["rate"] == 0.0
    assert row["utility_under_attack"]["rate"] == 1.0


def test_suites_list_json_counts():
    rows = json.loads(randori("suites", "list", "--format", "json").stdout)
    banking = next(r for r in rows if r["name"] == "banking")
    assert set(banking) == {"name", "version", "tools", "user_tasks", "injection_tasks", "vectors", "attacked_cases"}
    assert banking["tools"] >= 12 and banking["user_tasks"] >= 20 and banking["injection_tasks"] >= 10
    assert banking["attacked_cases"] == banking["user_tasks"] * banking["injection_tasks"]


def test_suites_check_and_show():
    r = randori("suites", "check", "banking")
    assert r.returncode == 0 and "banking@1.4.0: ok" in r.stdout
    # Per rule, how many variants held of how many were tried, wrapped to the terminal.
    counts = dict((rule, (int(h), int(t))) for rule, h, t in re.findall(r"(\w+) (\d+)/(\d+)", r.stdout))
    assert counts["side_effects"][1] > 500 and counts["plausible"][1] > 100 and counts["phrasing"][1] > 50
    assert all(counts[rule][1] > 5 for rule in ("attribution", "negation", "free_args", "goal_forms"))
    assert all(h == t for h, t in counts.values())
    assert max(map(len, r.stdout.splitlines())) <= 100
    twice = randori("suites", "check", "banking", "banking")  # named twice: checked and printed once
    assert twice.returncode == 0 and twice.stdout == r.stdout
    show = randori("suites", "show", "banking")
    assert "user_task_3 [hard]" in show.stdout and "injection_task_0" in show.stdout
    assert "wrong answers it rejects: 12450.00" in show.stdout  # user_task_0: the savings balance


def test_help_explains_commands():
    r = randori("--help")
    for cmd in ("run", "report", "suites", "attacks", "defenses"):
        assert cmd in r.stdout
    r = randori("run", "--help")
    assert "--concurrency" in r.stdout and "RANDORI_MODEL" in r.stdout


def test_discriminative_keeps_only_pairs_the_undefended_agent_is_hijacked_in(tmp_path):
    # gullible is hijacked in every pair, wary in none: only gullible's pairs reach the defended run.
    tasks = ["-u", "user_task_1", "-u", "user_task_2", "-i", "injection_task_0", "-i", "injection_task_4"]
    r = randori("run", "-s", "banking", *tasks, "-m", "scripted/gullible", "-m", "scripted/wary", "-d", "detector",
                "--discriminative", "2", "-r", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "Kept 4 of 8 task pairs" in r.stderr
    con = sqlite3.connect(tmp_path / "randori.sqlite")
    counts = dict(((m, d), n) for m, d, n in con.execute(
        "select model, defense, count(*) from cases where kind = 'attacked' group by 1, 2"))
    # The screening (defense none, 2 repeats) is stored; the run proper keeps gullible's 4 pairs only.
    assert counts == {("scripted/gullible", "none"): 8, ("scripted/wary", "none"): 8,
                      ("scripted/gullible", "detector"): 4}
    [subset] = [json.loads(c)["discriminative"] for (c,) in con.execute("select config from runs")
                if "discriminative" in json.loads(c)]
    assert subset["name"] == "discriminative-2" and subset["repeats"] == 2 and subset["pairs_screened"] == 8
    assert {tuple(p) for p in subset["pairs"]} == {("scripted/gullible", "banking", u, i)
                                                   for u in ("user_task_1", "user_task_2")
                                                   for i in ("injection_task_0", "injection_task_4")}
