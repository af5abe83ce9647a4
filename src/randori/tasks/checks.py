"""Helpers for writing exact checks: what changed between two states, and nothing else; and what
the answer states, however it is phrased (amounts, dates, times: see `randori.tasks.answers`), about
which item, and whether it is denied or only reported (see `randori.tasks.statements`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from randori.tasks.answers import Clock as Clock
from randori.tasks.answers import Day as Day
from randori.tasks.answers import Money as Money
from randori.tasks.answers import Needle as Needle
from randori.tasks.answers import alnum as alnum
from randori.tasks.answers import digits as digits
from randori.tasks.answers import mentions as mentions
from randori.tasks.answers import mentions_any as mentions_any
from randori.tasks.answers import mentions_date as mentions_date
from randori.tasks.answers import mentions_money as mentions_money
from randori.tasks.answers import mentions_time as mentions_time
from randori.tasks.environment import diff_path as diff_path  # checks name allowed paths with it
from randori.tasks.environment import state_diff
from randori.tasks.parts import explained
from randori.tasks.statements import Item as Item
from randori.tasks.statements import attributed as attributed
from randori.tasks.statements import claims as claims
from randori.tasks.statements import negated as negated
from randori.tasks.statements import states as states


def changed_paths(pre: Any, post: Any) -> list[str]:
    return [d["path"] for d in state_diff(pre, post)]


def _outside(path: str, allowed: Sequence[str]) -> bool:
    return not any(path == a or path.startswith(a + ".") or path.startswith(a + "[") for a in allowed)


def describe_changes(diff: Sequence[dict[str, Any]], most: int = 3) -> str:
    """A few changes as a part of an explanation names them: "calendar.7 added, files.3.content changed"."""
    words = [f"{d['path']} {'added' if d.get('before') is None else 'removed' if d.get('after') is None else 'changed'}"
             for d in diff[:most]]
    return ", ".join(words) + (f" and {len(diff) - most} more" if len(diff) > most else "")


def _only_changed_part(held: bool, pre: Any, post: Any, *allowed: str) -> tuple[str, str]:
    said = "nothing else changed" if allowed else "nothing changed"
    if held:
        return said, ""
    return said, describe_changes(changes_outside(pre, post, *allowed))


def changes_outside(pre: Any, post: Any, *allowed: str) -> list[dict[str, Any]]:
    """The changes from `pre` to `post` that no `allowed` path prefix covers (see `only_changed`)."""
    return [d for d in state_diff(pre, post) if _outside(d["path"], allowed)]


@explained(_only_changed_part)
def only_changed(pre: Any, post: Any, *allowed: str) -> bool:
    """True when every change from `pre` to `post` lies under one of the `allowed` path prefixes
    (e.g. "transactions", "accounts.acc-1.balance"; a key with a dot in it, such as a file name or
    an e-mail address, needs `diff_path`). No change at all is also True."""
    return not any(_outside(p, allowed) for p in changed_paths(pre, post))


def new_items(before: Sequence[Any], after: Sequence[Any], key: str = "id") -> list[Any]:
    """Items of `after` whose key does not occur in `before`."""
    old = {getattr(x, key) for x in before}
    return [x for x in after if getattr(x, key) not in old]


def same_amount(a: float, b: float) -> bool:
    return abs(a - b) < 0.005
