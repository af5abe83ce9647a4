"""The judge's side of a sandboxed run (standard library only: runs inside the sandbox).

In `separate` mode (the default) the tests run here and the code under test in another process
(`_sandbox_candidate.py`); the tests get `candidate`, and any other top-level function of the code
they name, as stand-ins that send each call across as plain data and rebuild the answer from data
(see `_sandbox_wire.py`). Other module-level names of the code the tests use (a Flask `app`, a
global, a class) are looked up in the code's process at every use and reach the tests as proxies,
so the tests still compare plain values here. Outcomes are written to a result channel only this
process holds.

In `shared` mode, for data sets whose tests use the code's module namespace (a Flask `app`, a
global), code and tests run together here, as they must: such a verdict can be forged by the code,
and every result says which mode judged it.
"""

from __future__ import annotations

import os
import time
import traceback

import _sandbox_wire as wire
from _sandbox_candidate import load_solution, register_source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MESSAGE_LIMIT = 1000
TESTS_FILE = "<tests>"


class CallTimeout(Exception):
    """A fuzzing call used more CPU time than allowed."""


# inotify(7): what happens in a watched folder, queued in this process where the code cannot reach.
_IN_EVENTS = {0x2: "modified", 0x4: "attributes changed", 0x8: "written", 0x40: "moved away", 0x80: "moved in",
              0x100: "created", 0x200: "deleted", 0x400: "folder deleted", 0x800: "folder moved",
              0x4000: "too many events"}
_IN_WATCH = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
_IN_NONBLOCK_CLOEXEC = 0o4000 | 0o2000000


class ExploitCanary:
    """A fresh folder (`path`) for a test's exploit to leave its trace in, watched by the judge.

    A security test points its payload here (`; touch {path}/pwned`, `../../{path}/x`); whatever
    the code under test then does, everything that happened in the folder is already queued in the
    judge's inotify descriptor: a file created and deleted again, the folder made read-only or
    removed, all show in `events()`. The code's own work folder is never where a test looks."""

    def __init__(self, base: str):
        import ctypes
        import secrets

        self.path = os.path.join(base, "canary-" + secrets.token_hex(8))
        os.mkdir(self.path)
        os.chmod(self.path, 0o777)
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(_IN_NONBLOCK_CLOEXEC)
        if self._fd < 0 or self._libc.inotify_add_watch(self._fd, self.path.encode(), _IN_WATCH) < 0:
            raise OSError(ctypes.get_errno(), "the judge cannot watch its canary folder")
        self._seen: list[str] = []

    def events(self) -> list[str]:
        """What happened in the folder so far ("created pwned", ...); empty when nothing did."""
        import struct

        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            if not data:
                break
            at = 0
            while at + 16 <= len(data):
                _, mask, _, size = struct.unpack_from("iIII", data, at)
                name = data[at + 16:at + 16 + size].split(b"\0", 1)[0].decode("utf-8", "replace")
                at += 16 + size
                for bit, what in _IN_EVENTS.items():
                    if mask & bit:
                        self._seen.append(f"{what} {name}".strip())
        return list(self._seen)

    def tripped(self) -> bool:
        return bool(self.events())

    def __str__(self) -> str:
        return self.path

    def __fspath__(self) -> str:
        return self.path


def fail_message(exc: BaseException, tb: Any) -> str:
    name = type(exc).__name__
    try:
        text = str(exc).strip()
    except BaseException:
        text = ""
    where = ""
    for frame in reversed(traceback.extract_tb(tb)):
        if frame.filename in (TESTS_FILE, "<solution>"):
            kind = "test" if frame.filename == TESTS_FILE else "solution"
            where = f" ({kind} line {frame.lineno}: {(frame.line or '').strip()[:200]})"
            break
    inner = getattr(exc, "where", "")
    if isinstance(inner, str) and inner:
        where += f" [raised at {inner[:250]}]"
    msg = wire.cap_text(f"{name}: {text}" if text else name, 600)
    return wire.cap_text(msg + where, MESSAGE_LIMIT)


