"""Where a run's cases run: in this process (default), in a pool of local worker processes, or on a
Ray cluster. `base.py` holds the seam and the driver; see docs/guides/cluster.md."""

from __future__ import annotations

from randori.bench.executors.base import Executor
from randori.errors import UserError

MAX_WORKERS = 1024
HELP = "inprocess, processes[=N] (N workers; default one per core) or ray[=ADDRESS] (default: a local cluster)"


def get_executor(text: str) -> Executor:
    """The executor an `--executor` value names; a UserError in one line on a bad one."""
    name, sep, arg = text.strip().partition("=")
    name, arg = name.strip().lower(), arg.strip()
    if name == "inprocess" and not sep:
        from randori.bench.executors.inprocess import InProcess

        return InProcess()
    if name == "processes":
        from randori.bench.executors.processes import Processes

        if not sep:
            return Processes()
        if not arg.isdigit() or not 1 <= int(arg) <= MAX_WORKERS:
            raise UserError(f"--executor processes=N needs a number of workers from 1 to {MAX_WORKERS}, not '{arg}'")
        return Processes(int(arg))
    if name == "ray":
        from randori.bench.executors.ray import Ray

        if sep and not arg:
            raise UserError("--executor ray=ADDRESS needs an address (e.g. ray://head:10001 or auto), or no '='")
        return Ray(arg or None)
    raise UserError(f"unknown executor '{text}': use {HELP}")
