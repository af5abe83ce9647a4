"""Splits of user and injection tasks: pinned, deterministic, disjoint, and what `run --split` keeps."""

import json
import sqlite3
from types import SimpleNamespace

import pytest

from randori.errors import UserError
from randori.suites import get_suite, suite_names
from randori.tasks.splits import DEFAULT_SEED, SPLITS, check_split, split_ids, suite_splits
from tests.helpers import randori

TINY = SimpleNamespace(name="tiny", user_tasks={f"u{i}": None for i in range(10)},
                       injection_tasks={f"i{i}": None for i in range(4)})


def test_pinned_split_of_a_small_suite():
    # Computed once and pinned: a change of the hash, its key or the cut moves tasks between splits,
    # which would silently mix a model's training and held-out tasks across randori versions.
    s = suite_splits(TINY)
    assert dict(s.user) == {"train": ("u2", "u3", "u6", "u8", "u9"), "val": ("u1", "u4"),
                            "test": ("u0", "u5", "u7")}
    assert dict(s.injection) == {"train": ("i1", "i2"), "val": ("i0",), "test": ("i3",)}


def test_another_seed_cuts_other_splits_and_the_order_given_does_not_matter():
    ids = [f"t{i}" for i in range(20)]
    a = split_ids(ids, suite="x", axis="user")
    # Membership depends on the ids, not on the order they come in (each split lists them in that order).
    assert {k: set(v) for k, v in split_ids(list(reversed(ids)), suite="x", axis="user").items()} == {
        k: set(v) for k, v in a.items()}
    assert split_ids(ids, suite="x", axis="user", seed="other") != a
    assert split_ids(ids, suite="x", axis="injection") != a  # the axes are ranked apart


@pytest.mark.parametrize("n, sizes", [(0, (0, 0, 0)), (1, (1, 0, 0)), (2, (1, 0, 1)), (3, (1, 1, 1)),
                                      (4, (2, 1, 1)), (10, (5, 2, 3)), (22, (11, 4, 7))])
def test_fractions_and_at_least_one_task_per_split_from_three(n, sizes):
    out = split_ids([f"t{i}" for i in range(n)], suite="x", axis="user")
    assert tuple(len(out[k]) for k in SPLITS) == sizes


@pytest.mark.parametrize("name", suite_names())
def test_every_built_in_suite_is_split_disjointly_on_both_axes(name):
    suite = get_suite(name)
    s = suite_splits(suite)
    for table, everything in ((s.user, suite.user_tasks), (s.injection, suite.injection_tasks)):
        parts = [set(table[k]) for k in SPLITS]
        assert all(parts), "every split holds a task"
        assert sum(map(len, parts)) == len(set().union(*parts)) == len(everything)
        assert set().union(*parts) == set(everything)
    assert s.holds("test", next(iter(s.user["test"])), None)
    assert not s.holds("test", s.user["train"][0], s.injection["test"][0])  # a pair across splits is in none


def test_an_unknown_split_is_a_user_error():
    assert check_split("val") == "val"
    with pytest.raises(UserError, match="unknown split 'dev'"):
        check_split("dev")


def test_run_with_split_runs_and_records_only_that_split(tmp_path):
    splits = suite_splits(get_suite("banking"))
    r = randori("run", "-s", "banking", "-m", "scripted/gullible", "--split", "test", "-r", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "(split test)" in r.stderr
    with sqlite3.connect(tmp_path / "randori.sqlite") as db:
        rows = db.execute("SELECT kind, user_task, injection_task, split FROM cases").fetchall()
        [config] = [json.loads(c) for (c,) in db.execute("SELECT config FROM runs")]
    assert config["split"] == {"name": "test", "seed": DEFAULT_SEED, "fractions": {"train": 0.5, "val": 0.2,
                                                                                   "test": 0.3}}
    n_user, n_inj = len(splits.user["test"]), len(splits.injection["test"])
    assert len(rows) == n_user + n_inj + n_user * n_inj
    for _, user_task, injection_task, split in rows:
        assert splits.holds("test", user_task, injection_task)
        assert json.loads(split) == {"name": "test", "seed": DEFAULT_SEED}
    report = json.loads(randori("report", "-r", str(tmp_path), "--format", "json").stdout)
    assert report["rows"][0]["splits"] == [{"name": "test", "seed": DEFAULT_SEED}]


def test_a_split_keeps_case_keys_so_a_split_run_resumes_a_full_one(tmp_path):
    mine = suite_splits(get_suite("banking"), "mine")
    u, i = mine.user["val"][0], mine.injection["val"][0]
    args = ("run", "-s", "banking", "-m", "scripted/gullible", "-u", u, "-i", i, "-r", str(tmp_path))
    assert randori(*args).returncode == 0
    r = randori(*args, "--split", "val", "--split-seed", "mine")
    assert r.returncode == 0, r.stderr
    assert "3 already in" in r.stderr and ", 0 to run" in r.stderr
    with sqlite3.connect(tmp_path / "randori.sqlite") as db:
        splits = [json.loads(s) if s else None for (s,) in db.execute("SELECT split FROM cases")]
    # Cases a run with no split stored are labelled by the split run that finds them done.
    assert splits == [{"name": "val", "seed": "mine"}] * 3


@pytest.mark.parametrize("args, message", [
    (["--split", "dev"], "unknown split 'dev': choose one of train, val, test"),
    (["--split-seed", "x"], "--split-seed cuts the splits of --split"),
])
def test_split_mistakes_are_one_line(args, message, tmp_path):
    r = randori("run", "-s", "banking", *args, "-r", str(tmp_path))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert message in r.stderr


def test_suites_splits_prints_both_axes_and_json():
    r = randori("suites", "splits", "banking")
    assert r.returncode == 0, r.stderr
    test = suite_splits(get_suite("banking")).user["test"]
    assert "User tasks:" in r.stdout and "Injection tasks:" in r.stdout and f"test  ({len(test)})" in r.stdout
    data = json.loads(randori("suites", "splits", "banking", "--format", "json", "--seed", "s").stdout)
    assert data["seed"] == "s" and data["user_tasks"] == {k: list(v) for k, v in
                                                           suite_splits(get_suite("banking"), "s").user.items()}
