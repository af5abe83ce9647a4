"""`--executor processes`: the same store as in process, case by case, however workers come and go;
one rate limit for every worker; secrets only through the workers' environment; Ctrl-C stops them."""

from __future__ import annotations

import asyncio
import gc
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from randori.agents.models import ModelSettings, get_model
from randori.agents.models.spec import spec_of
from randori.bench.executors import get_executor
from randori.bench.executors.base import RunSpec
from randori.bench.executors.processes import Processes
from randori.bench.executors.worker import WorkerSetup, scrub_result, unseal
from randori.bench.runner import Selection, plan, quiet_gc, run_cases
from randori.bench.store import Store
from randori.errors import UserError, register_secret
from randori.suites import ready_suite, suite_names
from tests.bench.executor_support import CountingServer, outcomes, run_all
from tests.fakes.openai_server import FakeOpenAIServer, Fault
from tests.fakes.policies import ground_truth_policy
from tests.helpers import randori

pytestmark = pytest.mark.slow  # sandboxes, worker processes or a browser: `make test-fast` skips these


def test_two_worker_processes_store_exactly_the_in_process_cases(reference, tmp_path):
    run_all(tmp_path, "--executor", "processes=2")
    assert outcomes(tmp_path) == reference


def test_a_worker_killed_mid_run_changes_nothing(reference, tmp_path):
    suites = [ready_suite(n) for n in suite_names()]
    model = get_model("scripted/gullible", ModelSettings())
    cases = plan(Selection(suites=suites, model=model))
    pool = Processes(2)
    killed: list[int] = []
    status: list[str] = []

    def on_result(res):
        status.append(pool.status())
        if len(killed) == 0 and res is not None and len(outcomes_seen) == 200:
            victim = max(pool.conns.values(), key=lambda c: c.load)
            killed.append(victim.load)  # cases it held, unfinished: they must run again elsewhere
            os.kill(victim.pid, signal.SIGKILL)
        outcomes_seen.append(res)

    outcomes_seen: list = []
    with Store(tmp_path) as store:
        run_id = store.start_run({})
        asyncio.run(run_cases(cases, {s.name: s for s in suites}, model, store, run_id, on_result=on_result,
                              executor=pool))
        store.finish_run(run_id)
    assert killed and killed[0] > 0 and pool.restarts == 1
    # The progress line's view of them: both alive before the kill (the first rows may come while the
    # second worker is still starting), one right after it.
    kill_at = 200
    assert "2/2 workers" in status[:kill_at] and "1/2 workers" in status[kill_at:]
    assert outcomes(tmp_path) == reference


