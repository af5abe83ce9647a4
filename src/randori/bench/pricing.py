"""Token prices (USD per million input/output tokens) per model, and the cost of a run from them.

The built-in table (`bench/data/prices.toml`) is overridden, entry by entry, by the user's
`~/.config/randori/prices.toml` (or `$XDG_CONFIG_HOME/randori/prices.toml`), then by the file named in
`RANDORI_PRICES`, then by `--prices FILE`. Each file is TOML with one table per model name or pattern:

    ["openai/gpt-4o-mini*"]
    input = 0.15
    output = 0.60
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from randori.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

PRICES_ENV = "RANDORI_PRICES"


@dataclass(frozen=True)
class Price:
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


class PriceTable:
    def __init__(self, entries: dict[str, Price] | None = None, sources: list[str] | None = None):
        self.entries = dict(entries or {})
        self.sources = list(sources or [])

    def update(self, entries: dict[str, Price], source: str) -> None:
        self.entries.update(entries)
        self.sources.append(source)

    def lookup(self, model: str) -> Price | None:
        """The exact entry for `provider/model`, else the longest pattern that matches it."""
        if model in self.entries:
            return self.entries[model]
        matches = [p for p in self.entries if any(ch in p for ch in "*?[") and fnmatch.fnmatchcase(model, p)]
        return self.entries[max(matches, key=len)] if matches else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD, or None when the model has no price (an unknown cost is not a zero cost)."""
        price = self.lookup(model)
        return None if price is None else price.cost(input_tokens, output_tokens)


def parse_prices(text: str, source: str) -> dict[str, Price]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"price file {source} is not valid TOML: {e}") from None
    out: dict[str, Price] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or "/" not in model:
            raise UserError(f"price file {source}: '{model}' must be a table named provider/model "
                            "with input and output prices")
        try:
            price = Price(input=float(entry["input"]), output=float(entry["output"]))
        except (KeyError, TypeError, ValueError):
            raise UserError(f"price file {source}: '{model}' needs numeric input and output "
                            "(USD per million tokens)") from None
        if price.input < 0 or price.output < 0:
            raise UserError(f"price file {source}: '{model}' has a negative price")
        out[model] = price
    return out


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "randori" / "prices.toml"


def _read(path: Path, source: str) -> dict[str, Price]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot read price file {path} ({source}): {e.strerror}") from None
    return parse_prices(text, str(path))


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The built-in table with the user's overrides applied (see the module docstring)."""
    builtin = resources.files("randori.bench").joinpath("data/prices.toml").read_text(encoding="utf-8")
    table = PriceTable(parse_prices(builtin, "built-in prices"), ["built-in"])
    user = user_config_path()
    if user.is_file():
        table.update(_read(user, "user config"), str(user))
    env = os.environ.get(PRICES_ENV)
    if env:
        table.update(_read(Path(env), PRICES_ENV), env)
    if path is not None:
        table.update(_read(Path(path), "--prices"), str(path))
    return table


def row_cost(prices: PriceTable, row: dict[str, Any]) -> float | None:
    """Cost of one stored case: the agent's tokens and its defense's, at the case model's price
    (defenses that call a model use the model under test)."""
    inp = (row.get("input_tokens") or 0) + (row.get("defense_input_tokens") or 0)
    out = (row.get("output_tokens") or 0) + (row.get("defense_output_tokens") or 0)
    return prices.cost(row["model"], inp, out)
