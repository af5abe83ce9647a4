"""Run generated code and its tests in a sandbox: one fresh child process tree per run.

Each run gets a new session; new PID, mount, network, IPC and UTS namespaces where the kernel
allows it (as root directly, otherwise through a user namespace); an unprivileged uid unique to the
run (as root); rlimits on CPU, address space, processes, file size and open files; a wall-clock
limit; a read-only root file system with a private tmpfs for /tmp whose `work` folder is a fresh
copy of the task's fixtures and the cwd of the code. When the run ends, every process it created
dies with its PID namespace. `RunResult.isolation` says which of these protections were in force.

The work inside the sandbox is done by `_sandbox_child.py`, a standard-library-only program run as
`python -I` (plus `-S` when the code needs no third-party packages). It normally runs as a fork
server (`_Zygote`), so a run costs a fork instead of an interpreter start.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import signal
import sys
import sysconfig
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

CHILD = Path(__file__).with_name("_sandbox_child.py")
Mode = Literal["auto", "namespaces", "userns", "process"]
# Exceptions a function may raise on purpose to reject bad input; the fuzzer does not report them.
# OSError covers the file errors (not found, permission, name too long) bad input leads to.
EXPECTED_EXCEPTIONS = ("ValueError", "TypeError", "KeyError", "OSError", "OverflowError")


class SandboxUnavailable(RuntimeError):
    """No sandbox mode that is safe here could be set up."""


@dataclass(frozen=True)
class Limits:
    wall_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    nproc: int = 32
    fsize_mb: int = 16
    tmpfs_mb: int = 64


@dataclass
class TestOutcome:
    name: str
    passed: bool
    message: str = ""
    duration_s: float = 0.0


@dataclass
class RunResult:
    """What one sandboxed run produced. `status`: completed | timeout | crashed | setup_error."""

    status: str
    loaded: bool
    load_error: str | None
    outcomes: list[TestOutcome]
    output: str
    isolation: dict[str, Any]
    duration_s: float
    exit_code: int | None = None
    fuzz_events: list[dict[str, Any]] = field(default_factory=list)
    last_started: str | None = None
    error: str | None = None

    @property
    def passed(self) -> bool:
        return (self.status == "completed" and self.loaded and bool(self.outcomes)
                and all(o.passed for o in self.outcomes))

    def failure_messages(self) -> list[str]:
        msgs = [f"{o.name}: {o.message}" for o in self.outcomes if not o.passed]
        if self.load_error:
            msgs.insert(0, self.load_error)
        if self.error:
            msgs.insert(0, self.error)
        return msgs

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TestJob:
    """Code plus tests to run in one sandbox. `test_names` are the functions to call with the
    entry point (for a CodeSecEval item: ["check"])."""

    __test__ = False  # not a pytest class, whatever its name says

    code: str
    tests: str
    entry_point: str
    test_names: Sequence[str]
    fixture_dir: Path | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    links: Mapping[str, str] = field(default_factory=dict)
    setup: str = ""
    site_packages: bool = False


def _world_traversable(path: str) -> bool:
    p = Path(path).resolve()
    for parent in [*reversed(p.parents), p]:
        try:
            if not parent.stat().st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


def _expose_paths(site_packages: bool) -> list[str]:
    paths = {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib"),
             os.path.dirname(os.path.realpath(sys.executable))}
    if site_packages:
        paths |= {sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), sys.prefix}
    return sorted(p for p in paths if p)


class Sandbox:
    """Runs jobs; safe to share between concurrent tasks of one event loop."""

    _probed: dict[str, str] = {}
    _probe_lock = threading.Lock()

    def __init__(self, limits: Limits | None = None, mode: Mode = "auto", python: str | None = None,
                 max_parallel: int | None = None, prefork: bool = True):
        self.limits = limits or Limits()
        self.python = python or sys.executable
        self._mode: str | None = None if mode == "auto" else mode
        # More concurrent sandboxes than cores only adds contention (and timeouts under load).
        self.max_parallel = max_parallel or 2 * (os.cpu_count() or 1)
        self._slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        # Jobs go to a pre-forked interpreter (see `_Zygote`) unless this is False.
        self.prefork = prefork

    def _slot(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._slots.get(loop)
        if sem is None:
            self._slots = {lp: s for lp, s in self._slots.items() if not lp.is_closed()}
            sem = self._slots[loop] = asyncio.Semaphore(self.max_parallel)
        return sem

    # -- mode selection -------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        if self._mode is None:
            self._mode = self._detect()
        return self._mode

    def _detect(self) -> str:
        with self._probe_lock:
            cached = self._probed.get(self.python)
            if cached:
                return cached
            candidates = ["namespaces"] if os.geteuid() == 0 else ["userns"]
            for mode in candidates:
                res = self._run_sync(mode, _PROBE, kind="tests", limits=Limits(wall_s=10))
                if res.passed:
                    self._probed[self.python] = mode
                    return mode
            self._check_process_mode()
            self._probed[self.python] = "process"
            return "process"

    def _check_process_mode(self) -> None:
        if os.geteuid() == 0 and not _world_traversable(sysconfig.get_path("stdlib")):
            raise SandboxUnavailable(
                "cannot sandbox generated code here: namespaces are unavailable and, as root, the code "
                f"would run with full privileges ({sysconfig.get_path('stdlib')} is not readable by an "
                "unprivileged user); run as a normal user or allow unshare(2)")

    # -- running --------------------------------------------------------------------------------
    def _job_dict(self, mode: str, job: TestJob, kind: str, limits: Limits,
                  fuzz: dict[str, Any] | None) -> dict[str, Any]:
        root = os.geteuid() == 0
        return {
            "mode": mode, "kind": kind, "code": job.code, "tests": job.tests,
            "entry_point": job.entry_point, "test_names": list(job.test_names),
            "fixture_dir": str(job.fixture_dir) if job.fixture_dir else None,
            "files": dict(job.files), "links": dict(job.links), "setup": job.setup, "limits": asdict(limits),
            # As root the worker always gets its own uid; otherwise it keeps the user's.
            "drop_uid": root and mode in ("namespaces", "process"),
            "expose": _expose_paths(job.site_packages) if root and mode == "namespaces" else [],
            "fuzz": fuzz,
        }

    def _argv(self, site_packages: bool) -> list[str]:
        return [self.python, "-I", *([] if site_packages else ["-S"]), "-B", str(CHILD)]

    async def run(self, job: TestJob, *, limits: Limits | None = None) -> RunResult:
        return await self._run(job, "tests", limits or self.limits, None)

    async def fuzz(self, job: TestJob, inputs: list[list[Any]], *, calibration: list[list[Any]] | None = None,
                   expected: Sequence[str] = EXPECTED_EXCEPTIONS, per_call_s: float = 1.0,
                   limits: Limits | None = None) -> RunResult:
        """Call the entry point with each argument list. A call fails when it raises an exception
        not named in `expected` (by class or base class name) or uses more CPU time than
        max(per_call_s, 20 x the slowest calibration call)."""
        lim = limits or self.limits
        fuzz = {"inputs": inputs, "calibration": calibration or [], "per_call_s": per_call_s,
                "expected_exceptions": list(expected), "budget_s": 0.75 * lim.wall_s}
        return await self._run(job, "fuzz", lim, fuzz)

    async def _run(self, job: TestJob, kind: str, limits: Limits, fuzz: dict[str, Any] | None) -> RunResult:
        async with self._slot():
            return await self._run_now(job, kind, limits, fuzz)

    async def _run_now(self, job: TestJob, kind: str, limits: Limits, fuzz: dict[str, Any] | None) -> RunResult:
        mode = await asyncio.get_running_loop().run_in_executor(None, lambda: self.mode) \
            if self._mode is None else self._mode
        payload = json.dumps(self._job_dict(mode, job, kind, limits, fuzz)).encode()
        if self.prefork:
            zygote = _Zygote.get(self._argv(job.site_packages))
            if zygote is not None:
                try:
                    return await zygote.submit(payload, limits.wall_s + 15, mode)
                except _ZygoteGone:
                    pass  # it died between jobs (killed from outside): one spawned run, then a new one
        return await self._spawn(payload, job.site_packages, limits, mode)

    async def _spawn(self, payload: bytes, site_packages: bool, limits: Limits, mode: str) -> RunResult:
        proc = await asyncio.create_subprocess_exec(
            *self._argv(site_packages), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, env=_child_env(), cwd="/")
        try:
            # The supervisor enforces the wall limit itself; this outer bound only catches a
            # supervisor that is stuck, which must never hang the harness.
            out, err = await asyncio.wait_for(proc.communicate(payload), timeout=limits.wall_s + 15)
        except asyncio.TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            return _broken("supervisor did not finish; killed", mode)
        except BaseException:
            _kill_group(proc.pid)
            raise
        _kill_group(proc.pid)
        return _parse(out, err, mode)

    def run_sync(self, job: TestJob, *, limits: Limits | None = None) -> RunResult:
        return asyncio.run(self.run(job, limits=limits))

    def _run_sync(self, mode: str, job: TestJob, *, kind: str, limits: Limits) -> RunResult:
        import subprocess

        payload = json.dumps(self._job_dict(mode, job, kind, limits, None)).encode()
        try:
            cp = subprocess.run(self._argv(job.site_packages), input=payload, capture_output=True,
                                timeout=limits.wall_s + 15, start_new_session=True, env=_child_env(), cwd="/")
        except subprocess.TimeoutExpired:
            return _broken("probe timed out", mode)
        return _parse(cp.stdout, cp.stderr, mode)


class _ZygoteGone(Exception):
    pass


class _Zygote:
    """A fork server running `_sandbox_child.py --serve`: it starts Python and imports once, then
    forks a fresh supervisor per job, which is what makes >= 10 sandboxed runs/s possible on two
    cores. It listens on a Unix socket in a private (0700) temporary folder, which sandboxed code
    cannot see (private /tmp, other uid), and exits when the harness closes its stdin."""

    _live: dict[tuple[str, ...], _Zygote] = {}
    _lock = threading.Lock()

    def __init__(self, argv: list[str]):
        import socket
        import subprocess
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="randori-zygote-")
        self.path = os.path.join(self.dir, "sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.path)
            listener.listen(256)
            self.proc = subprocess.Popen([*argv, "--serve", str(listener.fileno())], stdin=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         pass_fds=[listener.fileno()], env=_child_env(), cwd="/",
                                         start_new_session=True)
        finally:
            listener.close()

    @classmethod
    def get(cls, argv: list[str]) -> _Zygote | None:
        key = tuple(argv)
        with cls._lock:
            z = cls._live.get(key)
            if z is not None and z.proc.poll() is None:
                return z
            if z is not None:
                z.close()
            try:
                z = cls._live[key] = _Zygote(argv)
            except OSError:
                return None
            return z

    async def submit(self, payload: bytes, timeout: float, mode: str) -> RunResult:
        try:
            reader, writer = await asyncio.open_unix_connection(self.path, limit=1 << 24)
        except OSError as e:
            raise _ZygoteGone() from e
        pid = None
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            if not line:
                raise _ZygoteGone()
            pid = int(line)
            writer.write(payload)
            writer.write_eof()
            await writer.drain()
            out = await asyncio.wait_for(reader.read(), timeout)
        except asyncio.TimeoutError:
            if pid is not None:
                _kill_group(pid)
            return _broken("supervisor did not finish; killed", mode)
        except BaseException:
            if pid is not None:
                _kill_group(pid)
            raise
        finally:
            writer.close()
        return _parse(out, b"", mode)

    def close(self) -> None:
        import shutil

        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    @classmethod
    def close_all(cls) -> None:
        with cls._lock:
            for z in cls._live.values():
                z.close()
            cls._live.clear()


atexit.register(_Zygote.close_all)


_PROBE = TestJob(code="def f():\n    return 41 + 1\n",
                 tests="def test_probe(candidate):\n    assert candidate() == 42\n",
                 entry_point="f", test_names=["test_probe"])


def _child_env() -> dict[str, str]:
    # Nothing from the harness environment (API keys!) reaches the sandbox.
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _broken(message: str, mode: str) -> RunResult:
    return RunResult(status="setup_error", loaded=False, load_error=None, outcomes=[], output="",
                     isolation={"mode": mode}, duration_s=0.0, error=message)


def _parse(out: bytes, err: bytes, mode: str) -> RunResult:
    try:
        data = json.loads(out)
    except ValueError:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
        return _broken("sandbox supervisor failed: " + (" | ".join(tail) or "no output"), mode)
    loaded, load_error, last_started, setup_error = False, None, None, data.get("error")
    outcomes: dict[str, TestOutcome] = {}
    fuzz_events: list[dict[str, Any]] = []
    for ev in data.get("events", []):
        t = ev.get("t")
        if t == "load":
            loaded = bool(ev.get("ok"))
            load_error = None if loaded else str(ev.get("msg", "failed to load"))
        elif t == "start":
            last_started = str(ev.get("name"))
        elif t == "test":
            outcomes[str(ev["name"])] = TestOutcome(str(ev["name"]), bool(ev.get("ok")),
                                                    str(ev.get("msg", "")), float(ev.get("s", 0.0)))
            last_started = None
        elif t == "fuzz":
            fuzz_events.append(ev)
        elif t == "setup":
            setup_error = "sandbox set-up failed: " + str(ev.get("msg"))
    status = data.get("status", "setup_error")
    if setup_error and status == "completed":
        status = "setup_error"
    exit_code = data.get("exit_code")
    result = RunResult(status=status, loaded=loaded, load_error=load_error, outcomes=list(outcomes.values()),
                       output=str(data.get("output", "")), isolation=data.get("isolation") or {"mode": mode},
                       duration_s=float(data.get("duration_s", 0.0)), exit_code=exit_code,
                       fuzz_events=fuzz_events, last_started=last_started, error=setup_error)
    if status == "completed" and exit_code not in (0, None) and not setup_error:
        result.status = "crashed"
    return result


def finalize_outcomes(result: RunResult, test_names: Sequence[str]) -> RunResult:
    """Every expected test gets an outcome: those that never ran fail with the reason why."""
    have = {o.name for o in result.outcomes}
    if result.status == "timeout":
        why = "did not finish: the sandbox wall-clock limit was reached"
    elif result.status == "crashed":
        why = f"did not finish: the test process died (exit {result.exit_code})"
    elif result.status == "setup_error":
        why = f"did not run: {result.error}"
    elif not result.loaded:
        why = f"did not run: {result.load_error}"
    else:
        why = "did not run"
    for name in test_names:
        if name not in have:
            msg = why if name == result.last_started or result.status != "timeout" else \
                "did not run: an earlier test hit the wall-clock limit"
            if name == result.last_started and result.status == "timeout":
                msg = "timed out: " + why
            result.outcomes.append(TestOutcome(name, False, msg))
    return result
