"""`randori code run --model openai/... --base-url ...` against the fake OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

from randori.code.dataset import load_builtin
from tests.code.helpers import QUICK_TASKS, rates, run_json
from tests.fakes.openai_server import FakeOpenAIServer, model_turns

TASKS = QUICK_TASKS[:3]


def _policy(request):
    tasks = {t.entry_point: t for t in load_builtin().select(TASKS)}
    first_user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    task = next(t for ep, t in tasks.items() if f"`{ep}`" in first_user)
    code = task.insecure_code if model_turns(request) == 0 else task.secure_code
    return f"Sure! Here is my solution:\n\n```python\n{code}```\n\nIt handles the edge cases."


def test_run_through_an_openai_compatible_server(tmp_path: Path):
    secret = "sk-test-key-that-must-not-be-stored"
    with FakeOpenAIServer(_policy) as server:
        [s] = run_json(tmp_path, "--model", "openai/fake-coder", "--base-url", server.base_url, "--rounds", "2",
                       tasks=TASKS, env={"OPENAI_API_KEY": secret})
        requests = list(server.requests)
    assert s["model"] == "openai/fake-coder" and s["errors"] == 0
    assert rates(s, "security") == [0.0, 1.0, 1.0] and rates(s, "func_sec") == [0.0, 1.0, 1.0]
    assert s["model_calls"] == 2 * len(TASKS) and s["input_tokens"] > 0 and s["output_tokens"] > 0
    assert len(requests) == 2 * len(TASKS)
    assert all(r.get("temperature") == 0.0 for r in requests)
    repairs = [r for r in requests if model_turns(r) == 1]
    assert len(repairs) == len(TASKS)
    for r in repairs:
        feedback = r["messages"][-1]["content"]
        assert "Failing tests:" in feedback and "[security]" in feedback
        assert r["messages"][-2]["role"] == "assistant"
    assert secret.encode() not in (tmp_path / "randori.sqlite").read_bytes()


def test_provider_failure_is_an_error_not_a_score(tmp_path: Path):
    from tests.fakes.openai_server import Fault

    with FakeOpenAIServer(lambda req: Fault(status=500)) as server:
        [s] = run_json(tmp_path, "--model", "openai/fake-coder", "--base-url", server.base_url, "--rounds", "1",
                       tasks=TASKS[:1], env={"RANDORI_RETRY_BASE_DELAY": "0.01"})
    assert s["tasks"] == 0 and s["errors"] == 1
    with FakeOpenAIServer(_policy) as server:  # the retried run completes it
        [s] = run_json(tmp_path, "--model", "openai/fake-coder", "--base-url", server.base_url, "--rounds", "1",
                       tasks=TASKS[:1])
    assert s["tasks"] == 1 and s["errors"] == 0


def test_bad_credentials_stop_the_run(tmp_path: Path):
    from tests.code.helpers import invoke
    from tests.fakes.openai_server import Fault

    with FakeOpenAIServer(lambda req: Fault(status=401)) as server:
        res = invoke("run", "--results", str(tmp_path), "--model", "openai/fake-coder", "--base-url",
                     server.base_url, "--task", TASKS[0], "--task", TASKS[1], "--concurrency", "1")
    assert res.exit_code == 1 and "authentication failed" in res.stderr
    assert "Traceback" not in res.output
