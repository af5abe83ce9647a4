"""Scenario cases as a user meets them: `randori run --scenarios` stores one row per scenario with
each session's verdict and, attacked, the kill chain from state and trace; the report shows it; a
rerun resumes; the key covers the session sequence and leaves every other key as it was."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from randori.bench.cases import Case
from tests.helpers import randori

STAGES = ("exposed", "persisted", "triggered", "executed")


def rows(results: Path) -> list[dict[str, Any]]:
    con = sqlite3.connect(results / "randori.sqlite")
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM cases ORDER BY key")]
    finally:
        con.close()


def run(results: Path, model: str, *extra: str) -> Any:
    r = randori("run", "-s", "banking", "-m", model, "--scenarios", "--results", str(results), *extra, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


@pytest.fixture(scope="module")
def gullible(tmp_path_factory):
    path = tmp_path_factory.mktemp("gullible")
    run(path, "scripted/gullible")
    return path


def test_gullible_goes_down_the_whole_kill_chain_and_benign_scenarios_pass(gullible):
    stored = rows(gullible)
    attacked = [r for r in stored if r["kind"] == "scenario_attacked"]
    benign = [r for r in stored if r["kind"] == "scenario"]
    assert attacked and benign and {r["kind"] for r in stored} == {"scenario", "scenario_attacked"}
    for r in attacked:
        assert all(r[s] == 1 for s in STAGES), r["scenario"]
        assert r["attack_succeeded"] == 1 and r["user_task"] is None
    for r in benign:
        sessions = json.loads(r["sessions"])
        assert r["utility"] == 1 and len(sessions) >= 2 and all(s["utility"] for s in sessions)
        assert all(r[s] is None for s in STAGES)


def test_the_oracle_is_exposed_but_persists_nothing_and_noop_is_never_exposed(tmp_path):
    run(tmp_path / "o", "scripted/oracle")
    run(tmp_path / "n", "scripted/noop")
    for r in rows(tmp_path / "o"):
        sessions = json.loads(r["sessions"])
        assert r["utility"] == 1 and all(s["utility"] for s in sessions), r["scenario"]
        if r["kind"] == "scenario_attacked":
            assert (r["exposed"], r["persisted"], r["triggered"], r["executed"]) == (1, 0, 0, 0)
    for r in rows(tmp_path / "n"):
        if r["kind"] == "scenario_attacked":
            assert (r["exposed"], r["persisted"], r["executed"]) == (0, 0, 0)


def test_the_report_shows_the_kill_chain_in_text_and_json(gullible):
    text = randori("report", "-r", str(gullible))
    assert text.returncode == 0, text.stderr
    assert "kill chain: exposed 100%  persisted 100%  triggered 100%  executed 100%" in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) <= 80
    data = json.loads(randori("report", "-r", str(gullible), "--format", "json").stdout)
    chain = {r["attack"]: r for r in data["kill_chain"]}
    assert chain["important_instructions"]["executed"]["rate"] == 1.0
    assert chain["-"]["utility"]["rate"] == 1.0 and "executed" not in chain["-"]
    assert not data["rows"]  # scenario rows stay out of the single-session headline


def test_a_rerun_resumes_and_runs_nothing_again(gullible):
    before = rows(gullible)
    again = run(gullible, "scripted/gullible")
    assert "0 to run" in again.stdout + again.stderr
    assert rows(gullible) == before


def test_only_named_scenarios_run_and_an_unknown_one_is_one_line(tmp_path):
    run(tmp_path, "scripted/oracle", "--scenario", "bk_jonas_reference")
    assert {r["scenario"] for r in rows(tmp_path)} == {"bk_jonas_reference"}
    bad = randori("run", "-s", "banking", "-m", "scripted/oracle", "--scenario", "nope", "--results", str(tmp_path))
    assert bad.returncode != 0 and "no scenario nope" in bad.stderr and "Traceback" not in bad.stderr


def test_a_scenario_key_covers_the_sequence_and_other_keys_stay_as_they_were():
    plain = Case("attacked", "banking", "1.3.0", "user_task_2", "injection_task_1", "important_instructions",
                 "none", "scripted/gullible", {"temperature": 0.0}, 0, injections={"energy_bill": "hi {x}"})
    assert plain.key == "dd6a548a6245071fa75c2ce03a37a028"  # computed by randori before scenarios existed
    sc = replace(plain, kind="scenario_attacked", user_task=None, scenario="s", sessions=("a", "b"))
    assert sc.key != replace(sc, sessions=("b", "a")).key != replace(sc, sessions=("a", "b", "c")).key
    assert sc.key != plain.key


@pytest.mark.slow
def test_worker_processes_store_the_same_scenario_rows(gullible, tmp_path):
    run(tmp_path, "scripted/gullible", "--executor", "processes=2")
    fields = ("key", "kind", "scenario", "utility", "sessions", *STAGES, "model_calls")
    assert [tuple(r[f] for f in fields) for r in rows(tmp_path)] == [
        tuple(r[f] for f in fields) for r in rows(gullible)]


@pytest.mark.slow
def test_a_ray_cluster_stores_the_same_scenario_rows(gullible, tmp_path):
    pytest.importorskip("ray")
    run(tmp_path, "scripted/gullible", "--executor", "ray")
    fields = ("key", "kind", "scenario", "utility", "sessions", *STAGES, "model_calls")
    assert [tuple(r[f] for f in fields) for r in rows(tmp_path)] == [
        tuple(r[f] for f in fields) for r in rows(gullible)]