def test_ctrl_c_stops_every_worker(tmp_path):
    with FakeOpenAIServer(lambda req: "Nothing to do.", latency=0.3) as server:
        args = [sys.executable, "-m", "randori", "run", "-s", "banking", "-m", "openai/fake", "--base-url",
                server.base_url, "--executor", "processes=2", "--results", str(tmp_path)]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "OPENAI_API_KEY": "sk-fake-ctrl-c"})
        workers: list[int] = []
        deadline = time.time() + 120
        while time.time() < deadline and (len(workers) < 2 or server.count < 5):
            time.sleep(0.2)
            workers = children(proc.pid)
        assert len(workers) == 2 and server.count >= 5
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "run the same command to resume" in err and "Traceback" not in err
    assert not [pid for pid in workers if alive(pid)]


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_workers_share_one_limit_of_requests_in_flight(tmp_path):
    """Three workers, each as eager as a whole run, hold the provider's ceiling together."""
    with CountingServer(ground_truth_policy(["banking"]), latency=0.05) as server:
        r = randori("run", "-s", "banking", "-m", "openai/fake", "--base-url", server.base_url, "--no-adaptive",
                    "--provider-concurrency", "4", "--concurrency", "48", "--executor", "processes=3",
                    "-u", "user_task_0", "-u", "user_task_1", "-u", "user_task_2", "-u", "user_task_3",
                    "--results", str(tmp_path), env={"OPENAI_API_KEY": "sk-fake-shared"}, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    assert server.most == 4  # reached, never exceeded: 3 workers x 4 would be 12


def test_a_fatal_provider_error_in_a_worker_stops_the_run_in_one_line(tmp_path):
    with FakeOpenAIServer(lambda req: Fault(status=401)) as server:
        r = randori("run", "-s", "banking", "-m", "openai/fake", "--base-url", server.base_url,
                    "--executor", "processes=2", "--results", str(tmp_path),
                    env={"OPENAI_API_KEY": "sk-fake-unauthorised"}, timeout=300)
    assert r.returncode != 0 and "authentication failed" in r.stderr and "Traceback" not in r.stderr


def test_a_workers_key_comes_from_its_environment_and_never_reaches_the_store(tmp_path):
    def policy(req):
        return Fault(status=400, echo_auth=True)  # a careless server quotes the credentials it got

    key = "sk-env-key-of-the-workers-5678"
    with FakeOpenAIServer(policy) as server:
        r = randori("run", "-s", "banking", "-u", "user_task_0", "--no-attack", "-m", "openai/fake",
                    "--base-url", server.base_url, "--executor", "processes=1", "--results", str(tmp_path),
                    env={"OPENAI_API_KEY": key}, timeout=300)
    assert r.returncode == 1 and "every case of this run failed" in r.stderr
    assert server.headers and all(h["authorization"] == f"Bearer {key}" for h in server.headers)
    with Store(tmp_path) as store:
        messages = [row["error_message"] for row in store.iter_cases()]
    assert messages and all("you sent" in m and "***" in m and key[:12] not in m for m in messages)


def test_a_worker_scrubs_the_secrets_of_its_own_environment(monkeypatch):
    from randori.bench.executors.base import lost_result

    case = plan(Selection(suites=[ready_suite("banking")], model=get_model("scripted/oracle"), attacks=[]))[0]
    row = lost_result(case, "the server said: key wk-worker-only-secret-0042 is wrong")
    row.messages = [{"role": "assistant", "content": "I used wk-worker-only-secret-0042"}]
    monkeypatch.setenv("RANDORI_SECRET_3", "wk-worker-only-secret-0042")
    clean = scrub_result(row)
    assert "wk-worker-only" not in clean.error_message + str(clean.messages) and "***" in clean.error_message


def test_a_setup_holds_no_secret_and_a_worker_gets_it_back_from_its_environment(monkeypatch):
    password = "pw-sealed-away-9876"
    register_secret(password)
    model = get_model("openai/fake", ModelSettings(), base_url=f"http://u:{password}@127.0.0.1:9/v1",
                      api_key="sk-option-key-4321")
    setup, env = WorkerSetup.of(RunSpec({}, model), 2)
    assert password.encode() not in pickle.dumps(setup) and b"sk-option-key-4321" not in pickle.dumps(setup)
    assert sorted(env.values()) == sorted([password, "sk-option-key-4321"])
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    options = unseal(setup.model.options)
    assert options["base_url"] == f"http://u:{password}@127.0.0.1:9/v1" and options["api_key"] == "sk-option-key-4321"
    assert setup.concurrency == 4


def test_a_model_is_rebuilt_from_its_spec():
    model = get_model("openai/fake", ModelSettings(temperature=0.5), base_url="http://127.0.0.1:9/v1",
                      api_key="sk-x-spec", concurrency=3, adaptive=False)
    again = spec_of(model).build()
    assert (again.name, again.settings, again.concurrency, again.adaptive, again.base_url) == (
        model.name, model.settings, 3, False, model.base_url)
    assert spec_of(get_model("scripted/oracle")).build().name == "scripted/oracle"


@pytest.mark.parametrize("text", ["processes=0", "processes=two", "bogus", "ray="])
def test_a_bad_executor_is_one_line(text, tmp_path):
    with pytest.raises(UserError):
        get_executor(text)
    r = randori("run", "-s", "banking", "--executor", text, "--results", str(tmp_path))
    assert r.returncode != 0 and "Traceback" not in r.stderr and "--executor" in r.stderr or "executor" in r.stderr


def test_quiet_gc_freezes_without_collecting_and_a_nested_entry_changes_nothing(monkeypatch):
    calls: list[tuple] = []
    real = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or real(*a))
    with quiet_gc():
        frozen = gc.get_freeze_count()
        with quiet_gc():
            assert gc.get_freeze_count() == frozen  # the nested entry froze nothing more
        assert frozen > 0
    assert gc.get_freeze_count() == 0
    with quiet_gc():
        pass
    assert calls == []  # a full collection here cost 20-40 ms before a run's first request


