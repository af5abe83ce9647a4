"""The `run` command's planning and spending: one plan per model, sample and limit, the dry run,
the spend cap, the progress bar's tokens and dollars, and the closing hint."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from randori.errors import UserError


@dataclass
class Batch:
    """The cases of one model (a run runs its models one after another, in one progress bar)."""

    model: Any  # ChatModel, or None for an external agent that needs none
    cases: list[Any] = field(default_factory=list)


def subset(cases: list[Any], *, fraction: float | None, seed: int) -> list[Any]:
    from randori.bench.sample import sample

    return cases if fraction is None else sample(cases, fraction, seed)


def limited(todo: list[Any], n: int | None, seed: int) -> list[Any]:
    from randori.bench.sample import limit

    return todo if n is None else limit(todo, n, seed)


def check_prices(models: Sequence[str], option: str) -> None:
    """A cap or a dollar estimate is meaningless for a model with no price: say so before any work."""
    from randori.bench.pricing import load_prices
    from randori.bench.spend import unpriced

    missing = unpriced(models, load_prices())
    if missing:
        raise UserError(f"{option} needs a price for {', '.join(missing)}; add one with --prices FILE "
                        "(see docs/guides/real-models.md, 'Tokens and cost')")


def estimator(store: Any, suites: dict[str, Any], models: Sequence[Any]) -> Any:
    from randori.bench.spend import Estimator

    return Estimator(store.conn if store is not None else None, suites,
                     {m.name: bool(getattr(m, "remote", True)) for m in models if m is not None})


def print_dry_run(console: Any, planned: int, done: int, todo: list[Any], est: Any, subset_note: str) -> None:
    """The plan and what it is expected to cost; nothing is run and nothing is written."""
    from randori.bench.pricing import load_prices
    from randori.bench.spend import fmt_tokens, fmt_usd
    from randori.text import columns, terminal_width, wrap

    width = terminal_width()
    out = [wrap(f"Dry run: {planned} cases planned{subset_note}, {done} already in the store, {len(todo)} would "
                "run. Nothing is run or written.", width)]
    kinds = Counter(c.kind for c in todo)
    if kinds:
        out.append(wrap("By kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())), width))
    lines = sorted(est.price(todo, load_prices()), key=lambda x: (x.model, x.suite))
    if lines:
        costs = [line.cost for line in lines]
        total = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        table = [("model", "suite", "cases", "tokens in", "out", "USD", "from")]
        table += [(x.model, x.suite, str(x.cases), fmt_tokens(x.input_tokens), fmt_tokens(x.output_tokens),
                   fmt_usd(x.cost), ", ".join(sorted(x.sources))) for x in lines]
        table.append(("total", "", str(sum(x.cases for x in lines)), fmt_tokens(sum(x.input_tokens for x in lines)),
                      fmt_tokens(sum(x.output_tokens for x in lines)), fmt_usd(total), ""))
        out += columns(table, right=(2, 3, 4, 5))
        out.append(wrap("from: 'measured' = mean tokens per case of earlier runs in this store (same model, suite "
                        "and kind); 'estimate' = docs/guides/spend-control.md; 'none' = a scripted agent. Adaptive "
                        "attacks may cost up to their budget of tries per case.", width))
    console.print("\n".join(out), highlight=False, markup=False, soft_wrap=True)


def spend_cap(cap: float | None, est: Any, todo: list[Any]) -> Any:
    if cap is None:
        return None
    from randori.bench.pricing import load_prices
    from randori.bench.spend import SpendCap

    prices = load_prices()
    return SpendCap(cap, prices, est.per_case_cost(todo, prices))


class Meter:
    """Tokens and dollars of the cases this run finished, for the progress bar."""

    def __init__(self) -> None:
        from randori.bench.pricing import load_prices

        self.prices = load_prices()
        self.tokens = 0
        self.cost: float | None = 0.0

    def add(self, result: Any) -> None:
        from randori.bench.spend import result_cost, result_tokens

        self.tokens += result_tokens(result)
        cost = result_cost(self.prices, result)
        self.cost = None if cost is None or self.cost is None else self.cost + cost

    def text(self) -> str:
        from randori.bench.spend import fmt_tokens, fmt_usd

        return f"{fmt_tokens(self.tokens)} tok, {'$?' if self.cost is None else fmt_usd(self.cost)}"


def cap_message(cap: Any, left: int) -> str:
    from randori.bench.spend import fmt_usd

    return (f"Stopped at the cost cap: spent {fmt_usd(cap.spent)} of {fmt_usd(cap.cap)}; {left} case(s) not run. "
            "Finished cases are saved: run the same command again (with a new --max-cost) to continue.")


def next_steps(results_dir: Path, compare_by: str | None = None) -> str:
    """The closing hint of every run: where to look next, with this run's results directory and the
    command as this shell can reach it (`.venv/bin/randori` when randori is not on PATH)."""
    from randori.text import command_name, shell_quote

    r = str(results_dir)
    opt = "" if r == "results" else f" -r {shell_quote(r)}"
    html = shell_quote(str(results_dir / "report.html"))
    cmd = command_name()
    lines = ["Next:", f"  {cmd} report{opt} --html {html}", f"  {cmd} view{opt}"]
    if compare_by:
        lines.append(f"  {cmd} compare{opt} --by {compare_by}   (paired differences)")
    return "\n".join(lines)
