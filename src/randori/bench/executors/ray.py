"""`--executor ray[=ADDRESS]`: batches of cases as Ray tasks, on a local cluster this process starts
(no ADDRESS) or on an existing one (`ray://host:10001`, `auto`, `host:6379`). `pip install
'randori[ray]'`.

Each task is a generator that yields the rows of its batch as they finish, so a worker that dies
loses only the cases it had not finished. A Ray worker process keeps one event loop and one built
`Worker` per run across the tasks it is given. The providers' limits are held by one actor that
every worker asks before a request and tells after it (shared_limits.Coordinator).

Costs measured here: about 2.7 ms of CPU per task, so a batch holds at least `MIN_BATCH` cases
(scripted cases take 2-3 ms: Ray's share stays under 10%). Ray starts its workers at niceness 15,
which on a loaded machine made a run 3.4 times slower than in process: the local cluster this
process starts, and the tasks' runtime environment, keep the driver's priority."""

from __future__ import annotations

import asyncio
import json
import os
import time
import traceback
import uuid
from collections.abc import Iterator
from typing import Any

from randori.bench.cases import Case
from randori.bench.executors.base import Executor, RunSpec, Sink, fatal, setup_failed, setup_message
from randori.errors import FatalModelError, ModelError, UserError, install_hint

MIN_BATCH = 16
FLUSH_S = 0.1  # a worker sends its finished rows at least this often (a death loses at most these)
RUNTIME_ENV = "RANDORI_RAY_RUNTIME_ENV"  # JSON: a runtime environment to add (pip, working_dir...)
NICENESS = "RAY_worker_niceness"


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs Ray, which is not installed: " + install_hint("ray")) from None
    return ray