def _stat_fields(pid: int) -> list[bytes]:
    """Fields of /proc/PID/stat after the command name (state, ppid, ...), or [] if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2:].split()


class Candidate:
    """The code under test, on the other end of a socket."""

    def __init__(self, fd: int, pid_fd: int | None = None, peak_fd: int | None = None):
        self.fd, self.pid_fd, self.peak_fd = fd, pid_fd, peak_fd
        self._pid: int | None = None
        self._tree_root, self._nested = 0, False
        # Functions of the tests' own handed to the code, which it may call back during a call.
        self.callbacks: list[Any] = []
        self._in_callback = False
        self._env_sent = dict(os.environ)
        self.gone: str | None = None
        # CPU time of the last call as the candidate's process measured it (used to calibrate fuzzing;
        # a candidate that lies about it only loosens its own fuzzing).
        self.last_cpu_s = 0.0

    def request(self, req: dict) -> dict:
        if self.gone:
            raise wire.PeerGone(self.gone)
        if self._in_callback:
            raise RuntimeError("a function of the tests that the code under test called back cannot call the code")
        try:
            wire.send(self.fd, req)
            reply = wire.recv(self.fd)
            while type(reply) is dict and reply.get("op") == "callback":
                wire.send(self.fd, self._answer_callback(reply))
                reply = wire.recv(self.fd)
        except wire.PeerGone:
            self.gone = "the code under test exited or closed its channel during a call"
        except wire.WireError as e:
            self.gone = f"the code under test sent an unusable reply: {e}"
        except OSError as e:
            self.gone = f"the channel to the code under test failed: {e}"
        else:
            if type(reply) is dict and type(reply.get("ok")) is bool:
                return reply
            self.gone = "the code under test sent a malformed reply"
        raise wire.PeerGone(self.gone)

    def load(self, names: list[str]) -> tuple[BaseException | None, list[str]]:
        reply = self.request({"op": "load", "names": names})
        if not reply["ok"]:
            return self._exception(reply), []
        missing = reply.get("missing")
        return None, [str(n) for n in missing] if type(missing) is list else names

    def _answer_callback(self, msg: dict) -> dict:
        """Run a function the tests handed to the code (a method of their mock request), as test
        code, on the plain data the code sent."""
        ref = msg.get("id")
        fn = self.callbacks[ref] if type(ref) is int and 0 <= ref < len(self.callbacks) else None
        self._in_callback = True
        try:
            if fn is None:
                raise LookupError("no such function of the tests")
            args = wire.decode(msg.get("args", []), self)
            kwargs = wire.decode(msg.get("kwargs", {"$": "dict", "v": []}), self)
            value = fn(*args, **kwargs)
            return {"ok": True, "value": wire.Encoder(callbacks=self.callbacks)(value)}
        except BaseException as e:
            return {"ok": False, "exc": wire.encode_exception(e)}
        finally:
            self._in_callback = False

    def remote(self, req: dict, args: tuple, kwargs: dict | None = None) -> Any:
        """One operation on an object of the candidate's (see `_sandbox_wire.RemoteObject`)."""
        if req.get("op") == "call":
            return self.call({"handle": req["handle"]}, args, kwargs or {})
        reply = self.request({**req, "args": wire.Encoder(callbacks=self.callbacks)(list(args))})
        if reply["ok"]:
            return self._decode(reply.get("value"))
        raise self._exception(reply)

    def global_value(self, name: str) -> Any:
        """A module-level name of the code, as it is now."""
        reply = self.request({"op": "global", "name": name})
        if reply["ok"]:
            return self._decode(reply.get("value"))
        raise self._exception(reply)

    def _sync_environment(self) -> None:
        """Tests that set environment variables for the code (`os.environ[...] = ...`) set them
        here; the code's process gets the changes before its next call."""
        env = dict(os.environ)
        if env == self._env_sent:
            return
        changes: dict[str, str | None] = {k: v for k, v in env.items() if self._env_sent.get(k) != v}
        changes.update({k: None for k in self._env_sent if k not in env})
        self._env_sent = env
        self.request({"op": "environ", "set": changes})

    def call(self, target: dict, args: tuple, kwargs: dict, cpu_s: float | None = None) -> Any:
        self._sync_environment()
        encode = wire.Encoder(callbacks=self.callbacks)
        mutable = [a for a in (*args, *kwargs.values()) if type(a) in (list, dict, set, bytearray)]
        req = {"op": "call", **target, "args": encode(list(args)), "kwargs": encode(dict(kwargs))}
        if cpu_s:
            req["cpu_s"] = cpu_s
        if mutable:
            req["after"] = True
        reply = self.request(req)
        cpu = reply.get("cpu_s")
        self.last_cpu_s = float(cpu) if isinstance(cpu, (int, float)) and 0 <= cpu < 1e6 else 0.0
        if reply.get("timeout"):
            raise CallTimeout(f"used more than {cpu_s:.2f}s of CPU")
        if mutable and "after" in reply:
            self._write_back(args, kwargs, reply["after"])
        if reply["ok"]:
            return self._decode(reply.get("value"))
        raise self._exception(reply)

    def cpu_time(self) -> float:
        """CPU seconds the code's whole process tree has used so far, read by this process from
        /proc: every live process of it (per thread, in nanoseconds) and every child they or the
        tree's init have reaped (the kernel adds those to the reaper). A child doing the work
        counts as much as the code itself; the code's own report of its time would be its word."""
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for pid, is_root in self._tree():
            stat = _stat_fields(pid)
            if len(stat) > 14:
                total += (int(stat[13]) + int(stat[14])) / tick  # cutime + cstime: reaped children
            if is_root and self._nested:
                continue  # the tree's init does no work of the code's
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tasks:
                try:
                    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                        total += int(f.read().split()[0]) / 1e9
                except (OSError, ValueError, IndexError):
                    continue
        return total

    def memory_peak(self) -> int:
        """Peak memory of the code's whole process tree in bytes, from its own memory cgroup where
        there is one (children that already exited count); otherwise the sum of the peak resident
        memory (VmHWM) of the tree's live processes, read from /proc."""
        if self.peak_fd is not None:
            try:
                return int(os.pread(self.peak_fd, 64, 0).split()[0])
            except (OSError, ValueError, IndexError):
                pass
        total = 0
        for pid, _ in self._tree():
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            total += int(line.split()[1]) * 1024
            except (OSError, ValueError, IndexError):
                continue
        return total

    def _tree(self) -> list[tuple[int, bool]]:
        """(pid, is the tree's root) for the code's process tree: the nested namespace's init and
        everything below it, or the code's process and its descendants."""
        root = self._root()
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                stat = _stat_fields(int(entry))
                if len(stat) > 1:
                    parents[int(entry)] = int(stat[1])
        out = [(root, True)]
        for pid in parents:
            p, hops = parents.get(pid), 0
            while p is not None and p > 1 and hops < 4096:
                if p == root:
                    out.append((pid, False))
                    break
                p, hops = parents.get(p), hops + 1
        return out

    def set_env(self, **values: str | None) -> None:
        """Set (or, with None, remove) environment variables in the candidate's process."""
        self.request({"op": "environ", "set": {k: None if v is None else str(v) for k, v in values.items()}})

    def seed_random(self, seed: int) -> None:
        """Seed the `random` module in the candidate's process."""
        self.request({"op": "seed", "seed": int(seed)})

    def helpers(self, job: dict) -> dict[str, Any]:
        return {"candidate_cpu_time": self.cpu_time, "candidate_memory_peak": self.memory_peak,
                "set_candidate_env": self.set_env, "seed_candidate_random": self.seed_random,
                "exploit_canary": canary_maker(job)}

    def _root(self) -> int:
        self._process()
        return self._tree_root

    def _process(self) -> int:
        if self._pid is None:
            line = os.read(self.pid_fd, 100).decode().split() if self.pid_fd is not None else []
            kind, pid = (line[0], int(line[1])) if len(line) == 2 else ("direct", 0)
            self._tree_root, self._nested = pid, kind == "nest"
            if kind == "nest":
                # The candidate is the only child of the nested namespace's init.
                for _ in range(500):
                    try:
                        with open(f"/proc/{pid}/task/{pid}/children") as f:
                            kids = f.read().split()
                    except OSError:
                        kids = []
                    if kids:
                        pid = int(kids[0])
                        break
                    time.sleep(0.002)
            self._pid = pid
        return self._pid

    def function(self, name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call({"name": name}, args, kwargs)

        call.__name__ = call.__qualname__ = name
        return call

    def _decode(self, value: Any) -> Any:
        try:
            return wire.decode(value, self)
        except (wire.WireError, ValueError, TypeError, KeyError, IndexError, RecursionError) as e:
            self.gone = f"the code under test sent a malformed value: {type(e).__name__}"
            raise wire.PeerGone(self.gone) from None

    def _exception(self, reply: dict) -> BaseException:
        d = reply.get("exc")
        if type(d) is not dict:
            self.gone = "the code under test sent a malformed reply"
            return wire.PeerGone(self.gone)
        return wire.decode_exception(d)

    def _write_back(self, args: tuple, kwargs: dict, after: Any) -> None:
        try:
            new_args, new_kwargs = self._decode(after)
        except (TypeError, ValueError):
            return
        pairs = list(zip(args, new_args, strict=False)) + [(v, new_kwargs.get(k)) for k, v in kwargs.items()]
        for old, new in pairs:
            if type(old) is not type(new):
                continue
            if type(old) in (list, bytearray):
                old[:] = new
            elif type(old) in (dict, set):
                old.clear()
                old.update(new)


# -- running the tests --------------------------------------------------------------------------

def _run_named(ns: dict, names: list[str], candidate: Any, emit: Callable[[dict], None]) -> None:
    for name in names:
        fn = ns.get(name)
        emit({"t": "start", "name": name})
        t0 = time.perf_counter()
        try:
            if not callable(fn):
                raise NameError(f"test {name} is not defined")
            fn(candidate)
            ok, msg = True, ""
        except BaseException as e:  # SystemExit and KeyboardInterrupt count as failures too
            ok, msg = False, fail_message(e, e.__traceback__)
        emit({"t": "test", "name": name, "ok": ok, "msg": msg, "s": round(time.perf_counter() - t0, 4)})


class _LiveNamespace(dict):
    """The tests' globals: the code's module-level names they use are read from the code's
    process at every use (after a call, a global shows its new value)."""

    def __init__(self, cand: Candidate, names: list[str], **values: Any):
        super().__init__(values)
        self._cand, self._names = cand, frozenset(names)

    def __missing__(self, key: str) -> Any:
        if key in self._names:
            return self._cand.global_value(key)
        raise KeyError(key)


def run_separate(job: dict, cand: Candidate, emit: Callable[[dict], None]) -> None:
    entry = job["entry_point"]
    functions = [n for n in job.get("functions", []) if n != entry]
    try:
        err, missing = cand.load([entry, *functions])
    except wire.PeerGone as e:
        emit({"t": "load", "ok": False, "msg": f"the code failed to load: {e}"})
        return
    if err is not None:
        emit({"t": "load", "ok": False, "msg": "the code failed to load: " + fail_message(err, None)})
        return
    if entry in missing:
        emit({"t": "load", "ok": False, "msg": f"the code defines no `{entry}`"})
        return
    ns: dict[str, Any] = _LiveNamespace(cand, [str(n) for n in job.get("code_names", [])], __name__="tests",
                                        SOLUTION_SOURCE=job["code"], **cand.helpers(job))
    for name in functions:
        if name not in missing:
            ns[name] = cand.function(name)
    if entry in job.get("functions", []):
        ns[entry] = cand.function(entry)  # tests that call the entry point by its name, not `candidate`
    register_source(TESTS_FILE, job["tests"])
    try:
        for stmt in job.get("imports", []):
            exec(stmt, ns)
        exec(compile(job["tests"], TESTS_FILE, "exec"), ns)
    except BaseException as e:
        emit({"t": "load", "ok": False, "msg": "test code failed to load: " + fail_message(e, e.__traceback__)})
        return
    emit({"t": "load", "ok": True})
    _run_named(ns, job["test_names"], cand.function(entry), emit)


def _in_process_helpers(job: dict) -> dict[str, Any]:
    """The judge's helpers for shared mode, where code and tests share one process."""
    import random

    def set_env(**values: str | None) -> None:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)

    def memory_peak() -> int:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    return {"SOLUTION_SOURCE": job["code"], "candidate_cpu_time": time.process_time,
            "candidate_memory_peak": memory_peak, "set_candidate_env": set_env, "seed_candidate_random": random.seed,
            "exploit_canary": canary_maker(job)}


