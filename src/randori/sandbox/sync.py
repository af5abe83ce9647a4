"""The judge for synchronous callers: a suite's checks are plain functions that run inside the
runner's event loop, where awaiting is impossible and `asyncio.run` is refused.

`judge_sync` runs the judge on a private thread with its own event loop (one for the process, so
the sandbox's fork server and its slots belong to one loop) and waits for the result. Results are
cached by a hash of everything that decides them (code, tests, files, setup, limits): validation
checks the same final state many times, and the utility check, the attack check and the weakness
scan of one case often judge the same files. Only completed runs are cached; a run the sandbox
could not finish (a timeout under load, a crash of the harness) is tried again next time. Processes that
split one job between them can share the completed results through a private folder (`share_results`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from randori.sandbox.judge import judge
from randori.sandbox.runner import Limits, RunResult

CACHE_SIZE = 1024

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()
_cache: OrderedDict[str, concurrent.futures.Future[RunResult]] = OrderedDict()
_shared: Path | None = None


def share_results(folder: str | os.PathLike[str] | None) -> None:
    """Also keep completed results in `folder` (None: stop), where other processes that share it find
    them: `randori suites check` splits a suite whose checks run code over worker processes, and their
    parts judge many of the same states. The folder must be private to those processes (its files are
    read back as pickles): one made with `tempfile.mkdtemp` for the purpose."""
    global _shared
    _shared = Path(folder) if folder is not None else None


def _shared_get(key: str) -> RunResult | None:
    if _shared is None:
        return None
    try:
        with open(_shared / key, "rb") as f:
            result = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError):
        return None
    return result if isinstance(result, RunResult) else None


def _shared_put(key: str, result: RunResult) -> None:
    if _shared is None:
        return
    tmp = _shared / f".{key}.{os.getpid()}.{threading.get_ident()}"
    try:
        tmp.write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, _shared / key)  # whole or not at all: a reader never sees half a result
    except OSError:
        tmp.unlink(missing_ok=True)


def _judge_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="randori-judge", daemon=True).start()
        return _loop


def cache_key(code: str, tests: str, entry_point: str, files: Mapping[str, str], setup: str,
              reference: str | None, limits: Limits | None, test_names: Sequence[str] | None) -> str:
    blob = json.dumps([code, tests, entry_point, sorted(files.items()), setup, reference,
                       asdict(limits) if limits else None, list(test_names) if test_names is not None else None])
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def judge_sync(code: str, tests: str, *, entry_point: str, files: Mapping[str, str] | None = None,
               setup: str = "", reference: str | None = None, limits: Limits | None = None,
               test_names: Sequence[str] | None = None) -> RunResult:
    """`randori.sandbox.judge.judge`, waited for: safe to call from any thread, including one that
    runs an event loop. Concurrent calls with the same inputs share one run."""
    files = dict(files or {})
    key = cache_key(code, tests, entry_point, files, setup, reference, limits, test_names)
    with _lock:
        fut = _cache.get(key)
        if fut is not None:
            _cache.move_to_end(key)
    fresh = False
    if fut is None:
        shared = _shared_get(key)
        if shared is not None:
            fut = concurrent.futures.Future()
            fut.set_result(shared)
        else:
            coro = judge(code, tests, entry_point=entry_point, files=files, setup=setup, reference=reference,
                         limits=limits, test_names=test_names)
            fut, fresh = asyncio.run_coroutine_threadsafe(coro, _judge_loop()), True
        with _lock:
            _cache[key] = fut
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    try:
        result = fut.result()
    except BaseException:
        _forget(key, fut)
        raise
    if result.status != "completed":
        _forget(key, fut)
    elif fresh:
        _shared_put(key, result)
    return result


def _forget(key: str, fut: concurrent.futures.Future[RunResult]) -> None:
    with _lock:
        if _cache.get(key) is fut:
            del _cache[key]


def clear_cache() -> None:
    with _lock:
        _cache.clear()
