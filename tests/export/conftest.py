import json

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.policies import ground_truth_policy
from tests.helpers import randori

MODELS = ("scripted/gullible", "openai/fake")
DEFENSES = ("none", "detector")


@pytest.fixture(scope="package")
def two_by_two(tmp_path_factory):
    """Two models x two defenses, run as a user runs them: a scripted agent, and a model served by a
    fake OpenAI server (it reports tokens, so token totals are not all zero)."""
    results = tmp_path_factory.mktemp("export") / "results"
    base = ["-s", "banking", "-u", "user_task_2", "-u", "user_task_5", "-d", DEFENSES[0], "-d", DEFENSES[1],
            "-r", str(results)]
    r = randori("run", "-m", MODELS[0], *base)
    assert r.returncode == 0, r.stderr
    with FakeOpenAIServer(ground_truth_policy(["banking"])) as server:
        r = randori("run", "-m", MODELS[1], "--base-url", server.base_url, *base,
                    env={"OPENAI_API_KEY": "sk-test-export-29"})
    assert r.returncode == 0, r.stderr
    return results


@pytest.fixture(scope="package")
def report_json(two_by_two):
    r = randori("report", "-r", str(two_by_two), "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="package")
def store_rows(two_by_two):
    from randori.bench.store import open_existing

    with open_existing(two_by_two, readonly=True) as store:
        return [{**row, "messages": store.trace(row["key"])["messages"]} for row in store.iter_cases()]


def export(results, fmt, out):
    """`randori export` as a user runs it; its standard output."""
    r = randori("export", "--format", fmt, "-r", str(results), "--out", str(out))
    assert r.returncode == 0, r.stderr
    return r.stdout
