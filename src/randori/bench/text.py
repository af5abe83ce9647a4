"""Plain-text layout for terminals of any width: aligned columns and word-boundary wrapping."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Sequence


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