class Ray(Executor):
    name = "ray"

    def __init__(self, address: str | None = None):
        self.address = address
        self.ray = import_ray()
        self.tasks: dict[int, tuple[asyncio.Task[None], Any]] = {}
        self.pids: dict[int, int] = {}  # batch -> the worker process running it
        self.niceness: dict[int, int] = {}  # worker process -> its niceness (the tests read it)
        self.owned = False
        self.number = 0
        self.lost_cases = 0

    async def start(self, run: RunSpec, sink: Sink) -> None:
        from randori.bench.executors.worker import WorkerSetup

        ray = self.ray
        self.sink = sink
        env = runtime_env({})
        if not ray.is_initialized():
            self.owned = True
            os.environ.setdefault(NICENESS, "0")  # read by the raylet and workers this process starts
            options: dict[str, Any] = {"runtime_env": env, "log_to_driver": False, "configure_logging": False}
            if self.address:
                options["address"] = self.address
            else:
                options |= {"include_dashboard": False, "_node_ip_address": "127.0.0.1"}
            try:
                ray.init(**options)  # in the main thread: Ray installs its signal handlers there
            except Exception as e:
                raise UserError(f"cannot start or reach the Ray cluster{' at ' + self.address if self.address else ''}:"
                                f" {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
        self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        setup, secrets = WorkerSetup.of(run, self.slots)
        self.batch = max(MIN_BATCH, 2 * setup.concurrency)
        self.run_id = uuid.uuid4().hex
        self.setup_ref = ray.put(setup)
        self.limits = ray.remote(num_cpus=0, max_concurrency=10_000)(LimitsActor).remote()
        self.remote = ray.remote(run_batch).options(num_cpus=1, max_retries=0, num_returns="streaming",
                                                    runtime_env=runtime_env(secrets))

    def capacity(self) -> int:
        return self.batch if len(self.tasks) < 2 * self.slots else 0

    def submit(self, batch: list[Case]) -> None:
        self.number += 1
        gen = self.remote.remote(self.run_id, self.setup_ref, self.limits, batch)
        task = asyncio.create_task(self._consume(self.number, batch, gen))
        self.tasks[self.number] = (task, gen)

    async def _consume(self, number: int, batch: list[Case], gen: Any) -> None:
        left = {c.key for c in batch}
        owner = None
        try:
            async for ref in gen:
                message = await ref
                if message[0] == "hello":
                    owner, self.pids[number], self.niceness[message[2]] = message[1:4]
                elif message[0] == "rows":
                    for row in message[1]:
                        left.discard(row.key)
                        self.sink.row(row)
                elif message[0] == "fatal":
                    self.sink.fail(fatal(message[1], message[2]))
                elif message[0] == "setup":
                    self.sink.fail(setup_failed(message[1]))
                elif message[0] == "crash":
                    self.sink.fail(RuntimeError(f"a Ray worker failed:\n{message[1]}"))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the worker died (killed, out of memory) or its node went away
            if owner is not None:
                self.limits.forget.remote(owner)
            self.lost_cases += len(left)
            self.sink.lost(sorted(left), f"its Ray worker died ({type(e).__name__})")
        else:
            if left:
                self.sink.lost(sorted(left), "its Ray task ended early")
        finally:
            self.tasks.pop(number, None)
            self.pids.pop(number, None)
            self.sink.poke()

    def status(self) -> str:
        return f"{len(set(self.pids.values()))}/{self.slots} workers"

    def worker_pids(self) -> list[int]:
        return sorted(set(self.pids.values()))

    async def close(self) -> None:
        for task, gen in list(self.tasks.values()):
            try:
                self.ray.cancel(gen, force=True)
            except Exception:  # already finished
                pass
            task.cancel()
        await asyncio.gather(*(t for t, _ in self.tasks.values()), return_exceptions=True)
        if hasattr(self, "limits") and not self.owned:  # on a cluster that outlives the run
            self.ray.kill(self.limits)
        if self.owned:
            self.ray.shutdown()


def runtime_env(secrets: dict[str, str]) -> dict[str, Any]:
    """The tasks' runtime environment: the driver's priority, the sealed secrets, the variables the
    model providers read (an existing cluster has its own environment), and RANDORI_RAY_RUNTIME_ENV."""
    from randori.agents.models import PROVIDER_INFO

    names = {v for info in PROVIDER_INFO.values() for v in info.env} | {"RANDORI_RETRY_BASE_DELAY"}
    env = {k: os.environ[k] for k in names if k in os.environ}
    env |= {NICENESS: "0", **secrets}
    extra: dict[str, Any] = {}
    raw = os.environ.get(RUNTIME_ENV)
    if raw:
        try:
            extra = json.loads(raw)
        except ValueError as e:
            raise UserError(f"{RUNTIME_ENV} must be a JSON object (a Ray runtime environment): {e}") from None
    return {**extra, "env_vars": {**extra.get("env_vars", {}), **env}}


class LimitsActor:
    """The providers' limits for every worker of the run (one actor)."""

    def __init__(self) -> None:
        from randori.agents.models.shared_limits import Coordinator

        self.coordinator = Coordinator()

    async def enter(self, *args: Any) -> Any:
        return await self.coordinator.enter(*args)

    async def leave(self, *args: Any) -> None:
        self.coordinator.leave(*args)

    async def abandon(self, *args: Any) -> None:
        self.coordinator.abandon(*args)

    async def forget(self, owner: str) -> None:
        self.coordinator.forget(owner)

    async def status(self) -> str:
        return self.coordinator.status()


class _ActorChannel:
    keeps = False  # the actor cannot reach its tasks unasked: every request asks

    def __init__(self, actor: Any, owner: str):
        self.actor, self.owner = actor, owner
        self.windows: dict[Any, Any] = {}

    async def ask(self, method: str, *args: Any) -> Any:
        return await getattr(self.actor, method).remote(*args)

    def tell(self, method: str, *args: Any) -> None:
        getattr(self.actor, method).remote(*args)


# In a Ray worker process: the event loop it keeps, and the Worker of the run it last served.
_state: dict[str, Any] = {}


def run_batch(run_id: str, setup: Any, limits: Any, cases: list[Case]) -> Iterator[tuple[Any, ...]]:
    """A Ray task: the rows of `cases`, yielded as they finish."""
    from randori.bench.executors.worker import Worker

    loop = _state.get("loop")
    if loop is None:
        loop = _state["loop"] = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    owner = f"{os.uname().nodename}:{os.getpid()}"
    if _state.get("run") != run_id:
        old = _state.pop("worker", None)
        if old is not None:
            loop.run_until_complete(old.close())
        worker = Worker(setup)
        try:
            loop.run_until_complete(worker.start(_ActorChannel(limits, owner)))
        except Exception as e:
            yield ("setup", setup_message(e))
            return
        _state["worker"], _state["run"] = worker, run_id
    worker = _state["worker"]
    yield ("hello", owner, os.getpid(), os.nice(0))
    pending = {loop.create_task(worker.run(c)) for c in cases}
    rows: list[Any] = []
    sent = time.monotonic()
    try:
        while pending:
            done, pending = loop.run_until_complete(asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED))
            failure: tuple[str, ...] | None = None
            for t in done:
                try:
                    rows.append(t.result())
                except FatalModelError as e:
                    failure = ("fatal", e.category, str(e))
                except ModelError as e:
                    failure = ("crash", f"{type(e).__name__}: {e}")
                except Exception:
                    failure = ("crash", traceback.format_exc(limit=8))
            # A yield costs Ray 0.5-1 ms here (a third of a scripted case): rows go together, every FLUSH_S.
            if rows and (not pending or failure is not None or time.monotonic() - sent >= FLUSH_S):
                yield ("rows", rows)
                rows, sent = [], time.monotonic()
            if failure is not None:
                yield failure
                return
    finally:
        for t in pending:
            t.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
