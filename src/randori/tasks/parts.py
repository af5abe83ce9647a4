"""Which parts of a check held: the shared check helpers (`states`, `mentions`, `only_changed`, ...)
report each call into a context-local collector, with a short description and its result, so a
case page can say which part of a failed check failed ("the answer states 447.00 EUR: no (missing:
447.00 EUR)") without any task saying so itself.

Only the outermost helper call is recorded (a helper that calls another is one part). Outside
`collecting()` the helpers record nothing and behave exactly as before: a verdict never depends on
whether it is being explained.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

# A check that reads many texts (every mail sent) would record a part per text: enough to explain.
MAX_PARTS = 200


@dataclass(frozen=True)
class Part:
    """One helper call of a check: what it looked for, and whether it found it."""
    text: str  # "the answer states 447.00 EUR"
    held: bool
    detail: str = ""  # why not, when known: "missing: 447.00 EUR"

    def __str__(self) -> str:
        return f"{self.text}: {'yes' if self.held else 'no'}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class Collector:
    answer: str | None = None  # the agent's final answer: a helper reading it says "the answer"
    parts: list[Part] = field(default_factory=list)
    depth: int = 0


_COLLECTOR: ContextVar[Collector | None] = ContextVar("randori_check_parts", default=None)


@contextmanager
def collecting(answer: str | None = None) -> Iterator[list[Part]]:
    """Every part the checks run inside the block report, in the order they ran."""
    c = Collector(answer=answer)
    token = _COLLECTOR.set(c)
    try:
        yield c.parts
    finally:
        _COLLECTOR.reset(token)


def which_text(text: str) -> str:
    """How a part names the text it read: the answer, or another text (a mail, a file, a title)."""
    c = _COLLECTOR.get()
    return "the answer" if c is not None and c.answer is not None and text == c.answer else "the text checked"


F = TypeVar("F", bound=Callable[..., Any])


def explained(describe: Callable[..., tuple[str, str]]) -> Callable[[F], F]:
    """Decorate a check helper: inside `collecting()`, its outermost calls are recorded as parts.
    `describe(result, *args, **kwargs)` returns (what the call looked for, why it did not hold or "");
    it runs only while collecting, and a description that fails is left out, never the verdict."""
    def wrap(helper: F) -> F:
        @functools.wraps(helper)
        def inner(*args: Any, **kwargs: Any) -> Any:
            c = _COLLECTOR.get()
            if c is None or c.depth:
                return helper(*args, **kwargs)
            c.depth += 1
            try:
                result = helper(*args, **kwargs)
                if len(c.parts) < MAX_PARTS:
                    try:
                        text, detail = describe(result, *args, **kwargs)
                    except Exception:  # an explanation must never change or break a verdict
                        pass
                    else:
                        c.parts.append(Part(text, bool(result), detail if not result else ""))
            finally:
                c.depth -= 1
            return result
        return inner  # type: ignore[return-value]
    return wrap


def deciding(parts: list[Part], verdict: bool | None, limit: int = 3) -> list[str]:
    """The recorded parts that agree with the check's verdict. For a check that failed, the last part
    recorded, if it failed: in a chain of `and` the term that stopped it. When the last part held, what
    failed came after it and was not recorded (or a part was used negated), and an earlier failed part
    may have been rescued (`any(...)`, `or`): nothing is said. For a check that held, the parts that
    held. Empty when none agrees, or the check used no helper: nothing is invented."""
    if verdict is None:
        return []
    if not verdict:
        return [str(parts[-1])] if parts and not parts[-1].held else []
    out: list[str] = []
    for p in parts:
        if p.held and str(p) not in out:
            out.append(str(p))
    return out[:limit]