def canary_maker(job: dict) -> Callable[[], ExploitCanary]:
    base = os.path.dirname(job["workdir"])  # /tmp in a namespace; the run's private folder otherwise

    def exploit_canary() -> ExploitCanary:
        return ExploitCanary(base)

    return exploit_canary


def run_shared(job: dict, emit: Callable[[dict], None]) -> None:
    try:
        mod = load_solution(job["code"], job["workdir"])
    except BaseException as e:
        emit({"t": "load", "ok": False, "msg": "the code failed to load: " + fail_message(e, e.__traceback__)})
        return
    ns = mod.__dict__
    for name, value in _in_process_helpers(job).items():
        ns.setdefault(name, value)
    candidate = ns.get(job["entry_point"])
    if candidate is None:
        emit({"t": "load", "ok": False, "msg": f"the code defines no `{job['entry_point']}`"})
        return
    register_source(TESTS_FILE, job["tests"])
    try:
        # Tests run in the solution's namespace: they may use its names (`app`, `os`, helpers).
        exec(compile(job["tests"], TESTS_FILE, "exec"), ns)
    except BaseException as e:
        emit({"t": "load", "ok": False, "msg": "test code failed to load: " + fail_message(e, e.__traceback__)})
        return
    emit({"t": "load", "ok": True})
    _run_named(ns, job["test_names"], candidate, emit)


