"""`randori mcp serve` driven as a person would (a client started by hand, Ctrl-C/SIGTERM at the end),
and the examples in examples/agents/ running real agent code against the fake OpenAI server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from randori.bench.store import Store
from randori.suites import get_suite
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.replay import Replay
from tests.helpers import randori

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def oracle_server():
    with FakeOpenAIServer(Replay().policy) as server:
        yield server


def serve_session(results: Path, model_url: str, *extra: str) -> str:
    """One `randori mcp serve` session: a client does the case, its answer is piped in, SIGTERM ends it."""
    env = {**os.environ, "COLUMNS": "200"}
    serve = subprocess.Popen([sys.executable, "-m", "randori", "mcp", "serve", "-s", "banking", "-u", "user_task_0",
                              "-r", str(results), *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        assert serve.stdout is not None and serve.stdin is not None
        lines = []
        while not (lines and lines[-1].startswith("Ctrl-C")):
            line = serve.stdout.readline()
            assert line, serve.stderr.read() if serve.stderr else ""
            lines.append(line.strip())
        url = lines[0].split(": ", 1)[1]
        prompt = lines[lines.index("The user's request (give it to your agent):") + 1]
        instructions = lines[lines.index("Instructions (use them as your agent's system prompt):") + 1]
        client = subprocess.run([sys.executable, "-S", str(REPO / "tests" / "fakes" / "mcp_agent.py")],
                                capture_output=True, text=True, timeout=60,
                                env={**env, "RANDORI_MCP_URL": url, "RANDORI_PROMPT": prompt,
                                     "MODEL_BASE_URL": model_url})
        assert client.returncode == 0, client.stderr
        serve.stdin.write(client.stdout)
        serve.stdin.close()
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)  # its few lines of output fit in the pipes
        out, err = serve.stdout.read(), serve.stderr.read() if serve.stderr else ""
    finally:
        if serve.poll() is None:
            serve.kill()
    assert serve.returncode == 0, err
    assert instructions.startswith("You are the online-banking assistant")
    return out


def test_mcp_serve_scores_and_stores_the_case_when_the_session_ends(tmp_path, oracle_server):
    attacked = ["-i", "injection_task_0", "--agent-version", "inspector-1"]
    out = serve_session(tmp_path, oracle_server.base_url, *attacked)
    assert "utility (the user's task done): yes" in out
    assert "attack succeeded: no; injection seen: yes" in out
    assert "repeat 0" in out
    out = serve_session(tmp_path, oracle_server.base_url, *attacked)  # the same case again: a new repeat
    assert "repeat 1" in out
    with Store(tmp_path) as store:
        rows = store.cases()
        trace = store.trace(rows[0]["key"])
    assert [(r["kind"], r["agent"], r["agent_version"], r["status"], r["utility"], r["attack_succeeded"])
            for r in rows] == [("attacked", "mcp:serve", "inspector-1", "ok", 1, 0)] * 2
    assert sorted(r["repeat"] for r in rows) == [0, 1]
    assert [m["role"] for m in trace["messages"]][:2] == ["system", "user"]
    assert any(m.get("tool_result", {}).get("vectors_seen") for m in trace["messages"])
    report = randori("report", "-r", str(tmp_path), "--format", "json")
    [row] = json.loads(report.stdout)["rows"]
    assert (row["agent"], row["agent_version"], row["attack_success"]["n"]) == ("mcp:serve", "inspector-1", 2)


def test_mcp_serve_tells_its_client_of_a_rug_pull(tmp_path, monkeypatch):
    log = tmp_path / "events"
    monkeypatch.setenv("MCP_AGENT_EVENTS", str(log))  # tests/fakes/mcp_agent.py notes what it hears
    with FakeOpenAIServer(Replay(gullible=True).policy, record=False) as gullible:
        out = serve_session(tmp_path, gullible.base_url, "-i", "injection_task_0", "-a", "rug_pull")
    assert "attacked by rug_pull" in out and "attack succeeded: yes; injection seen: yes" in out
    assert log.read_text().splitlines() == ["listed tools", "notified notifications/tools/list_changed",
                                            "listed tools"]
    with Store(tmp_path) as store:
        [row] = store.cases()
        notes = [a for m in store.trace(row["key"])["messages"] for a in m.get("annotations", [])]
    assert "the agent was told the tool list changed after 1 tool call(s)" in notes
    assert "injected text of docbox_plugin is in the description of read_document" in notes


def test_mcp_serve_mistakes_are_one_line(tmp_path):
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    for args, message in ((["-s", "banking", "-u", "user_task_0", "-p", str(busy.getsockname()[1])], "in use"),
                          (["-s", "banking", "-u", "user_task_99"], "no user task user_task_99"),
                          (["-s", "banking", "-u", "user_task_0", "-a", "direct"], "--attack needs --injection-task"),
                          (["-s", "banking", "-u", "user_task_0", "-d", "sandwich"], "cannot guard")):
        proc = randori("mcp", "serve", *args, "-r", str(tmp_path))
        assert proc.returncode == 2 and proc.stderr.startswith("randori: error: ") and message in proc.stderr
        assert proc.stderr.count("\n") == 1
    busy.close()


def test_minimal_openai_sdk_agent_example_runs_a_suite(tmp_path, oracle_server):
    proc = randori("run", "-s", "banking", "--no-attack", "--agent", "examples.agents.openai_minimal:agent",
                   "--agent-version", "example", "-r", str(tmp_path), cwd=REPO,
                   env={"OPENAI_BASE_URL": oracle_server.base_url, "OPENAI_API_KEY": "sk-test-not-a-key"})
    assert proc.returncode == 0, proc.stderr
    with Store(tmp_path) as store:
        rows = store.cases()
    banking = get_suite("banking")
    assert len(rows) == len(banking.user_tasks) + len(banking.injection_tasks)
    assert {(r["status"], r["utility"]) for r in rows} == {("ok", 1)}
    # It reports its tokens: the fake server's usage, 10 completion tokens a reply.
    assert all(r["model_calls"] >= 1 and r["output_tokens"] == 10 * r["model_calls"] for r in rows)


def test_openai_agents_sdk_example_passes_banking_benign_cases_over_mcp(tmp_path, oracle_server):
    command = f"mcp:{sys.executable} {REPO / 'examples' / 'agents' / 'openai_agents_mcp.py'}"
    proc = randori("run", "-s", "banking", "--no-attack", "-i", "injection_task_0", "--agent", command,
                   "-r", str(tmp_path), timeout=900,
                   env={"OPENAI_BASE_URL": oracle_server.base_url, "OPENAI_API_KEY": "sk-test-not-a-key"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    with Store(tmp_path) as store:
        rows = store.cases()
    benign = [r for r in rows if r["kind"] == "benign"]
    assert len(benign) == len(get_suite("banking").user_tasks)
    assert {(r["status"], r["utility"]) for r in benign} == {("ok", 1)}, \
        [r["error_message"] for r in rows if r["status"] != "ok"][:1]
