"""What may reach a terminal. Provider bodies, tool names, plugin output and data files are written by
others: an escape sequence in them would clear the screen, set the clipboard (OSC 52), plant a
hyperlink (OSC 8) or retitle the window. `printable` removes every such sequence whole, and
`guard_output` puts it (with secret scrubbing) between the whole process and its stdout/stderr."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from typing import Any, NoReturn, TextIO

from randori.errors import scrub_secrets

# Whole sequences first (so no parameter bytes are left behind as text), then any lone control byte.
# OSC, DCS, SOS, PM, APC run to their terminator (BEL or ST) or, unterminated, to the end of the text.
_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC/DCS/SOS/PM/APC
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"  # CSI: parameters, intermediates, final
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?")  # any other escape: intermediates, final
# C0 but newline and tab, DEL, C1, and the bidirectional overrides that reorder what is shown.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` without escape sequences and control characters (newline and tab stay)."""
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


class GuardedStream(io.TextIOBase):
    """A text stream that writes only printable, secret-free text to the stream it wraps. Rich's live
    displays (progress bars) need their own cursor codes: they write to `raw`."""

    def __init__(self, raw: TextIO):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(printable(scrub_secrets(text)))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)


def guard_output() -> tuple[Any, Any]:
    """Put a GuardedStream in front of sys.stdout and sys.stderr; returns the streams it replaced."""
    before = sys.stdout, sys.stderr
    if sys.stdout is not None and not isinstance(sys.stdout, GuardedStream):
        sys.stdout = GuardedStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, GuardedStream):
        sys.stderr = GuardedStream(sys.stderr)
    return before


def raw_stream(stream: Any) -> Any:
    """The terminal behind a guarded stream: for a live display drawn from randori's own text only."""
    return stream.raw if isinstance(stream, GuardedStream) else stream


def live_console(stderr: bool = True) -> Any:
    """A Rich console for a progress bar or spinner, whose cursor codes must reach the terminal."""
    from rich.console import Console

    return Console(file=raw_stream(sys.stderr if stderr else sys.stdout))


def printable_data(obj: Any) -> Any:
    """`obj` (JSON-like) with every string printable and secret-free: a JSON reader that prints a
    value (`jq -r`) must not meet the escape sequence that JSON's \\u001b only postponed."""
    if isinstance(obj, str):
        return printable(scrub_secrets(obj))
    if isinstance(obj, dict):
        return {printable_data(k): printable_data(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [printable_data(v) for v in obj]
    return obj


def flush_output() -> None:
    """Write out whatever stdout and stderr hold (before a fork, or an exit that skips the interpreter's
    own flush). A reader that has gone (`randori report | head`) is not an error here."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def quick_exit(code: int) -> NoReturn:
    """End this process with `code` after its exit handlers and a flush of its output, but without the
    interpreter's teardown, which frees every module and object one by one (50-80 ms after a run, all
    of it once the work is done; a quarter of a second for a pool's worker)."""
    import atexit
    import os

    try:
        atexit._run_exitfuncs()
    finally:
        flush_output()
        os._exit(code)
