"""Transfer: `randori attacks export` writes the texts that succeeded; `bank[file=...]` replays them."""

import json

import pytest

from tests.helpers import randori

PAIRS = ["-u", "user_task_1", "-u", "user_task_2", "-i", "injection_task_0", "-i", "injection_task_4"]


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """search against scripted/trusts_data (which no fixed template breaks), and a fixed template that fails."""
    path = tmp_path_factory.mktemp("searched")
    for attack in ("search", "important_instructions"):
        r = randori("run", "-s", "banking", "-m", "scripted/trusts_data", "-a", attack, *PAIRS, "--no-benign",
                    "-r", str(path))
        assert r.returncode == 0, r.stderr
    return path


def test_export_writes_only_the_texts_that_succeeded(searched, tmp_path):
    bank = tmp_path / "bank.json"
    r = randori("attacks", "export", "-r", str(searched), "-o", str(bank))
    assert r.returncode == 0, r.stderr
    assert "Wrote 4 text(s)" in r.stderr
    data = json.loads(bank.read_text())
    assert data["randori_bank"] == 1
    entries = data["entries"]
    assert {(e["user_task"], e["injection_task"]) for e in entries} == {
        (u, i) for u in ("user_task_1", "user_task_2") for i in ("injection_task_0", "injection_task_4")}
    for e in entries:
        assert e["attack"].startswith("search[") and e["model"] == "scripted/trusts_data"
        assert e["goal"] and all(e["goal"] in text for text in e["injections"].values())
        assert "<INFORMATION>" not in json.dumps(e)  # the failed template is not a success
    printed = randori("attacks", "export", "-r", str(searched))
    assert json.loads(printed.stdout) == data


def test_a_bank_replays_against_another_agent_and_other_user_tasks(searched, tmp_path):
    bank = tmp_path / "bank.json"
    randori("attacks", "export", "-r", str(searched), "-o", str(bank))
    out = tmp_path / "replay"
    spec = f"bank[file={bank}]"
    for model in ("scripted/trusts_data", "scripted/wary", "scripted/trusts_name"):
        r = randori("run", "-s", "banking", "-m", model, "-a", spec, "-u", "user_task_1", "-u", "user_task_7",
                    "-i", "injection_task_0", "-i", "injection_task_4", "--no-benign", "-r", str(out))
        assert r.returncode == 0, r.stderr
    rows = json.loads(randori("report", "-r", str(out), "-f", "json").stdout)["rows"]
    rates = {r["model"]: r["attack_success"]["rate"] for r in rows if r["attack"] == spec}
    # the records that broke trusts_data are plain wording (wary obeys) and are signed with the
    # user's name (trusts_name obeys); user_task_7 was never searched, yet gets the texts too
    assert rates == {"scripted/trusts_data": 1.0, "scripted/wary": 1.0, "scripted/trusts_name": 1.0}


@pytest.mark.parametrize("content, message", [
    ("not json", "is not JSON"),
    ('{"entries": []}', "is not a bank of injection texts"),
    ('{"randori_bank": 1, "entries": [{"injections": {}}]}', "entry 0 needs a goal and injections"),
])
def test_a_bad_bank_is_one_line(tmp_path, content, message):
    bank = tmp_path / "bank.json"
    bank.write_text(content)
    r = randori("run", "-s", "banking", "-a", f"bank[file={bank}]", "-r", str(tmp_path / "r"))
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("randori: error:") == 1


def test_a_goal_the_bank_has_no_text_for_is_named(searched, tmp_path):
    bank = tmp_path / "bank.json"
    randori("attacks", "export", "-r", str(searched), "-o", str(bank))
    r = randori("run", "-s", "banking", "-a", f"bank[file={bank}]", "-i", "injection_task_2", "-r", str(tmp_path / "r"))
    assert r.returncode == 2 and "has no text for injection_task_2" in r.stderr and "-i" in r.stderr
