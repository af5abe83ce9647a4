"""`--executor processes[=N]`: N worker processes on this machine (default one per core), each a
fresh interpreter (as multiprocessing's spawn: nothing of the driver's event loop, threads or
clients is inherited).

Each worker connects back to the driver over a Unix socket in a private directory; everything
between them goes over that one connection as pickled messages: the setup, batches, each finished
case's row, and the questions of the shared rate limit (the driver keeps every server's window for
all workers: shared_limits.Coordinator). A worker that dies closes its connection: its unfinished
cases go back to the driver's queue and a new worker takes its place."""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import itertools
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from randori.agents.models.shared_limits import Coordinator
from randori.bench.cases import Case
from randori.bench.executors.base import Executor, RunSpec, Sink, fatal, setup_failed, setup_message
from randori.errors import FatalModelError, ModelError, UserError
from randori.sandboxing import socket_dir
from randori.terminal import flush_output, quick_exit

# A batch is one message each way; a worker holds its `concurrency` cases plus one batch more, so it
# never waits for the driver between batches.
MAX_BATCH = 32
STOP_WAIT_S = 10.0  # a worker asked to stop gets this long to end its cases' agents cleanly


async def send(writer: asyncio.StreamWriter, message: tuple[Any, ...]) -> None:
    put(writer, message)
    await writer.drain()


