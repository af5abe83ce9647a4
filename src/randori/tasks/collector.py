"""The cyclic garbage collector kept out of the way of long work that allocates many short-lived
objects: a benchmark run's cases (`randori.bench`), a suite check's thousands of replayed variants
(`randori.validity`). Both layers sit above this one, so both can use it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_gc = {"depth": 0}


@contextlib.contextmanager
def quiet_gc(young: int = 20_000) -> Iterator[None]:
    """Keep the cyclic garbage collector out of a run's way, then restore it.

    Everything alive at the start (parsed suites, environment templates, tool schemas) is frozen,
    so full collections stop rescanning it (a quarter of a scripted case's time otherwise). The
    young-generation threshold rises from 700 to `young` container allocations: a case allocates
    tens of thousands of short-lived objects that reference counting frees anyway, and at the
    default the collector ran about 5,000 times per 1,900 cases, about a tenth of the client's CPU
    and the main source of stalls that delay every call in flight. Cyclic garbage is still
    collected, only in larger, rarer batches.

    Entering it again inside costs nothing, and no entry collects before it freezes: a full
    collection there walked every object for 20 to 40 ms, on the way to a run's first request (in
    the driver and in each worker), and found no garbage after the five suites were loaded and
    planned. Garbage frozen with the rest is only held until the run ends (the heap is unfrozen)."""
    import gc

    if _gc["depth"]:
        _gc["depth"] += 1
        try:
            yield
        finally:
            _gc["depth"] -= 1
        return
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(young, old[0]), *old[1:])
    _gc["depth"] = 1
    try:
        yield
    finally:
        _gc["depth"] = 0
        gc.set_threshold(*old)
        gc.unfreeze()
