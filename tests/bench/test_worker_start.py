"""How the process pool's workers start: forked from the driver where that is safe (they begin with
randori imported), else a fresh interpreter; what they load while the driver plans (the suites, their
models' providers); and how a worker starts the cases it receives (one per turn of its event loop, so
what arrives meanwhile is read between them)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from randori.agents.models import ModelSettings, get_model
from randori.bench.executors.base import RunSpec, Sink
from randori.bench.executors.processes import Forked, Processes, Starter, _argv, can_fork, send
from randori.bench.runner import Selection, plan, run_cases
from randori.bench.store import Store
from randori.suites import ready_suite


def test_a_worker_starts_its_cases_one_per_turn_and_reads_what_arrives_between_them():
    """A message that arrives while a batch's cases start is handled after one case, not after all."""
    events: list[str] = []

    async def case(number: int, item: int) -> None:
        events.append(f"case {item}")
        time.sleep(0.001)  # a case's set-up before its first request: it holds the loop

    async def go() -> None:
        starter = Starter(case)  # type: ignore[arg-type]
        serving = asyncio.create_task(starter.serve())
        starter.add(1, list(range(20)))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        asyncio.get_running_loop().call_soon(events.append, "answer")  # the coordinator's answer arrives
        while len(events) < 21:
            await asyncio.sleep(0)
        serving.cancel()
        await asyncio.gather(serving, *starter.tasks, return_exceptions=True)

    asyncio.run(go())
    assert sorted(e for e in events if e.startswith("case")) == sorted(f"case {i}" for i in range(20))
    assert events.index("answer") <= 2


def test_workers_are_forked_only_where_nothing_unsafe_to_inherit_exists():
    assert can_fork() == (sys.platform.startswith("linux") and threading.active_count() == 1)

    async def in_a_loop() -> bool:
        return can_fork()

    assert asyncio.run(in_a_loop()) is False  # a running event loop must not be inherited
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert can_fork() is False  # another thread's locks could be inherited held
    finally:
        stop.set()
        other.join()


def test_a_forked_worker_handle_polls_waits_and_kills_as_a_popen_does():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    handle = Forked(proc.pid)
    assert handle.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        handle.wait(0.05)
    handle.kill()
    assert handle.wait(10) == -signal.SIGKILL and handle.poll() == -signal.SIGKILL
    handle.kill()  # already gone: nothing happens
    quick = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert Forked(quick.pid).wait(30) == 3


def test_the_worker_command_line_carries_suites_then_models():
    assert _argv(["/s/driver.sock", "banking", "agentdojo:travel", "--model", "openai/gpt-4o-mini",
                  "--model", "vllm/a/b"]) == ("/s/driver.sock", ["banking", "agentdojo:travel"],
                                              ["openai/gpt-4o-mini", "vllm/a/b"])
    assert _argv(["/s/driver.sock"]) == ("/s/driver.sock", [], [])


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_warmed_workers_of_either_start_run_the_cases(tmp_path, start_method):
    if start_method == "fork" and not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    model = get_model("scripted/gullible", ModelSettings())
    suites = {"chat": ready_suite("chat")}
    cases = plan(Selection(suites=list(suites.values()), model=model, user_tasks=["user_task_0", "user_task_1"]))
    executor = Processes(2, start_method=start_method)
    executor.warm(["chat"], ["scripted/gullible"])
    kinds = {type(p).__name__ for p in executor.procs}
    assert kinds == ({"Forked"} if start_method == "fork" else {"Popen"})
    with Store(tmp_path) as store:
        run_id = store.start_run({})
        asyncio.run(run_cases(cases, suites, model, store, run_id, concurrency=4, executor=executor))
        rows = {r["key"]: r["status"] for r in store.iter_cases()}
    assert rows == {c.key: "ok" for c in cases}
    assert all(p.poll() == 0 for p in executor.procs)  # each left cleanly when told to stop


FORKED_RUN = textwrap.dedent("""
    import asyncio, atexit, os, sys
    from randori.agents.models import get_model
    from randori.bench.executors.processes import Processes
    from randori.bench.runner import Selection, plan, run_cases
    from randori.bench.store import Store
    from randori.suites import ready_suite

    atexit.register(lambda: print("driver exit handler in", os.getpid(), flush=True))
    model = get_model("scripted/gullible")
    suites = {"banking": ready_suite("banking")}
    cases = plan(Selection(suites=list(suites.values()), model=model, user_tasks=["user_task_0"]))
    executor = Processes(2)
    executor.warm(["banking"], ["scripted/gullible"])  # as the CLI does: no loop, no other thread yet
    print("forked" if all(type(p).__name__ == "Forked" for p in executor.procs) else "spawned", flush=True)
    with Store(sys.argv[1]) as store:
        run_id = store.start_run({})
        asyncio.run(run_cases(cases, suites, model, store, run_id, concurrency=4, executor=executor))
        print("rows", sum(1 for r in store.iter_cases() if r["status"] == "ok"), "of", len(cases), flush=True)
    print("driver", os.getpid(), flush=True)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_workers_forked_by_a_driver_run_its_cases_and_leave_its_exit_handlers_to_it(tmp_path):
    r = subprocess.run([sys.executable, "-c", FORKED_RUN, str(tmp_path)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    driver = next(line.split()[1] for line in lines if line.startswith("driver "))
    assert "forked" in lines
    n = len(plan(Selection(suites=[ready_suite("banking")], model=get_model("scripted/gullible"),
                           user_tasks=["user_task_0"])))
    assert f"rows {n} of {n}" in lines
    ran = [line for line in lines if line.startswith("driver exit handler")]
    assert ran == [f"driver exit handler in {driver}"]  # once, in the driver: never in a forked worker
    assert "Traceback" not in r.stderr


def test_a_worker_loads_its_models_provider_while_the_driver_plans():
    """`preload` imports what a provider's first request would (the direct OpenAI transport: aiohttp),
    without making a model; a name that is no model is left for get_model to explain."""
    code = textwrap.dedent("""
        import sys
        from randori.agents.models import preload
        from randori.bench.executors.processes import _preload
        preload("nosuch/model"); preload("no-slash"); preload("")
        assert "aiohttp" not in sys.modules
        _preload(["banking"], ["openai/gpt-4o-mini"])
        assert "aiohttp" in sys.modules and "openai" not in sys.modules  # the SDK is not needed
        print("ok")
    """)
    env = {k: v for k, v in os.environ.items() if k != "RANDORI_OPENAI_TRANSPORT"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


class Quiet(Sink):
    def row(self, result):
        pass

    def lost(self, keys, why):
        pass

    def fail(self, error):
        raise AssertionError(error)

    def poke(self):
        pass


def test_a_worker_that_connects_after_the_run_ended_is_let_go_at_once():
    """A short run may end before a slow worker has even connected; the driver then waits for every
    worker to leave. One that connects while the pool closes is disconnected at once: it used to be
    set up and left waiting for cases until the pool killed it 10 s later."""
    async def go() -> bytes:
        pool = Processes(1)
        model = get_model("scripted/gullible", ModelSettings())
        await pool.start(RunSpec({"banking": ready_suite("banking")}, model), Quiet())
        try:
            pool.closing = True  # the run has ended; the pool waits for its workers to leave
            reader, writer = await asyncio.open_unix_connection(pool.path)
            await send(writer, ("hello", 1))
            answer = await asyncio.wait_for(reader.read(), 30)  # a guard: it comes at once
            writer.close()
            return answer
        finally:
            await pool.close()

    assert asyncio.run(go()) == b""  # closed without a setup
