"""The candidate's side of a sandboxed run (standard library only: runs inside the sandbox).

The code under test is loaded here, in a process of its own, and serves requests that arrive as
plain data over one socket: `load`, then `global` (a module-level name), `call` (a top-level
function by name, or any object it sent earlier, by handle), `getattr`, `setattr` and `special`
(item access, len, iteration, membership, `with`, str) on objects it sent earlier. Whatever the
code does to this process — patching this module, writing to the socket itself, exiting — can
only change the data it answers with, never how the tests read it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import types

import _sandbox_wire as wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOLUTION_FILE = "<solution>"


def register_source(filename: str, source: str) -> None:
    import linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def load_solution(code: str, workdir: str) -> types.ModuleType:
    mod = types.ModuleType("solution")
    mod.__file__ = os.path.join(workdir, "solution.py")
    # Registered so pickle, dataclasses and inspect find classes the solution defines.
    sys.modules["solution"] = mod
    register_source(SOLUTION_FILE, code)
    exec(compile(code, SOLUTION_FILE, "exec"), mod.__dict__)
    return mod


def solution_line(tb: Any) -> str:
    """'solution line N: source' for the innermost frame of the code under test, if any."""
    import traceback

    for frame in reversed(traceback.extract_tb(tb)):
        if frame.filename == SOLUTION_FILE:
            return f"solution line {frame.lineno}: {(frame.line or '').strip()}"
    return ""


class _CallTimeout(BaseException):
    """A BaseException so that `except Exception` in the code under test cannot swallow it."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _CallTimeout()


def serve(fd: int, code: str, workdir: str) -> None:
    """Answer requests until the judge closes the channel. Never returns."""
    handles: list[Any] = []
    encode = wire.Encoder(handles)
    mod: types.ModuleType | None = None
    signal.signal(signal.SIGPROF, _on_alarm)
    while True:
        try:
            req = wire.recv(fd)
        except (wire.PeerGone, wire.WireError, OSError):
            break
        op = req.get("op") if type(req) is dict else None
        try:
            if op == "load":
                try:
                    mod = load_solution(code, workdir)
                except BaseException as e:
                    reply = {"ok": False, "exc": wire.encode_exception(e, solution_line(e.__traceback__))}
                else:
                    missing = [n for n in req.get("names", []) if not callable(mod.__dict__.get(n))]
                    reply = {"ok": True, "missing": missing}
            elif op == "call" and mod is not None:
                reply = _call(fd, req, mod, handles, encode)
            elif op == "global" and mod is not None:
                name = str(req.get("name"))
                if name not in mod.__dict__:
                    raise NameError(f"name {name!r} is not defined by the code")
                reply = {"ok": True, "value": encode.with_ref(mod.__dict__[name])}
            elif op in ("getattr", "setattr", "special"):
                reply = _on_object(fd, req, handles, encode)
            elif op == "environ":
                # Tests set the environment the code reads, as they would set its arguments.
                for key, value in dict(req.get("set") or {}).items():
                    if value is None:
                        os.environ.pop(str(key), None)
                    else:
                        os.environ[str(key)] = str(value)
                reply = {"ok": True}
            elif op == "seed":
                import random

                random.seed(req.get("seed"))
                reply = {"ok": True}
            else:
                reply = {"ok": False, "exc": wire.encode_exception(RuntimeError(f"unexpected request {op!r}"))}
        except BaseException as e:  # encoding the result failed (or the code broke this module)
            reply = {"ok": False, "exc": wire.encode_exception(e)}
        try:
            _send_capped(fd, reply)
        except (wire.PeerGone, OSError):
            break
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


SPECIAL: dict[str, Any] = {
    "getitem": lambda o, k: o[k], "len": lambda o: int(len(o)), "contains": lambda o, x: bool(x in o),
    "iter": lambda o: list(_islice(o)), "enter": lambda o: o.__enter__(), "str": lambda o: str.__str__(str(o)),
    "exit": lambda o, failed: bool(o.__exit__(*_exc_info(failed))),
    "delattr": lambda o, n: delattr(o, n),
}


