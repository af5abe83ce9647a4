"""Plain-text layout for terminals of any width: aligned columns, word-boundary wrapping, costs;
and the command a printed hint names, as this shell reaches randori."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Sequence
from pathlib import Path


def terminal_width(default: int = 80) -> int:
    return shutil.get_terminal_size((default, 24)).columns


def columns(table: Sequence[Sequence[str]], right: Sequence[int] = (), indent: str = "  ", gap: str = " ") -> list[str]:
    """Rows of cells padded to each column's widest cell; columns in `right` are right-aligned."""
    if not table:
        return []
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return [indent + gap.join(v.rjust(w) if i in right else v.ljust(w)
                              for i, (v, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in table]


def wrap(text: str, width: int, indent: str = "", more: str | None = None) -> str:
    """`text` broken at spaces only (never inside a word or at a hyphen), continuation lines indented."""
    return "\n".join(textwrap.wrap(text, max(20, width), initial_indent=indent,
                                   subsequent_indent=more if more is not None else indent + "  ",
                                   break_on_hyphens=False, break_long_words=False)) or indent.rstrip()


def fmt_cost(cost: float | None) -> str:
    """USD with enough digits to tell cheap runs apart; "-" when a model has no price."""
    if cost is None:
        return "-"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


def command_name() -> str:
    """How the user reaches randori: `randori` when that is on PATH and is this program, else the
    path they ran (relative to the current directory when it is under it), or `python -m randori`."""
    import os
    import shutil
    import sys

    argv0 = Path(sys.argv[0])
    if argv0.name != "randori":  # python -m randori
        return f"{shell_quote(_near(sys.executable))} -m randori"
    found = shutil.which("randori")
    if found and os.path.samefile(found, argv0):
        return "randori"
    return shell_quote(_near(str(argv0)))


def _near(path: str) -> str:
    """`path` relative to the current directory when it is under it (symbolic links kept: a
    virtual environment's python is a link that must stay one)."""
    import os

    full = os.path.abspath(path)
    rel = os.path.relpath(full)
    return rel if not rel.startswith("..") else full


def shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)
