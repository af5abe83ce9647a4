"""What a run will cost before it starts (`--dry-run`), and a cap on what it may spend (`--max-cost`).

Estimates come, in order of preference, from tokens per case measured in the store for the same
model, suite and kind of case; then for the same suite and kind under any model that reported
tokens; then from `default_tokens`, a documented rough estimate from the suite itself. The cost is
the estimate at the model's price (`randori.bench.pricing`); a model with no price has an unknown
cost, never a zero one.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from randori.bench.cases import Case
from randori.bench.pricing import PriceTable, row_cost

# The documented estimate (docs/guides/spend-control.md): a model turn sends the system prompt, the tool
# schemas and the conversation so far; a case takes one turn per ground-truth call plus the answer.
CHARS_PER_TOKEN = 4
PROMPT_TOKENS = 400  # system prompt, user prompt and message overhead per turn
TOOL_RESULT_TOKENS = 250  # one tool result, added to every later turn
OUTPUT_TOKENS_PER_TURN = 60


@dataclass(frozen=True)
class Tokens:
    input: float
    output: float
    source: str  # "measured", "measured (other models)", "estimate" or "none"


@dataclass
class Line:
    """One (model, suite) of a plan, priced."""

    model: str
    suite: str
    cases: int = 0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost: float | None = 0.0
    sources: set[str] = field(default_factory=set)


def measured(conn: sqlite3.Connection) -> dict[tuple[str, str, str], tuple[float, float, int]]:
    """Mean tokens in and out (agent plus defense) per finished case, per (model, suite, kind)."""
    sql = ("SELECT model, suite, kind, AVG(input_tokens + defense_input_tokens), "
           "AVG(output_tokens + defense_output_tokens), COUNT(*) FROM cases WHERE status = 'ok' "
           "GROUP BY model, suite, kind")
    return {(m, s, k): (float(i or 0), float(o or 0), int(n)) for m, s, k, i, o, n in conn.execute(sql)}


def _pooled(table: dict[tuple[str, str, str], tuple[float, float, int]]) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (suite, kind) over the models that reported tokens, weighted by their case counts."""
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for (_, suite, kind), (i, o, n) in table.items():
        if i or o:
            acc = sums[(suite, kind)]
            acc[0] += i * n
            acc[1] += o * n
            acc[2] += n
    return {k: (a / n, b / n) for k, (a, b, n) in sums.items() if n}


def default_tokens(suite: Any, kind: str) -> tuple[float, float]:
    """Tokens in and out of one case by the documented estimate: with T the tool schemas' size in
    tokens and k the turns (mean ground-truth calls of the suite's user tasks, or of its injection
    tasks for `injection_only`, plus one for the answer), input = k * (T + PROMPT_TOKENS) +
    TOOL_RESULT_TOKENS * k * (k - 1) / 2 and output = k * OUTPUT_TOKENS_PER_TURN. An attacked case
    counts one more turn for the injection the agent may follow."""
    schema = len(json.dumps([t.schema() for t in suite.tools])) / CHARS_PER_TOKEN
    tasks = suite.injection_tasks if kind == "injection_only" else suite.user_tasks
    env = suite.load_env()
    calls = [len(t.ground_truth(env)) for t in tasks.values()]
    k = (sum(calls) / len(calls) if calls else 1.0) + 1 + (kind == "attacked")
    return k * (schema + PROMPT_TOKENS) + TOOL_RESULT_TOKENS * k * (k - 1) / 2, k * OUTPUT_TOKENS_PER_TURN