def put(writer: asyncio.StreamWriter, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(len(data).to_bytes(4, "big") + data)


async def receive(reader: asyncio.StreamReader) -> tuple[Any, ...]:
    size = int.from_bytes(await reader.readexactly(4), "big")
    return pickle.loads(await reader.readexactly(size))  # noqa: S301  (our own worker, over a private socket)


@dataclass
class _Conn:
    pid: int
    writer: asyncio.StreamWriter
    batches: dict[int, set[str]] = field(default_factory=dict)  # unfinished cases per batch
    load: int = 0  # its unfinished cases, counted as they go out and come back (asked after every row)


class Processes(Executor):
    name = "processes"

    def __init__(self, workers: int | None = None, start_method: str | None = None):
        self.workers = workers or os.cpu_count() or 1
        self.start_method = start_method  # "fork", "spawn" or None: fork where `can_fork` says it is safe
        self.conns: dict[int, _Conn] = {}
        self.procs: list[Any] = []
        self.restarts = 0
        self.closing = False
        self.ids = itertools.count(1)
        self.coordinator = Coordinator(notify=self._notify)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.seen: set[int] = set()  # workers that connected
        self.hints: list[str] = []  # suites the workers load before their setup
        self.model_hints: list[str] = []  # models whose providers they import meanwhile
        self.env: dict[str, str] = {}  # sealed secrets, for the workers' environment
        self.why = ""  # why the last worker was lost

    def warm(self, suites: Sequence[str] = (), models: Sequence[str] = ()) -> None:
        """The workers start now, on a socket that is listening but not yet served: they import
        randori (forked, they have it already), load `suites` and import the providers of `models`
        (an HTTP client, an SDK) while the driver plans: their start-up overlaps the driver's instead
        of following it, and their first request does not wait for an import. Then they wait for
        their setup."""
        if self.procs:
            return
        self.hints = list(suites)
        self.model_hints = list(models)
        self.dir = socket_dir("randori-workers-", "driver.sock")  # mode 0700: only this user connects
        self.path = os.path.join(self.dir, "driver.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(max(128, 2 * self.workers))
        for _ in range(self.workers):
            self._spawn()
        atexit.register(self._abandon)

    async def start(self, run: RunSpec, sink: Sink) -> None:
        from randori.bench.executors.worker import WorkerSetup

        self.sink = sink
        self.setup, self.env = WorkerSetup.of(run, self.workers)
        self.batch = max(1, min(MAX_BATCH, self.setup.concurrency))
        if self.env and self.procs:  # sealed secrets reach workers through their environment only
            self._abandon()
            self.procs, self.restarts = [], 0
        self.warm(list(run.suites), [run.model.name] if run.model is not None else [])
        self.server = await asyncio.start_unix_server(self._serve, sock=self.listener)
        self.watch = asyncio.create_task(self._watch())

    def _spawn(self) -> None:
        if self.start_method == "fork" or (self.start_method is None and can_fork()):
            self.procs.append(self._fork())
            return
        # A fresh interpreter running this module (as multiprocessing's spawn does, without its
        # re-import of the caller's __main__, which a script with no main guard would run again).
        cmd = [sys.executable, "-m", "randori.bench.executors.processes", self.path, *self.hints,
               *(a for m in self.model_hints for a in ("--model", m))]
        self.procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env={**os.environ, **self.env}))

    def _fork(self) -> Forked:
        """A worker forked from this process (see `can_fork`): it starts with randori imported."""
        flush_output()  # nothing buffered is written twice
        pid = os.fork()
        if pid:
            return Forked(pid)
        try:  # the worker: it never returns into the code that forked it
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # at once: Ctrl-C reaches the whole group
            atexit._clear()  # the driver's exit handlers are the driver's
            self.listener.close()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.environ.update(self.env)
            worker_main(self.path, self.hints, self.model_hints)
        except BaseException:
            with contextlib.suppress(Exception):
                traceback.print_exc()
        finally:
            os._exit(1)

    def discard(self) -> None:
        if self.procs and not hasattr(self, "server"):
            self._abandon()
            atexit.unregister(self._abandon)

    def _abandon(self) -> None:
        """Workers warmed for a run that did not start (or a run's leftovers): stopped, their socket gone."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5.0)
        with contextlib.suppress(OSError):
            self.listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def capacity(self) -> int:
        if not self.conns:
            return 0
        conn = min(self.conns.values(), key=lambda c: c.load)
        return min(self.batch, self.setup.concurrency + self.batch - conn.load)

    def submit(self, batch: list[Case]) -> None:
        conn = min(self.conns.values(), key=lambda c: c.load)
        number = next(self.ids)
        keys = conn.batches[number] = {c.key for c in batch}
        conn.load += len(keys)
        put(conn.writer, ("batch", number, batch))

    def status(self) -> str:
        alive = len(self.conns)
        text = f"{alive}/{self.workers} workers"
        shared = self.coordinator.status()
        return f"{text}, {shared}" if shared else text

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            hello = await receive(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        conn = _Conn(pid=hello[1], writer=writer)
        self.seen.add(conn.pid)
        if self.closing:  # it connects after the run ended (a short run, a slow start): nothing to do
            writer.close()  # it leaves at once, instead of waiting for a setup until it is killed
            return
        put(writer, ("setup", self.setup))
        self.conns[conn.pid] = conn
        self.sink.poke()
        why = "its worker process died"
        try:
            while True:
                message = await receive(reader)
                self._handle(conn, message)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception as e:  # a message we cannot read: that worker is of no use
            why = f"its worker sent what the driver cannot read ({type(e).__name__})"
        finally:
            self.conns.pop(conn.pid, None)
            self.coordinator.forget(str(conn.pid))
            writer.close()
            if not self.closing:
                self._lost(conn, why)

    async def _watch(self) -> None:
        """A worker that exits before it connects (it could not even start) is a death too."""
        counted: set[int] = set()
        while True:
            await asyncio.sleep(0.5)
            for proc in self.procs:
                if proc.poll() is not None and proc.pid not in counted:
                    counted.add(proc.pid)
                    if not self.closing and proc.pid not in self.seen:
                        self._lost(None, f"a worker process exited with status {proc.returncode} before it started")
            if not self.closing and not self.conns and all(p.poll() is not None for p in self.procs):
                self.sink.fail(UserError(f"no worker process is left: {self.why} (see the messages above)"))

    def _lost(self, conn: _Conn | None, why: str) -> None:
        keys = [k for b in conn.batches.values() for k in b] if conn is not None else []
        if keys:
            self.sink.lost(keys, why)
        if self.restarts < self.workers:  # a worker that dies at once every time must not loop forever
            self.restarts += 1
            self._spawn()
        self.why = why

    def _handle(self, conn: _Conn, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "row":
            _, number, result = message
            batch = conn.batches.get(number)
            if batch is not None and result.key in batch:
                batch.discard(result.key)
                conn.load -= 1
                if not batch:
                    del conn.batches[number]
            self.sink.row(result)
        elif kind == "ask":
            task = asyncio.create_task(self._answer(conn, *message[1:]))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        elif kind == "tell":
            getattr(self.coordinator, message[1])(*message[2:])
        elif kind == "fatal":
            self.sink.fail(fatal(message[1], message[2]))
        elif kind == "setup":
            self.sink.fail(setup_failed(message[1]))
        elif kind == "crash":
            self.sink.fail(RuntimeError(f"a worker process failed:\n{message[1]}"))

    def _notify(self, owner: str, message: tuple[Any, ...]) -> None:
        conn = self.conns.get(int(owner))
        if conn is not None and not conn.writer.is_closing():
            put(conn.writer, message)

    async def _answer(self, conn: _Conn, number: int, method: str, *args: Any) -> None:
        try:
            value = await getattr(self.coordinator, method)(*args)
        except asyncio.CancelledError:
            return
        if not conn.writer.is_closing():
            put(conn.writer, ("answer", number, value))

    async def close(self) -> None:
        self.closing = True
        if not hasattr(self, "server"):  # start failed before serving: stop any worker warmed
            self.discard()
            return
        self.watch.cancel()
        for conn in list(self.conns.values()):
            with contextlib.suppress(Exception):
                put(conn.writer, ("stop",))
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._join)
        for task in list(self.tasks):
            task.cancel()
        self.server.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        atexit.unregister(self._abandon)

    def _join(self) -> None:
        import time

        deadline = time.monotonic() + STOP_WAIT_S
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.0, deadline - time.monotonic()))
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5.0)

    def pids(self) -> list[int]:
        """The worker processes connected now (the tests kill one)."""
        return list(self.conns)


def can_fork() -> bool:
    """Whether a worker may be forked from this process: on Linux, before anything a child must not
    inherit exists (another thread, whose locks it could inherit held; a running event loop). That is
    when the CLI warms its pool: the child then starts with randori imported instead of importing it
    again (0.15 s of CPU per worker, on the cores the driver plans on). Later workers (one replacing
    a dead worker) and other platforms get a fresh interpreter, as multiprocessing's spawn does."""
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none: the only way to ask without a private function
        return True
    return False


