"""External agents, contained: every process an agent starts ends with its case, no agent reaches its
own verdict, one agent's fault fails its case only, and an answer is taken when the agent exits.

Processes are found from outside by a marker on their command line (inside its container an agent
sees its own PID numbers only)."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from randori.agents.external.container import containment
from randori.bench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.replay import Replay
from tests.helpers import alive_with, randori

REPO = Path(__file__).resolve().parents[2]
MCP_AGENT = f"mcp:{sys.executable} -S {REPO / 'tests' / 'fakes' / 'mcp_agent.py'}"
THIEF = f"mcp:{sys.executable} -S {REPO / 'tests' / 'fakes' / 'store_thief.py'}"
HOSTILE = "tests.fakes.hostile_agents"
# Each also runs injection_task_0 alone (a run always has the injection tasks alone): the tests look
# at the benign cases.
ONE = ["-s", "banking", "-u", "user_task_0", "-i", "injection_task_0", "--no-attack"]
TWO = ["-s", "banking", "-u", "user_task_0", "-u", "user_task_3", "-i", "injection_task_0", "--no-attack"]
CONTAINED = containment().kind == "namespaces"
needs_namespaces = pytest.mark.skipif(not CONTAINED, reason=f"no agent container here: {containment().note}")


def rows(results: Path, where: str = "kind = 'benign'") -> list[dict[str, Any]]:
    with Store(results) as store:
        return store.cases(where)


def answers(results: Path) -> dict[str, str]:
    with Store(results) as store:
        return {r["user_task"]: store.trace(r["key"])["messages"][-1].get("content", "")
                for r in store.cases("kind = 'benign'")}


def run_config(results: Path) -> dict[str, Any]:
    con = sqlite3.connect(results / "randori.sqlite")
    config = json.loads(con.execute("SELECT config FROM runs ORDER BY id DESC").fetchone()[0])
    con.close()
    return config


# -- every process an agent starts ends with its case --------------------------------------------

@needs_namespaces
def test_setsid_grandchildren_of_an_mcp_agent_end_with_its_case(tmp_path):
    marker = "271.8281"
    # Detached twice over (setsid, then a shell that backgrounds again), and still holding stdout.
    command = (f"mcp:sh -c 'setsid sleep {marker} & setsid sh -c \"sleep {marker} & sleep {marker}\" & "
               "echo my answer'")
    proc = randori("run", "--agent", command, *TWO, "-r", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    assert {r["status"] for r in rows(tmp_path / "r")} == {"ok"}
    assert set(answers(tmp_path / "r").values()) == {"my answer"}  # taken at its exit, helpers or not
    assert alive_with(marker) == []


@needs_namespaces
@pytest.mark.parametrize("limit", ["0.001", "0.05", "0.5"])
def test_an_mcp_agent_stopped_by_its_limit_while_starting_leaves_no_process(tmp_path, limit):
    # The limit fires at any point of the start: while the case's server starts, just after the
    # process is born, or while it starts its own children. The run must end with none of them alive.
    marker = f"314.15{limit.replace('.', '')}"
    command = f"mcp:sh -c 'setsid sleep {marker} & sleep {marker} & sleep {marker}'"
    users = [a for u in ("user_task_0", "user_task_1", "user_task_2", "user_task_3") for a in ("-u", u)]
    proc = randori("run", "--agent", command, "-s", "banking", *users, "-i", "injection_task_0", "--no-attack",
                   "--agent-timeout", limit,
                   "--concurrency", "4", "-r", str(tmp_path / "r"), timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert {(r["status"], r["error_category"]) for r in rows(tmp_path / "r")} == {("error", "agent_timeout")}
    assert alive_with(marker) == []


def test_an_answer_is_taken_when_the_agent_exits_even_if_a_helper_holds_its_stdout(tmp_path):
    marker = "161.8033"
    proc = randori("run", "--agent", f"mcp:sh -c 'setsid sleep {marker} & echo early answer'", *ONE,
                   "-r", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    [row] = rows(tmp_path / "r")
    assert row["status"] == "ok"  # not held until the limit (the test would time out first)
    assert answers(tmp_path / "r") == {"user_task_0": "early answer"}
    if CONTAINED:
        assert alive_with(marker) == []


# -- no agent reaches its own verdict -------------------------------------------------------------

@needs_namespaces
@pytest.mark.parametrize("where", ["own store in cwd", "own store elsewhere", "other store in cwd/results",
                                   "other store in cwd", "other store beside the agent"])
def test_an_mcp_agent_cannot_find_or_write_any_results_store(tmp_path, where):
    # The run's own store, and any other randori store below a folder the agent sees (the current
    # folder, the agent's own), are out of its reach: an earlier run's store (`make demo` leaves one
    # in ./results) holds answers it could copy.
    project = tmp_path / "project"
    project.mkdir()
    thief = THIEF
    results = project / "results" if where == "own store in cwd" else tmp_path / "r"
    other = {"other store in cwd/results": project / "results", "other store in cwd": project,
             "other store beside the agent": project / "agent"}.get(where)
    if other is not None:
        other.mkdir(exist_ok=True)
        Store(other).close()
        for suffix in ("-wal", "-shm"):  # as a run that is still writing leaves them
            (other / f"randori.sqlite{suffix}").write_bytes(b"\0" * 64)
        if where == "other store beside the agent":
            (other / "thief.py").write_text((REPO / "tests" / "fakes" / "store_thief.py").read_text())
            thief = f"mcp:{sys.executable} -S {other / 'thief.py'}"
    before = {f.name: f.read_bytes() for f in other.glob("randori.sqlite*")} if other else {}
    env = {"PYTHONPATH": str(REPO)}
    proc = randori("run", "--agent", thief, *TWO, "-r", str(results), cwd=project, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    time.sleep(2)  # a helper that survived would write now
    stored = rows(results)
    assert len(stored) == 2 and {(r["status"], r["utility"]) for r in stored} == {("ok", 0)}
    assert set(answers(results).values()) == {"stores found: []; written: []"}
    assert alive_with("thief.py") == []
    if other is not None:
        assert before and {f.name: f.read_bytes() for f in other.glob("randori.sqlite*")} == before


def test_the_store_file_names_the_container_hides_are_the_stores():
    from randori.agents.external.container import STORE_FILES
    from randori.bench.store import STORE_FILE

    assert STORE_FILES == (STORE_FILE, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm")


def test_a_python_agent_cannot_edit_its_trace_on_the_default_route(tmp_path):
    # In randori's process the same agent forges "injection not seen": the test can tell.
    attacked = ["-s", "banking", "-u", "user_task_0", "-i", "injection_task_0", "--no-benign"]
    agent = f"{HOSTILE}:forging_agent"
    inside = randori("run", "--agent", agent, *attacked, "-r", str(tmp_path / "worker"))
    debug = randori("run", "--agent", agent, "--agent-in-process", *attacked, "-r", str(tmp_path / "debug"))
    assert inside.returncode == 0 and debug.returncode == 0, inside.stderr + debug.stderr
    pair = rows(tmp_path / "worker", "kind = 'attacked'")
    forged = rows(tmp_path / "debug", "kind = 'attacked'")
    assert [(r["injection_seen"], r["attack_succeeded"]) for r in pair] == [(1, 1)]
    assert [(r["injection_seen"], r["attack_succeeded"]) for r in forged] == [(0, 1)]
    assert run_config(tmp_path / "debug")["agent_isolation"] == "in_process"
    report = randori("report", "-r", str(tmp_path / "debug"))
    assert "judged in reach of the agent" in report.stdout
    assert randori("report", "-r", str(tmp_path / "debug"), "--html", str(tmp_path / "r.html")).returncode == 0
    assert "judged in reach of the agent" in (tmp_path / "r.html").read_text()
    notes = json.loads(randori("report", "-r", str(tmp_path / "debug"), "-f", "json").stdout)["agent_notes"]
    assert len(notes) == 1 and "--agent-in-process" in notes[0]
    assert "judged in reach" not in randori("report", "-r", str(tmp_path / "worker")).stdout


# -- one agent's fault fails its case only --------------------------------------------------------

@pytest.mark.parametrize(("agent", "category"), [("bad_argument_agent", "agent_crash"),
                                                 ("blocking_agent", "agent_timeout"),
                                                 ("deaf_agent", "agent_timeout")])
def test_a_python_agents_fault_fails_its_case_only(tmp_path, agent, category):
    proc = randori("run", "--agent", f"{HOSTILE}:{agent}", *TWO, "--agent-timeout", "10", "-r", str(tmp_path / "r"),
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    outcome = {r["user_task"]: (r["status"], r["error_category"], r["utility"]) for r in rows(tmp_path / "r")}
    assert outcome == {"user_task_0": ("error", category, None), "user_task_3": ("ok", None, 1)}


def test_an_object_passed_to_call_in_process_is_a_tool_error_and_the_run_stores_every_case(tmp_path):
    proc = randori("run", "--agent", f"{HOSTILE}:bad_argument_agent", "--agent-in-process", *TWO,
                   "-r", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    stored = rows(tmp_path / "r")
    assert {(r["user_task"], r["status"], r["utility"]) for r in stored} == {("user_task_0", "ok", 1),
                                                                             ("user_task_3", "ok", 1)}
    with Store(tmp_path / "r") as store:
        row = next(r for r in stored if r["user_task"] == "user_task_0")
        tool = next(m for m in store.trace(row["key"])["messages"] if m["role"] == "tool")
    assert "not a JSON object" in tool["content"]


# -- answers: none is an error, too long is an error ----------------------------------------------

@pytest.mark.parametrize(("command", "category", "says"), [
    ("mcp:true", "agent_no_answer", "without an answer"),
    (f"{HOSTILE}:silent_agent", "agent_no_answer", "without an answer"),
    ("mcp:sh -c 'head -c 3000000 /dev/zero | tr \"\\0\" a'", "agent_crash", "more than 1,000,000 bytes"),
])
def test_no_answer_and_an_answer_over_the_cap_are_errors(tmp_path, command, category, says):
    proc = randori("run", "--agent", command, *ONE, "-r", str(tmp_path / "r"))
    assert proc.returncode == 1
    [row] = rows(tmp_path / "r")
    assert (row["status"], row["error_category"], row["utility"]) == ("error", category, None)
    assert says in row["error_message"]


# -- reuse and degraded containment ----------------------------------------------------------------

@pytest.fixture(scope="module")
def oracle_server():
    with FakeOpenAIServer(Replay(gullible=False).policy) as server:
        yield server


def test_agent_reuse_serves_cases_in_turn_with_the_same_outcomes(tmp_path, oracle_server):
    users = [a for u in ("user_task_0", "user_task_1", "user_task_2", "user_task_3", "user_task_4") for a in ("-u", u)]
    env = {"MODEL_BASE_URL": oracle_server.base_url, "MCP_AGENT_USAGE": "served"}
    common = ["run", "--agent", MCP_AGENT, "-s", "banking", *users, "-i", "injection_task_0", "--no-attack",
              "--concurrency", "1"]
    once = randori(*common, "-r", str(tmp_path / "once"), env=env)
    reused = randori(*common, "--agent-reuse", "2", "-r", str(tmp_path / "reused"), env=env)
    assert once.returncode == 0 and reused.returncode == 0, once.stderr + reused.stderr

    def outcome(results: Path) -> dict[str, Any]:
        return {r["user_task"]: (r["status"], r["utility"]) for r in rows(results)}

    assert outcome(tmp_path / "reused") == outcome(tmp_path / "once")
    # Each case reports how many cases its process has served, this one included.
    # Six cases (five benign, one injection task alone) in turn: three processes, two cases each.
    assert sorted(r["input_tokens"] for r in rows(tmp_path / "once", "")) == [1] * 6
    assert sorted(r["input_tokens"] for r in rows(tmp_path / "reused", "")) == [1, 1, 1, 2, 2, 2]
    assert run_config(tmp_path / "reused")["agent_reuse"] == 2
    report = randori("report", "-r", str(tmp_path / "reused")).stdout
    assert "up to 2 cases" in " ".join(report.split())  # the line wraps where the checkout's path puts it


def test_without_namespaces_the_run_says_what_containment_it_lacks(tmp_path):
    proc = randori("run", "--agent", "mcp:echo fine", *ONE, "-r", str(tmp_path / "r"),
                   env={"RANDORI_BWRAP": str(tmp_path / "no-bwrap")})
    assert proc.returncode == 0, proc.stderr
    assert "bubblewrap not found" in proc.stderr  # said when the run starts
    config = run_config(tmp_path / "r")
    assert config["agent_isolation"] == "process_group" and "bubblewrap not found" in config["agent_isolation_note"]
    assert "process group only" in randori("report", "-r", str(tmp_path / "r")).stdout


@needs_namespaces
def test_agent_network_none_leaves_the_agent_its_case_server_only(tmp_path, oracle_server):
    env = {"MODEL_BASE_URL": oracle_server.base_url}
    # The fake agent needs its model server: with no network it cannot reach it, and fails.
    cut = randori("run", "--agent", MCP_AGENT, *ONE, "--agent-network", "none", "-r", str(tmp_path / "cut"), env=env)
    assert cut.returncode == 1
    [row] = rows(tmp_path / "cut")
    assert row["error_category"] == "agent_crash" and "Connection refused" in row["error_message"]
    # An agent that needs only the case's MCP server works as with the network open.
    lister = (f"mcp:{sys.executable} -S -c \"import sys; sys.path.insert(0, '{REPO / 'tests' / 'fakes'}'); "
              "import mcp_agent, os; print(len(mcp_agent.Mcp(os.environ['RANDORI_MCP_URL']).tools()))\"")
    ok = randori("run", "--agent", lister, *ONE, "--agent-network", "none", "-r", str(tmp_path / "ok"))
    assert ok.returncode == 0, ok.stderr
    from randori.suites import get_suite

    assert answers(tmp_path / "ok") == {"user_task_0": str(len(get_suite("banking").tools))}
    assert run_config(tmp_path / "ok")["agent_network"] == "none"
    # The case's socket has a short path however deep TMPDIR is (a Unix socket's path has ~100 bytes).
    deep = tmp_path / ("t" * 60) / ("m" * 60)
    deep.mkdir(parents=True)
    ok = randori("run", "--agent", lister, *ONE, "--agent-network", "none", "-r", str(tmp_path / "deep"),
                 env={"TMPDIR": str(deep)})
    assert ok.returncode == 0, ok.stderr
    assert answers(tmp_path / "deep") == {"user_task_0": str(len(get_suite("banking").tools))}


# -- what the attacker knows of the agent ----------------------------------------------------------

def test_the_attacker_knows_an_external_agent_by_its_declared_name_not_its_command_line(tmp_path):
    from randori.agents.external import get_agent
    from randori.bench.runner import Selection, plan
    from randori.suites import ready_suite

    # An install path that names a model family must not change the attack.
    folder = tmp_path / "claude-tools"
    folder.mkdir()
    (folder / "agent.sh").write_text("echo hi\n")

    def names(version: str | None) -> set[str]:
        agent = get_agent(f"mcp:sh {folder / 'agent.sh'}", version)
        cases = plan(Selection(suites=[ready_suite("banking")], model=None, benign=False, injection_only=False,
                               user_tasks=["user_task_0"], injection_tasks=["injection_task_0"], agent=agent))
        return {c.attacker_knowledge["model_name"] for c in cases}

    assert names(None) == {"AI assistant"}
    assert names("gpt-4o-agent-2") == {"GPT-4"}


@pytest.mark.parametrize(("extra", "says"), [
    (["--agent", "mcp:true", "--agent-network", "bogus"], "use open, none"),
    (["--agent", "mcp:true", "--agent-bind", "/no/such/folder"], "--agent-bind /no/such/folder: no such"),
    (["--agent", "mcp:true", "--agent-in-process"], "--agent-in-process is for a Python agent"),
    (["--agent", f"{HOSTILE}:silent_agent", "--agent-in-process", "--agent-network", "none"], "has none"),
])
def test_container_option_mistakes_are_one_line(tmp_path, capsys, extra, says):
    from randori.cli import run_cli

    assert run_cli(["run", *ONE, *extra, "-r", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("randori: error: ") and says in err and "\n" not in err
