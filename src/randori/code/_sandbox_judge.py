"""The judge's side of a sandboxed run (standard library only: runs inside the sandbox).

In `separate` mode (the default) the tests run here and the code under test in another process
(`_sandbox_candidate.py`); the tests get `candidate`, and any other top-level function of the code
they name, as stand-ins that send each call across as plain data and rebuild the answer from data
(see `_sandbox_wire.py`). Outcomes are written to a result channel only this process holds.

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


class Candidate:
    """The code under test, on the other end of a socket."""

    def __init__(self, fd: int, pid_fd: int | None = None):
        self.fd, self.pid_fd = fd, pid_fd
        self._pid: int | None = None
        self.gone: str | None = None
        # CPU time of the last call as the candidate's process measured it (used to calibrate fuzzing;
        # a candidate that lies about it only loosens its own fuzzing).
        self.last_cpu_s = 0.0

    def request(self, req: dict) -> dict:
        if self.gone:
            raise wire.PeerGone(self.gone)
        try:
            wire.send(self.fd, req)
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

    def call(self, target: dict, args: tuple, kwargs: dict, cpu_s: float | None = None) -> Any:
        encode = wire.Encoder()
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
        """CPU seconds the candidate's process has used so far, read by this process from /proc
        (the candidate's own report of its CPU time would be its word, not a measurement)."""
        pid = self._process()
        total = 0.0
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return 0.0
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0]) / 1e9
            except (OSError, ValueError, IndexError):
                continue
        return total

    def memory_peak(self) -> int:
        """Peak resident memory of the candidate's process in bytes (VmHWM), read from /proc."""
        try:
            with open(f"/proc/{self._process()}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return 0

    def set_env(self, **values: str | None) -> None:
        """Set (or, with None, remove) environment variables in the candidate's process."""
        self.request({"op": "environ", "set": {k: None if v is None else str(v) for k, v in values.items()}})

    def seed_random(self, seed: int) -> None:
        """Seed the `random` module in the candidate's process."""
        self.request({"op": "seed", "seed": int(seed)})

    def helpers(self) -> dict[str, Any]:
        return {"candidate_cpu_time": self.cpu_time, "candidate_memory_peak": self.memory_peak,
                "set_candidate_env": self.set_env, "seed_candidate_random": self.seed_random}

    def _process(self) -> int:
        if self._pid is None:
            line = os.read(self.pid_fd, 100).decode().split() if self.pid_fd is not None else []
            kind, pid = (line[0], int(line[1])) if len(line) == 2 else ("direct", 0)
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

    def _call_handle(self, handle: int, args: tuple, kwargs: dict) -> Any:
        return self.call({"handle": handle}, args, kwargs)

    def _decode(self, value: Any) -> Any:
        try:
            return wire.decode(value, self._call_handle)
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
    ns: dict[str, Any] = {"__name__": "tests", "SOLUTION_SOURCE": job["code"], **cand.helpers()}
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
            "candidate_memory_peak": memory_peak, "set_candidate_env": set_env, "seed_candidate_random": random.seed}


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

