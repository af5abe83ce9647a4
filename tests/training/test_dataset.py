"""`randori training dataset`: rows of one split only, each the prompt its episode starts with."""

import json

from randori.tasks.splits import suite_splits
from randori.training.episode import suite_of
from randori.training.trl import environment
from tests.helpers import randori


def test_train_rows_hold_no_held_out_task_and_their_prompt_is_the_episodes(tmp_path):
    out = tmp_path / "rows.jsonl"
    done = randori("training", "dataset", "banking", "--split", "train", "-o", str(out))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    cut = suite_splits(suite_of("banking"))
    assert {r["user_task"] for r in rows} == set(cut.user["train"])
    attacked = [r for r in rows if r["injection_task"]]
    assert {r["injection_task"] for r in attacked} == set(cut.injection["train"])
    assert not {r["user_task"] for r in rows} & set(cut.user["test"] + cut.user["val"])
    assert all(r["split"] == "train" and r["split_seed"] == cut.seed for r in rows)
    assert f"{len(rows)} rows" in done.stdout
    env = environment("banking")()
    for row in rows[:3] + attacked[:3]:
        env.reset(**row)
        messages = env._episode.observation().messages()
        assert row["prompt"] == messages


def test_the_same_command_writes_the_same_bytes(tmp_path):
    files = [tmp_path / f"{n}.jsonl" for n in "ab"]
    for f in files:
        assert randori("training", "dataset", "travel", "--split", "test", "-d", "datamark", "--no-benign",
                       "-o", str(f)).returncode == 0
    assert files[0].read_bytes() == files[1].read_bytes() and files[0].stat().st_size > 0


def test_mistakes_are_one_line(tmp_path):
    for args, message in ((["banking", "--split", "nope"], "unknown split"),
                          (["banking", "-d", "capabilities"], "capabilities"),
                          (["nosuchsuite"], "nosuchsuite")):
        done = randori("training", "dataset", *args, "-o", str(tmp_path / "x.jsonl"))
        assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not (tmp_path / "x.jsonl").exists()