class Estimator:
    """Tokens per case for each (model, suite, kind), from the store when it can."""

    def __init__(self, conn: sqlite3.Connection | None, suites: dict[str, Any], remote: dict[str, bool]):
        self.table = measured(conn) if conn is not None else {}
        self.pooled = _pooled(self.table)
        self.suites = suites
        self.remote = remote  # model name -> whether it calls a provider (scripted agents use no tokens)
        self._defaults: dict[tuple[str, str], tuple[float, float]] = {}

    def tokens(self, model: str, suite: str, kind: str) -> Tokens:
        hit = self.table.get((model, suite, kind))
        if hit is not None:
            return Tokens(hit[0], hit[1], "measured")
        if not self.remote.get(model, True):
            return Tokens(0.0, 0.0, "none")
        if (suite, kind) in self.pooled:
            i, o = self.pooled[(suite, kind)]
            return Tokens(i, o, "measured (other models)")
        if (suite, kind) not in self._defaults:
            self._defaults[(suite, kind)] = default_tokens(self.suites[suite], kind)
        i, o = self._defaults[(suite, kind)]
        return Tokens(i, o, "estimate")

    def price(self, cases: Sequence[Case], prices: PriceTable) -> list[Line]:
        lines: dict[tuple[str, str], Line] = {}
        for c in cases:
            line = lines.setdefault((c.model, c.suite), Line(c.model, c.suite))
            t = self.tokens(c.model, c.suite, c.kind)
            line.cases += 1
            line.input_tokens += t.input
            line.output_tokens += t.output
            line.sources.add(t.source)
        for line in lines.values():
            line.cost = prices.cost(line.model, round(line.input_tokens), round(line.output_tokens))
        return list(lines.values())

    def per_case_cost(self, cases: Sequence[Case], prices: PriceTable) -> float:
        """Mean estimated cost of one of `cases` (0 when unknown): the spend cap's first guess."""
        lines = self.price(cases, prices)
        n = sum(line.cases for line in lines)
        return sum(line.cost or 0.0 for line in lines) / n if n else 0.0


def result_cost(prices: PriceTable, result: Any) -> float | None:
    """Cost of one stored result (a `CaseResult`), priced like the report prices it."""
    return row_cost(prices, vars(result))


def result_tokens(result: Any) -> int:
    return (result.input_tokens + result.output_tokens + result.defense_input_tokens
            + result.defense_output_tokens)


class SpendCap:
    """Admits a case only while what was spent plus what the cases in flight (and this one) are
    expected to cost stays within the cap, so a run ends within about one case's cost of it. The
    expected cost of a case is the mean of those finished so far (before any has, `first_guess`).
    A case that does not fit waits for the cases in flight; if it still does not fit once they are
    paid for, the run stops, and every later case is refused. The first case always starts
    (under a cap above zero), so a first guess that is too high costs speed, not the run."""

    POLL_S = 0.02

    def __init__(self, cap: float, prices: PriceTable, first_guess: float = 0.0):
        self.cap = cap
        self.prices = prices
        self.first_guess = first_guess
        self.spent = 0.0
        self.finished = 0
        self.in_flight = 0
        self.stopped = False

    def expected(self) -> float:
        return self.spent / self.finished if self.finished else self.first_guess

    def decide(self) -> bool | None:
        """True: start the case; False: stop the run; None: wait for a case in flight to finish."""
        if self.stopped:
            return False
        first = not self.finished and not self.in_flight and self.cap > 0
        if first or self.spent + (self.in_flight + 1) * self.expected() <= self.cap:
            self.in_flight += 1
            return True
        if self.in_flight:  # decide once they are paid for, on a better estimate
            return None
        self.stopped = True
        return False

    async def admit(self, case: Case | None = None) -> bool:
        import asyncio

        while (verdict := self.decide()) is None:
            await asyncio.sleep(self.POLL_S)
        return verdict

    def record(self, result: Any) -> None:
        """A case this cap admitted has ended (`None`: it was left to another run)."""
        self.in_flight = max(0, self.in_flight - 1)
        if result is None:
            return
        self.spent += result_cost(self.prices, result) or 0.0
        self.finished += 1


def unpriced(models: Iterable[str], prices: PriceTable) -> list[str]:
    return [m for m in models if prices.lookup(m) is None]


def fmt_tokens(n: float) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    return f"{n / 1e3:.1f}k" if n >= 1e3 else f"{n:.0f}"


def fmt_usd(cost: float | None) -> str:
    from randori.text import fmt_cost

    return "unknown" if cost is None else fmt_cost(cost)
