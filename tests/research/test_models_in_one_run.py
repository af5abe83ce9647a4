import json
import sqlite3

from tests.helpers import randori


def test_two_models_and_two_defenses_in_one_command_make_four_row_groups(tmp_path):
    r = randori("run", "-s", "banking", "-u", "user_task_2", "-i", "injection_task_0", "-i", "injection_task_1",
                "-m", "scripted/gullible", "-m", "scripted/oracle", "-d", "none", "-d", "tool_filter",
                "--results", str(tmp_path))
    assert r.returncode == 0, r.stderr
    # Per model and defense: 1 benign + 2 injection-only + 2 attacked cases.
    assert "20 cases planned" in r.stderr
    rows = json.loads(randori("report", "-r", str(tmp_path), "-f", "json").stdout)["rows"]
    groups = {(row["model"], row["defense"]) for row in rows}
    assert groups == {("scripted/gullible", "none"), ("scripted/gullible", "tool_filter"),
                      ("scripted/oracle", "none"), ("scripted/oracle", "tool_filter")}
    by = {(row["model"], row["defense"]): row for row in rows}
    # Each model ran its own cases: the oracle never follows an injection, the gullible agent does.
    assert by[("scripted/oracle", "none")]["attack_success"]["successes"] == 0
    assert by[("scripted/gullible", "none")]["attack_success"]["successes"] == 2
    assert all(row["cases"] == 5 for row in rows)
    [config] = [json.loads(c) for (c,) in sqlite3.connect(tmp_path / "randori.sqlite").execute(
        "SELECT config FROM runs")]
    assert config["models"] == ["scripted/gullible", "scripted/oracle"]
    # Every run ends by saying where to look next, with its own results directory.
    assert f"randori view -r {tmp_path}" in r.stderr and "--html" in r.stderr


def test_a_model_named_twice_runs_once(tmp_path):
    r = randori("run", "-s", "banking", "-u", "user_task_2", "-i", "injection_task_0", "-m", "scripted/oracle",
                "-m", "scripted/oracle", "--results", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "3 cases planned" in r.stderr  # benign, injection task alone, attacked


def test_an_external_agent_takes_at_most_one_model(tmp_path):
    r = randori("run", "-s", "banking", "--agent", "tests.fakes.replay:oracle_agent", "-m", "scripted/oracle",
                "-m", "scripted/gullible", "--results", str(tmp_path))
    assert r.returncode == 2
    [line] = [ln for ln in r.stderr.splitlines() if ln.startswith("randori: error:")]
    assert "give at most one --model" in line
