"""Finding a record a tool was asked about, with the error the model then sees."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def by_id(items: Iterable[T], item_id: Any, missing: str) -> T:
    """The item whose `id` equals `item_id`. Otherwise a ValueError with the text `missing`, which
    the runtime turns into the tool's error message (say which tool lists the valid ids)."""
    for item in items:
        if item.id == item_id:  # type: ignore[attr-defined]
            return item
    raise ValueError(missing)
