"""Natural order of ids: user_task_2 before user_task_10."""

from __future__ import annotations

import re
from typing import Any

_DIGITS = re.compile(r"(\d+)")


def natural_key(value: Any) -> tuple[Any, ...]:
    """A sort key that compares runs of digits as numbers; None sorts first."""
    if value is None:
        return ()
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in _DIGITS.split(str(value)) if part)
