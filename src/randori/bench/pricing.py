"""Token prices (USD per million tokens) per model, and the cost of a run from them.

The base is the `genai-prices` package, which its maintainers keep up to date for the hosted
providers (openai/, anthropic/, google/). On top of it, entry by entry: the built-in table
(`bench/data/prices.toml`: models genai-prices does not know, such as local ones), the user's
`~/.config/randori/prices.toml` (or `$XDG_CONFIG_HOME/randori/prices.toml`), the file named in
`RANDORI_PRICES`, then `--prices FILE`. Each file is TOML with one table per model name or pattern:

    ["openai/gpt-4o-mini*"]
    input = 0.15
    output = 0.60
    cache_read = 0.075   # optional: cached input tokens (default: the input price)
    cache_write = 0.1875 # optional: tokens written to the prompt cache (default: the input price)

A model no source prices has an unknown cost (None, shown as "-"), never 0.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from randori.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

PRICES_ENV = "RANDORI_PRICES"
BUILTIN = "built-in table"
# Our provider names that genai-prices knows, by its provider id.
GENAI_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "google": "google"}


@dataclass(frozen=True)
class Price:
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens
    cache_read: float | None = None  # per million cached input tokens; None: the input price
    cache_write: float | None = None  # per million tokens written to the cache; None: the input price

    def cost(self, input_tokens: int, output_tokens: int, cached: int = 0, written: int = 0) -> float:
        """`input_tokens` counts every input token; `cached` and `written` are parts of it."""
        fresh = max(0, input_tokens - cached - written)
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        return (fresh * self.input + cached * read + written * write + output_tokens * self.output) / 1_000_000


@lru_cache(maxsize=512)
def genai_price(model: str) -> tuple[Price, str] | None:
    """The genai-prices entry for `provider/model` and its name there, or None. Long-context tiers are
    not applied: a case's tokens are summed over many requests, each far below the tier's threshold."""
    provider, _, name = model.partition("/")
    if provider not in GENAI_PROVIDERS:
        return None
    try:
        from datetime import datetime, timezone

        from genai_prices import data_snapshot
    except ImportError:  # pragma: no cover - a core dependency; a broken install leaves prices unknown
        return None
    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(name, None, GENAI_PROVIDERS[provider], None)
    except LookupError:
        return None
    mp = info.get_prices(datetime.now(timezone.utc))

    def rate(key: str) -> float | None:
        value = getattr(mp, key, None)
        value = getattr(value, "base", value)  # TieredPrices: the base rate
        return None if value is None else float(value)

    inp, out = rate("input_mtok"), rate("output_mtok")
    if inp is None or out is None:
        return None
    return Price(inp, out, rate("cache_read_mtok"), rate("cache_write_mtok")), info.id


def genai_prices_version() -> str:
    try:
        from importlib.metadata import version

        return f"genai-prices {version('genai-prices')}"
    except Exception:  # pragma: no cover
        return "genai-prices"


class PriceTable:
    """TOML entries (each with the file it came from) over genai-prices (when `base` is true)."""

    def __init__(self, entries: dict[str, Price] | None = None, sources: list[str] | None = None,
                 base: bool = False):
        self.entries = dict(entries or {})
        self.sources = list(sources or [])
        self.origin = dict.fromkeys(self.entries, self.sources[0] if self.sources else BUILTIN)
        self.base = base

    def update(self, entries: dict[str, Price], source: str) -> None:
        self.entries.update(entries)
        self.origin.update(dict.fromkeys(entries, source))
        self.sources.append(source)

    def _entry(self, model: str) -> str | None:
        """The exact TOML entry for `provider/model`, else the longest pattern that matches it."""
        if model in self.entries:
            return model
        matches = [p for p in self.entries if any(ch in p for ch in "*?[") and fnmatch.fnmatchcase(model, p)]
        return max(matches, key=len) if matches else None

    def lookup(self, model: str) -> Price | None:
        return self.priced(model)[0]

    def priced(self, model: str) -> tuple[Price | None, str | None]:
        """The price of `model` and where it came from (a file, the built-in table, or genai-prices)."""
        entry = self._entry(model)
        if entry is not None:
            return self.entries[entry], self.origin.get(entry, BUILTIN)
        found = genai_price(model) if self.base else None
        if found is None:
            return None, None
        return found[0], f"{genai_prices_version()} ({found[1]})"

    def source(self, model: str) -> str | None:
        return self.priced(model)[1]

    def cost(self, model: str, input_tokens: int, output_tokens: int, cached: int = 0,
             written: int = 0) -> float | None:
        """USD, or None when the model has no price (an unknown cost is not a zero cost)."""
        price = self.lookup(model)
        return None if price is None else price.cost(input_tokens, output_tokens, cached, written)


_OPTIONAL = ("cache_read", "cache_write")


def parse_prices(text: str, source: str) -> dict[str, Price]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"price file {source} is not valid TOML: {e}") from None
    out: dict[str, Price] = {}
    for model, entry in data.items():
        # provider/model, or an external agent as rows name it (AGENT@VERSION, e.g. "mcp:*@2"), which
        # is priced when it reports its own tokens.
        if not isinstance(entry, dict) or not any(c in model for c in "/:@"):
            raise UserError(f"price file {source}: '{model}' must be a table named provider/model (or "
                            "AGENT@VERSION for an external agent) with input and output prices")
        try:
            extra = {k: float(entry[k]) for k in _OPTIONAL if k in entry}
            price = Price(input=float(entry["input"]), output=float(entry["output"]), **extra)
        except (KeyError, TypeError, ValueError):
            raise UserError(f"price file {source}: '{model}' needs numeric input and output "
                            "(USD per million tokens; cache_read and cache_write, if given, numeric too)") from None
        if min(price.input, price.output, *extra.values()) < 0:
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
    """genai-prices with the built-in table and the user's overrides on top (see the module docstring)."""
    builtin = resources.files("randori.bench").joinpath("data/prices.toml").read_text(encoding="utf-8")
    table = PriceTable(parse_prices(builtin, BUILTIN), [BUILTIN], base=True)
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
    (defenses that call a model use the model under test); cache reads and writes at their rates."""
    inp = (row.get("input_tokens") or 0) + (row.get("defense_input_tokens") or 0)
    out = (row.get("output_tokens") or 0) + (row.get("defense_output_tokens") or 0)
    cached = (row.get("cached_input_tokens") or 0) + (row.get("defense_cached_input_tokens") or 0)
    written = (row.get("cache_write_tokens") or 0) + (row.get("defense_cache_write_tokens") or 0)
    return prices.cost(row["model"], inp, out, cached, written)