# -- fuzzing ------------------------------------------------------------------------------------

def _fuzz_args(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__bytes__"}:
            import base64

            return base64.b64decode(value["__bytes__"])
        return {k: _fuzz_args(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fuzz_args(v) for v in value]
    return value


def run_fuzz(job: dict, cand: Candidate, emit: Callable[[dict], None]) -> None:
    entry = job["entry_point"]
    try:
        err, missing = cand.load([entry])
    except wire.PeerGone as e:
        emit({"t": "load", "ok": False, "msg": f"the code failed to load: {e}"})
        return
    if err is not None or entry in missing:
        msg = fail_message(err, None) if err is not None else f"the code defines no `{entry}`"
        emit({"t": "load", "ok": False, "msg": msg})
        return
    emit({"t": "load", "ok": True})
    fuzz = job["fuzz"]
    expected = set(fuzz["expected_exceptions"])
    target = {"name": entry}

    baseline = 0.0
    for args in fuzz.get("calibration") or []:
        try:
            cand.call(target, tuple(_fuzz_args(args)), {}, cpu_s=10.0)
        except wire.PeerGone:
            break
        except BaseException:
            pass  # the tests judge the examples; calibration only measures them
        baseline = max(baseline, cand.last_cpu_s)
    per_call = max(float(fuzz["per_call_s"]), 20 * baseline)
    # Stop before the run's wall-clock limit: a slow but correct function (a password KDF) gets
    # fewer inputs, and a hang at the end of the run is never confused with a slow input.
    deadline = time.monotonic() + float(fuzz.get("budget_s", 1e9))
    for i, args in enumerate(fuzz["inputs"]):
        if time.monotonic() + per_call > deadline:
            emit({"t": "fuzz-budget", "done": i})
            break
        emit({"t": "start", "name": f"fuzz-{i}", "input": i})
        try:
            cand.call(target, tuple(_fuzz_args(args)), {}, cpu_s=per_call)
        except CallTimeout:
            emit({"t": "fuzz", "input": i, "kind": "timeout", "msg": f"call used more than {per_call:.2f}s of CPU"})
        except wire.PeerGone as e:
            emit({"t": "fuzz", "input": i, "kind": "crash", "exc": "process died", "msg": str(e)})
            break
        except BaseException as e:
            # An exception the solution defines itself, or a documented rejection, is deliberate.
            names = {c.__name__ for c in type(e).__mro__}
            if names & expected or getattr(type(e), "__module__", "") == "solution":
                continue
            emit({"t": "fuzz", "input": i, "kind": "crash", "exc": type(e).__name__,
                  "msg": fail_message(e, e.__traceback__)})


def run_setup(job: dict) -> None:
    if job.get("setup"):
        # Task set-up (e.g. building a database) runs before the code under test is loaded.
        register_source("<setup>", job["setup"])
        exec(compile(job["setup"], "<setup>", "exec"), {"__name__": "setup"})