class Forked:
    """A forked worker, with what the pool uses of a `subprocess.Popen`."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: it is gone, how it ended is not known
                self.returncode = -1
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            time.sleep(0.005)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


class _SocketChannel:
    """The shared rate limit's questions, over the worker's connection to the driver (which can also
    ask this worker for its kept places back: it may keep them)."""

    keeps = True

    def __init__(self, writer: asyncio.StreamWriter, owner: str):
        self.writer, self.owner = writer, owner
        self.windows: dict[Any, Any] = {}
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.numbers = itertools.count(1)

    async def ask(self, method: str, *args: Any) -> Any:
        number = next(self.numbers)
        fut = self.waiting[number] = asyncio.get_running_loop().create_future()
        put(self.writer, ("ask", number, method, *args))
        try:
            return await fut
        finally:
            self.waiting.pop(number, None)

    def tell(self, method: str, *args: Any) -> None:
        if not self.writer.is_closing():
            put(self.writer, ("tell", method, *args))

    def answer(self, number: int, value: Any) -> None:
        fut = self.waiting.get(number)
        if fut is not None and not fut.done():
            fut.set_result(value)


def worker_main(path: str, suites: Sequence[str] = (), models: Sequence[str] = ()) -> None:
    """A worker process: Ctrl-C goes to the whole process group, and the driver decides what stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _preload(suites, models)
    asyncio.run(_work(path))
    # Its cases, agents and model are closed and its rows sent. The exit handlers still run (the
    # sandbox's and external agents' cleanup), but not the interpreter's teardown: the driver waits
    # for every worker to leave at the end of a run.
    quick_exit(0)