def test_a_worker_keeps_the_run_collector_settings_until_it_closes():
    from randori.bench.executors.worker import Worker

    model = get_model("scripted/gullible", ModelSettings())
    setup, _ = WorkerSetup.of(RunSpec({"banking": ready_suite("banking")}, model), 1)
    before = gc.get_threshold()

    async def go() -> tuple[tuple[int, ...], tuple[int, ...]]:
        worker = Worker(setup)
        await worker.start(None)
        gc.collect()  # a context manager nobody holds would be finalized here, restoring the defaults
        during = gc.get_threshold()
        await worker.close()
        return during, gc.get_threshold()

    during, after = asyncio.run(go())
    assert during[0] > before[0] and after == before


def test_a_worker_that_cannot_build_the_run_stops_it_in_one_line(tmp_path):
    banking = ready_suite("banking")
    model = get_model("scripted/gullible", ModelSettings())
    cases = plan(Selection(suites=[banking], model=model, attacks=[]))
    with Store(tmp_path) as store, pytest.raises(UserError, match="a worker could not start the run: .*no_such_suite"):
        # The workers build suites by name: one only the driver has cannot be built there.
        asyncio.run(run_cases(cases, {"no_such_suite": banking}, model, store, store.start_run({}),
                              executor=Processes(1)))


def test_workers_that_cannot_start_at_all_stop_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # a worker imports this broken randori first
    (tmp_path / "randori").mkdir()
    (tmp_path / "randori" / "__init__.py").write_text("raise SystemExit(3)\n")
    model = get_model("scripted/gullible", ModelSettings())
    cases = plan(Selection(suites=[ready_suite("banking")], model=model, attacks=[]))
    pool = Processes(2)
    with Store(tmp_path / "r") as store, pytest.raises(UserError, match="no worker process is left: .*status 3"):
        asyncio.run(run_cases(cases, {"banking": ready_suite("banking")}, model, store, store.start_run({}),
                              executor=pool))
    assert pool.restarts == 2


def test_an_mcp_agent_runs_on_the_workers_with_the_same_outcomes(tmp_path):
    from tests.fakes.replay import Replay

    agent = f"mcp:{sys.executable} -S {Path(__file__).resolve().parents[1] / 'fakes' / 'mcp_agent.py'}"
    args = ["run", "--agent", agent, "-s", "banking", "-u", "user_task_0", "-u", "user_task_3", "-i",
            "injection_task_0", "-i", "injection_task_1"]
    with FakeOpenAIServer(Replay(gullible=True).policy) as server:
        env = {"MODEL_BASE_URL": server.base_url}
        here = randori(*args, "-r", str(tmp_path / "in"), env=env, timeout=600)
        pool = randori(*args, "-r", str(tmp_path / "pool"), "--executor", "processes=2", env=env, timeout=600)
    assert here.returncode == 0 and pool.returncode == 0, pool.stderr[-2000:]
    expected = outcomes(tmp_path / "in")
    assert outcomes(tmp_path / "pool") == expected and len(expected) == 2 + 2 + 4
    assert {row[11] for row in expected.values() if row[0] == "attacked"} == {1}  # the attacks landed


def test_warmed_workers_of_a_run_that_never_starts_leave_nothing_behind(tmp_path):
    """The CLI starts the workers before it plans; a run refused while planning stops them at exit."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = randori("run", "-s", "banking", "-u", "user_task_999", "-m", "scripted/oracle", "--executor", "processes=2",
                "--results", str(tmp_path / "r"), env={"TMPDIR": str(tmp)}, timeout=300)
    assert r.returncode == 2 and "no user task user_task_999" in r.stderr and "Traceback" not in r.stderr
    assert not list(tmp.glob("randori-workers-*"))  # the socket's folder is gone
    # The CLI waited for each worker it stopped, so none can still be exiting now.
    assert not with_tmpdir(tmp)  # no worker outlived the CLI


def with_tmpdir(tmp: Path) -> list[int]:
    """Live processes started with TMPDIR=tmp: the CLI's own descendants (a forked worker shares the
    driver's command line; its environment, like a spawned one's, is the driver's)."""
    mark = f"TMPDIR={tmp}".encode()
    return [int(d.name) for d in Path("/proc").iterdir() if d.name.isdigit() and alive(int(d.name))
            and mark in _environ(d).split(b"\0")]


