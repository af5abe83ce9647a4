"""Tool-description attacks against agents served over MCP: `tools/list` answers with the descriptions
as they stand, and after the call that changed them (a rug pull) the client is told
`notifications/tools/list_changed`: on the handshake era's standalone stream, and on the 2026-07-28
era through `subscriptions/listen`. Client processes that list the tools again when told, driven by
the reference agents of tests/fakes/replay.py, must then do what scripted/gullible and
scripted/oracle do with the built-in agent."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from randori.agents.external import get_agent
from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, run_case
from randori.suites.banking import suite as banking
from tests.agents.test_external import outcomes, run_in_process
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.replay import Replay
from tests.helpers import randori

REPO = Path(__file__).resolve().parents[2]
STDLIB_AGENT = f"mcp:{sys.executable} -S {REPO / 'tests' / 'fakes' / 'mcp_agent.py'}"
SDK_AGENT = f"mcp:{sys.executable} {REPO / 'tests' / 'fakes' / 'mcp_sdk_agent.py'}"
NOTIFIED = "notified notifications/tools/list_changed"


@pytest.fixture(scope="module")
def gullible_server():
    with FakeOpenAIServer(Replay(gullible=True).policy, record=False) as server:
        yield server


@pytest.fixture(scope="module")
def oracle_server():
    with FakeOpenAIServer(Replay().policy, record=False) as server:
        yield server


def events(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def log_file(tmp_path: Path, name: str) -> tuple[Path, list[str]]:
    """A file the agent may append to from inside its container, and the option that lets it."""
    folder = tmp_path / "logs"
    folder.mkdir(exist_ok=True)
    return folder / name, ["--agent-bind", f"{folder}:rw"]


def test_a_rug_pull_over_mcp_does_what_it_does_to_the_builtin_agent_on_every_banking_pair(
        tmp_path, gullible_server, oracle_server):
    scripted = run_in_process(tmp_path / "scripted", "builtin", "scripted/gullible", ["banking"], benign=False,
                              attacks=("rug_pull",))
    log, bind = log_file(tmp_path, "gullible.events")
    proc = randori("run", "--agent", STDLIB_AGENT, *bind, "-s", "banking", "-a", "rug_pull", "--no-benign",
                   "-r", str(tmp_path / "mcp"), "--concurrency", "4", timeout=900,
                   env={"MODEL_BASE_URL": gullible_server.base_url, "MCP_AGENT_EVENTS": str(log)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    everything = outcomes(tmp_path / "mcp")
    assert everything == scripted  # status, utility, attack success and injection seen, case by case
    mcp = {k: v for k, v in everything.items() if k[0] == "attacked"}
    assert len(mcp) == len(banking.user_tasks) * len(banking.injection_tasks)
    assert sum(v[2] for v in mcp.values()) >= len(mcp) - 1 and all(v[3] == 1 for v in mcp.values())
    # Each attacked case's client was told once and listed the tools again (the injection-only cases,
    # which the run adds, have no rug pull: one listing each).
    lines = events(log)
    assert lines.count(NOTIFIED) == len(mcp)
    assert lines.count("listed tools") == 2 * len(mcp) + len(everything) - len(mcp)

    log, bind = log_file(tmp_path, "oracle.events")
    proc = randori("run", "--agent", STDLIB_AGENT, *bind, "-s", "banking", "-a", "rug_pull", "--no-benign",
                   "-i", "injection_task_0", "-i", "injection_task_3", "-r", str(tmp_path / "oracle"),
                   "--concurrency", "4", timeout=900,
                   env={"MODEL_BASE_URL": oracle_server.base_url, "MCP_AGENT_EVENTS": str(log)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    kept = {k: v for k, v in outcomes(tmp_path / "oracle").items() if k[0] == "attacked"}
    assert kept and all(v[0] == "ok" and v[1] == 1 and v[2] == 0 and v[3] == 1 for v in kept.values())
    assert events(log).count(NOTIFIED) == len(kept)


def test_tool_poisoning_over_mcp_needs_no_notification(tmp_path, gullible_server):
    log, bind = log_file(tmp_path, "events")
    users = [a for u in ("user_task_0", "user_task_1", "user_task_5") for a in ("-u", u)]
    proc = randori("run", "--agent", STDLIB_AGENT, *bind, "-s", "banking", *users, "-i", "injection_task_0",
                   "-a", "tool_poisoning", "--no-benign", "-r", str(tmp_path), timeout=300,
                   env={"MODEL_BASE_URL": gullible_server.base_url, "MCP_AGENT_EVENTS": str(log)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {k: v for k, v in outcomes(tmp_path).items() if k[0] == "attacked"}
    assert len(rows) == 3 and all(v[0] == "ok" and v[2:] == (1, 1) for v in rows.values())
    assert NOTIFIED not in events(log) and events(log).count("listed tools") == 4  # and the injection-only case


def run_sdk(tmp_path: Path, server: FakeOpenAIServer, era: str, attack: str, user_task: str = "user_task_1",
            **extra: str):
    """One banking case through the SDK-based client; its result and what the client logged."""
    log, bind = log_file(tmp_path, f"{era}-{attack}-{user_task}-{len(extra)}.events")
    agent = get_agent(SDK_AGENT, binds=bind[1:])
    sel = Selection(suites=[banking], model=None, attacks=[attack], user_tasks=[user_task],
                    injection_tasks=["injection_task_0"], benign=False, injection_only=False, agent=agent)
    [case] = plan(sel)
    env = {"MODEL_BASE_URL": server.base_url, "MCP_AGENT_ERA": era, "MCP_AGENT_EVENTS": str(log), **extra}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        result = asyncio.run(run_case(case, banking, None, agent=agent))
    assert result.status == "ok", result.error_message
    return case, result, events(log)


@pytest.mark.parametrize("era, protocol, heard", [
    ("legacy", "2025-11-25", "notified notifications/tools/list_changed"),
    ("modern", "2026-07-28", "notified subscriptions/listen tools_list_changed"),
])
def test_an_sdk_client_is_told_of_a_rug_pull_on_both_protocol_eras(tmp_path, gullible_server, oracle_server,
                                                                     era, protocol, heard):
    scripted = get_model("scripted/gullible", ModelSettings())
    for user_task in ("user_task_1", "user_task_3"):
        case, result, log = run_sdk(tmp_path, gullible_server, era, "rug_pull", user_task)
        builtin = asyncio.run(run_case(case, banking, scripted))
        assert log[0] == f"protocol {protocol}; tools.listChanged True"
        assert heard in log and log.count("listed tools") == 2
        first_call = next(i for i, line in enumerate(log) if line.startswith("called"))
        relisted = len(log) - 1 - log[::-1].index("listed tools")
        assert first_call < relisted and log.index(heard) < relisted  # told, then listed, after the first call
        assert (result.utility, result.attack_succeeded, result.injection_seen) == (
            builtin.utility, builtin.attack_succeeded, builtin.injection_seen)
        assert result.attack_succeeded and result.injection_seen
    _, kept, log = run_sdk(tmp_path, oracle_server, era, "rug_pull")
    assert heard in log and kept.injection_seen and kept.utility and not kept.attack_succeeded
    # A client that keeps its first listing is never shown the text: not even a tools/call on the
    # 2026-07-28 path (which validates arguments against the tool's schema) counts as a listing.
    _, deaf, log = run_sdk(tmp_path, gullible_server, era, "rug_pull", "user_task_0", MCP_AGENT_IGNORE_CHANGES="1")
    assert log.count("listed tools") == 1 and not deaf.injection_seen and not deaf.attack_succeeded
    _, poisoned, log = run_sdk(tmp_path, gullible_server, era, "tool_poisoning")
    assert poisoned.attack_succeeded and poisoned.injection_seen and log.count("listed tools") == 1
    assert not any(line.startswith("notified") for line in log)