def _exc_info(failed: bool) -> tuple:
    if not failed:
        return None, None, None
    exc = Exception("a test failed inside the block")
    return Exception, exc, None


def _islice(o: Any) -> Any:
    import itertools

    return itertools.islice(iter(o), 100_000)


def _setitem(o: Any, k: Any, v: Any) -> None:
    o[k] = v


def _delitem(o: Any, k: Any) -> None:
    del o[k]


SPECIAL.update(setitem=_setitem, delitem=_delitem)


def _on_object(fd: int, req: dict, handles: list[Any], encode: wire.Encoder) -> dict:
    idx = req.get("handle")
    if type(idx) is not int or not 0 <= idx < len(handles):
        raise LookupError("unknown object")
    obj = handles[idx]
    args = wire.decode(req.get("args", []), local=handles, callback=_callbacks(fd, handles))
    op, name = req.get("op"), str(req.get("name"))
    try:
        if op == "getattr":
            return {"ok": True, "value": encode.with_ref(getattr(obj, name))}
        if op == "setattr":
            setattr(obj, name, *args[:1])
            return {"ok": True, "value": None}
        fn = SPECIAL.get(name)
        if fn is None:
            raise TypeError(f"unsupported operation {name!r}")
        value = fn(obj, *args)
        return {"ok": True, "value": encode.with_ref(value) if name == "enter" else encode(value)}
    except BaseException as e:
        return {"ok": False, "exc": wire.encode_exception(e, solution_line(e.__traceback__))}


def _callbacks(fd: int, handles: list[Any]) -> Any:
    """Makes the candidate's stand-ins for functions of the tests: calling one asks the judge to
    run it and waits for its answer, as data."""
    def make(ref: int, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            enc = wire.Encoder(handles)
            wire.send(fd, {"op": "callback", "id": ref, "args": enc(list(args)), "kwargs": enc(dict(kwargs))},
                      cap=wire.MESSAGE_CAP)
            reply = wire.recv(fd)
            if type(reply) is not dict:
                raise RuntimeError("malformed answer from the tests")
            if reply.get("ok"):
                return wire.decode(reply.get("value"), local=handles, callback=make)
            exc = reply.get("exc")
            raise wire.decode_exception(exc if type(exc) is dict else {})

        call.__name__ = call.__qualname__ = name.rsplit(".", 1)[-1]
        return call

    return make


def _send_capped(fd: int, reply: dict) -> None:
    try:
        wire.send(fd, reply, cap=wire.MESSAGE_CAP)
    except wire.WireError as e:
        wire.send(fd, {"ok": False, "exc": wire.encode_exception(ValueError(str(e)))})


def _call(fd: int, req: dict, mod: types.ModuleType, handles: list[Any], encode: wire.Encoder) -> dict:
    if "handle" in req:
        idx = req["handle"]
        fn = handles[idx] if type(idx) is int and 0 <= idx < len(handles) else None
    else:
        fn = mod.__dict__.get(str(req.get("name")))
    if not callable(fn):
        missing = NameError(f"the code defines no function {req.get('name')!r}")
        return {"ok": False, "exc": wire.encode_exception(missing)}
    back = _callbacks(fd, handles)
    args = wire.decode(req.get("args", []), local=handles, callback=back)
    kwargs = wire.decode(req.get("kwargs", {"$": "dict", "v": []}), local=handles, callback=back)
    limit = req.get("cpu_s")
    t0 = time.process_time()
    if limit:
        signal.setitimer(signal.ITIMER_PROF, float(limit))
    try:
        try:
            value = fn(*args, **kwargs)
        finally:
            if limit:
                signal.setitimer(signal.ITIMER_PROF, 0)
    except _CallTimeout:
        return {"ok": False, "timeout": True, "cpu_s": time.process_time() - t0}
    except BaseException as e:
        reply = {"ok": False, "exc": wire.encode_exception(e, solution_line(e.__traceback__))}
    else:
        reply = {"ok": True, "value": encode(value)}
    reply["cpu_s"] = time.process_time() - t0
    if req.get("after"):
        # Mutable arguments the function may have changed in place go back, as data.
        reply["after"] = encode([args, kwargs])
    return reply