def _environ(d: Path) -> bytes:
    try:
        return (d / "environ").read_bytes()
    except OSError:
        return b""


def test_a_warmed_executor_closed_before_it_started_stops_its_workers():
    executor = Processes(2)
    executor.warm(["banking"])
    procs = list(executor.procs)
    assert len(procs) == 2 and all(p.poll() is None for p in procs)
    asyncio.run(executor.close())
    assert all(p.poll() is not None for p in procs) and not os.path.exists(executor.dir)


def test_a_warmed_worker_runs_the_cases_of_the_run_it_is_given(tmp_path):
    """Warmed with other suites' names than the run's, the workers still build the run's own."""
    model = get_model("scripted/gullible")
    suites = {"chat": ready_suite("chat")}
    cases = plan(Selection(suites=list(suites.values()), model=model, user_tasks=["user_task_0", "user_task_1"]))
    executor = Processes(2)
    executor.warm(["banking", "no-such-suite"])
    with Store(tmp_path) as store:
        run_id = store.start_run({})
        asyncio.run(run_cases(cases, suites, model, store, run_id, concurrency=4, executor=executor))
        rows = {r["key"]: r["status"] for r in store.iter_cases()}
    assert rows == {c.key: "ok" for c in cases}


def test_a_worker_runs_its_exit_handlers_before_it_leaves(tmp_path):
    """Workers skip the interpreter's slow teardown, but not the exit handlers (the sandbox's cleanup)."""
    mark = tmp_path / "ran"
    code = ("import atexit; from randori.bench.executors.processes import worker_main; "
            f"atexit.register(lambda: open({str(mark)!r}, 'w').write('ran')); "
            f"worker_main({str(tmp_path / 'no-driver.sock')!r}, ['banking'])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Traceback" not in r.stderr  # no driver: it leaves quietly
    assert mark.read_text() == "ran"



def test_a_warmed_executor_that_will_not_start_is_discarded_at_once():
    executor = Processes(2)
    executor.warm(["banking"])
    procs = list(executor.procs)
    executor.discard()  # e.g. every case of its model was done already
    assert all(p.poll() is not None for p in procs) and not os.path.exists(executor.dir)
    get_executor("inprocess").discard()  # nothing warmed, nothing to do


def test_a_resumed_run_with_nothing_left_ends_cleanly_on_every_executor(tmp_path):
    args = ["run", "-s", "banking", "-u", "user_task_0", "-m", "scripted/oracle", "--results", str(tmp_path)]
    assert randori(*args, timeout=300).returncode == 0
    for executor in ("inprocess", "processes=2"):
        r = randori(*args, "--executor", executor, timeout=300)
        assert r.returncode == 0 and "0 to run" in r.stderr and "Traceback" not in r.stderr, r.stderr[-1000:]


@pytest.mark.parametrize("what", [
    ("-s", "banking", "-u", "user_task_0", "-m", "scripted/oracle", "--executor", "processes=2"),  # the workers'
    ("-s", "coding", "-u", "user_task_0", "--no-attack", "-m", "scripted/oracle"),  # the sandbox zygote's
], ids=["workers", "sandbox"])
def test_a_run_with_a_deep_temporary_folder_still_has_its_sockets(tmp_path, what):
    """A Unix socket's path has at most about 100 bytes; a socket's folder goes to /tmp when TMPDIR is
    deeper than that (the run used to end: "AF_UNIX path too long")."""
    deep = tmp_path / ("t" * 60) / ("m" * 60)
    deep.mkdir(parents=True)
    r = randori("run", *what, "--results", str(tmp_path / "r"), env={"TMPDIR": str(deep)}, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and not list(deep.glob("randori-*"))
    con = sqlite3.connect(tmp_path / "r" / "randori.sqlite")
    statuses = con.execute("SELECT status, utility FROM cases WHERE kind = 'benign'").fetchall()
    con.close()
    assert statuses and set(statuses) == {("ok", 1)}