def _preload(suites: Sequence[str], models: Sequence[str] = ()) -> None:
    """What every worker needs, loaded while the driver plans: the case runner, the suites the run
    names and what its models' providers import (a suite or provider that cannot load is left for
    the setup to report)."""
    import randori.bench.executors.worker  # noqa: F401
    from randori.agents.models import preload
    from randori.suites import ready_suite

    for name in suites:
        with contextlib.suppress(Exception):
            ready_suite(name, reach=False)
    for name in models:
        preload(name)


class Starter:
    """Starts the cases of the batches a worker receives, one per turn of its event loop. A case runs
    its agent's set-up (about 1 ms) before its first request; started all at once, the cases of a
    run's first batches (a worker's whole share of the concurrency) kept the replies and the
    coordinator's answers that had arrived meanwhile waiting for all of them: the run's first
    request left 60 ms later."""

    def __init__(self, run: Callable[[int, Case], Coroutine[Any, Any, None]]):
        self.run = run
        self.pending: collections.deque[tuple[int, Case]] = collections.deque()
        self.more = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()  # the cases started and not finished

    def add(self, number: int, cases: Sequence[Case]) -> None:
        """Batch `number` arrived: its cases start in turn."""
        self.pending.extend((number, case) for case in cases)
        self.more.set()

    async def serve(self) -> None:
        while True:
            await self.more.wait()
            self.more.clear()
            while self.pending:
                task = asyncio.create_task(self.run(*self.pending.popleft()))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
                await asyncio.sleep(0)  # what arrived meanwhile is read before the next case starts


async def _work(path: str) -> None:
    from randori.bench.executors.worker import Worker

    try:
        reader, writer = await asyncio.open_unix_connection(path)
    except OSError:  # the driver is gone already (it stopped while this worker was starting)
        return
    pid = os.getpid()
    await send(writer, ("hello", pid))
    try:
        _, setup = await receive(reader)
        channel = _SocketChannel(writer, str(pid))
        worker = Worker(setup)
        await worker.start(channel)
    except asyncio.IncompleteReadError:
        return
    except Exception as e:
        await send(writer, ("setup", setup_message(e)))
        return

    async def one(number: int, case: Case) -> None:
        try:
            put(writer, ("row", number, await worker.run(case)))
        except asyncio.CancelledError:
            raise
        except FatalModelError as e:
            put(writer, ("fatal", e.category, str(e)))
        except ModelError as e:
            put(writer, ("crash", f"{type(e).__name__}: {e}"))
        except BaseException:
            put(writer, ("crash", traceback.format_exc(limit=8)))

    starter = Starter(one)
    starting = asyncio.create_task(starter.serve())
    try:
        while True:
            try:
                message = await receive(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            if message[0] == "batch":
                starter.add(message[1], message[2])
            elif message[0] == "answer":
                channel.answer(message[1], message[2])
            elif message[0] == "revoke":
                if message[1] in channel.windows:
                    channel.windows[message[1]].revoke()
            elif message[0] == "stop":
                break
    finally:
        starting.cancel()
        for task in list(starter.tasks):
            task.cancel()
        await asyncio.gather(starting, *starter.tasks, return_exceptions=True)
        await worker.close()
        writer.close()


def _argv(args: Sequence[str]) -> tuple[str, list[str], list[str]]:
    """A worker's command line: the driver's socket, the suites, then `--model NAME` for each model."""
    suites, models = [], []
    rest = iter(args[1:])
    for a in rest:
        if a == "--model":
            models.append(next(rest, ""))
        else:
            suites.append(a)
    return args[0], suites, models


if __name__ == "__main__":
    worker_main(*_argv(sys.argv[1:]))
