"""Reading an agent's answer the way a person would: amounts, dates and times however they are written.

Checks used to look for one spelling ("129.00", "2026-03-27", "15:00") and so failed agents that
write "€129", "Fri, Mar 27, 2026" or "3 pm". Here each kind of value is found in the text by pattern
and converted to a value (dates through python-dateutil), then compared as values.

Needles: a check names what the answer must state with plain strings (case-insensitive substrings),
tuples of alternative spellings, or typed values: `Money(129.0)`, `Day("2026-03-27")`,
`Clock("15:00")`. The same needles name a task's distractors (plausible wrong answers).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from dateutil import parser as dateparser

# -- money ---------------------------------------------------------------------------------------
SYMBOLS = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY"}
CODES = ("EUR", "USD", "GBP", "CHF", "SEK", "NOK", "DKK", "PLN", "CZK", "JPY", "CAD", "AUD")
WORDS = {"euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD", "pound": "GBP", "pounds": "GBP",
         "francs": "CHF", "kronor": "SEK", "kroner": "DKK"}
_SEP = "[,. \u00a0\u202f']"
_NUMBER = rf"\d{{1,3}}(?:{_SEP}\d{{3}})+(?:[.,]\d{{1,2}})?|\d+(?:[.,]\d{{1,2}})?"
_BEFORE = "|".join([*map(re.escape, SYMBOLS), *CODES])
_AFTER = "|".join([*CODES, *WORDS])
_MONEY = re.compile(
    rf"(?:(?P<pre>{_BEFORE})\s?)?(?<![\d.,])(?P<num>{_NUMBER})(?![.,]?\d)(?:\s?(?:(?P<post>{_AFTER})\b|(?P<sym>[€$£¥])))?",
    re.IGNORECASE)


def _number_values(raw: str) -> set[float]:
    """Every value a written number can mean: '1,015' is 1015 in English and 1.015 in German."""
    if " " in raw:  # "1 015,00" is 1015 in French, but "room 12 129.00" is 129
        return _number_values(raw.replace(" ", "")) | _number_values(raw.rsplit(" ", 1)[1])
    s = re.sub("[\u00a0\u202f']", "", raw)  # these only ever group thousands
    seps = [c for c in s if c in ",."]
    if not seps:
        return {float(s)}
    last = max(s.rfind(","), s.rfind("."))
    tail = s[last + 1:]
    if len(set(seps)) == 2:  # "1,015.00" / "1.015,00": the last one is the decimal mark
        return {float(s[:last].replace(",", "").replace(".", "") + "." + tail)}
    if len(seps) > 1:  # "1,000,000": thousands only
        return {float(s.replace(",", "").replace(".", ""))}
    if len(tail) == 3:  # "1,015": thousands or decimals
        return {float(s.replace(",", "").replace(".", "")), float(s.replace(",", "."))}
    return {float(s.replace(",", "."))}


def money_in(text: str) -> list[tuple[float, str | None]]:
    """Amounts written in `text` as (value, currency code or None). A number counts as an amount when
    a currency symbol, code or word stands next to it, or it has decimals (129.00, and 129.0 as
    data renders it; a bare 129 may be an order number)."""
    out: list[tuple[float, str | None]] = []
    for m in _MONEY.finditer(text):
        marker = m.group("pre") or m.group("post") or m.group("sym")
        num = m.group("num")
        decimals = re.search(r"[.,]\d{1,2}$", num) is not None
        if not marker and not decimals:
            continue
        currency = None
        if marker:
            currency = SYMBOLS.get(marker) or WORDS.get(marker.lower()) or marker.upper()
        out += [(v, currency) for v in _number_values(num)]
    return out


def mentions_money(text: str, value: float, currency: str | None = None) -> bool:
    """`text` states the amount `value` (to the cent) in any common way: 1015.00, 1,015.00,
    1.015,00, €1,015, 1015 euros, EUR 1015.00. With `currency`, an amount written with another
    currency does not count."""
    return any(abs(v - abs(value)) < 0.005 and (currency is None or c in (None, currency.upper()))
               for v, c in money_in(text))


# -- dates ---------------------------------------------------------------------------------------
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WEEKDAY = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*\.?,?\s+"
_ORD = r"(?:st|nd|rd|th)?"
_TEXT_DATE = re.compile(
    rf"\b(?:{_WEEKDAY})?(?:the\s+)?(?:\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MONTH}|{_MONTH}\s+\d{{1,2}}{_ORD}\b)"
    rf"(?:,?\s+\d{{4}}\b)?", re.IGNORECASE)
_ISO_DATE = re.compile(r"(?<![\d.])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\d])")
_DOTTED = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})?(?![\d])")
_SLASHED = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")
_RANGE = re.compile(rf"(?<![\d.:])(\d{{1,2}}){_ORD}\s*(?:-|–|—|to|until|till)\s*(\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MONTH}"
                    rf"(?:,?\s+\d{{4}}\b)?)", re.IGNORECASE)


def _date(y: int, m: int, d: int) -> dt.date | None:
    try:
        return dt.date(y, m, d)
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def _parse_text_date(span: str, year: int) -> dt.date | None:
    try:
        return dateparser.parse(span, default=dt.datetime(year, 1, 1), fuzzy=True).date()
    except (ValueError, OverflowError):
        return None


def dates_in(text: str, year: int) -> set[dt.date]:
    """Dates written in `text`: 2026-03-13, 13.03.2026, 13/03/2026 (and as 3 December), 13 March 2026,
    March 13, 2026, Fri, Mar 13, 2026, the 13th of March, and ranges like 21-24 May (both ends). A
    date written without a year is taken to be in `year`."""
    out: set[dt.date] = set()
    for m in _ISO_DATE.finditer(text):
        out.add(_date(int(m[1]), int(m[2]), int(m[3])))  # type: ignore[arg-type]
    for m in _DOTTED.finditer(text):
        out.add(_date(int(m[3] or year), int(m[2]), int(m[1])))  # type: ignore[arg-type]
    for m in _SLASHED.finditer(text):
        out.add(_date(int(m[3]), int(m[2]), int(m[1])))  # type: ignore[arg-type]
        out.add(_date(int(m[3]), int(m[1]), int(m[2])))  # type: ignore[arg-type]
    for m in _TEXT_DATE.finditer(text):
        out.add(_parse_text_date(m.group(0), year))  # type: ignore[arg-type]
    for m in _RANGE.finditer(text):
        end = _parse_text_date(m.group(2), year)
        if end is not None:
            out.add(end)
            out.add(_date(end.year, end.month, int(m[1])))  # type: ignore[arg-type]
    out.discard(None)  # type: ignore[arg-type]
    return out


def mentions_date(text: str, day: dt.date | str) -> bool:
    """`text` states the date `day` in any common way (see `dates_in`); without a year it counts."""
    d = dt.date.fromisoformat(day) if isinstance(day, str) else day
    return d in dates_in(text, d.year)


# -- times ---------------------------------------------------------------------------------------
_CLOCK = re.compile(r"(?<![\d:.])(\d{1,2})(?::|\.|h)(\d{2})(?![\d:])(?:\s*(a\.?m\.?|p\.?m\.?)(?![a-z]))?",
                    re.IGNORECASE)
_HOUR = re.compile(r"(?<![\d:.])(\d{1,2})\s*(?:(a\.?m\.?|p\.?m\.?)(?![a-z])|h\b|o'clock)", re.IGNORECASE)
_NAMED = {"noon": dt.time(12, 0), "midday": dt.time(12, 0), "midnight": dt.time(0, 0)}
# "1:00-1:45 PM", "10-11 am": the first time of a range shares the second's am/pm.
_CLOCK_RANGE = re.compile(r"(?<![\d:.])(\d{1,2})(?::(\d{2}))?\s*(?:-|–|—|to|until|till)\s*(\d{1,2})(?::\d{2})?\s*"
                          r"(a\.?m\.?|p\.?m\.?)(?![a-z])", re.IGNORECASE)


def _clock(h: int, m: int, half: str | None) -> dt.time | None:
    if half:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if half.lower().startswith("p") else 0)
    if 0 <= h <= 23 and 0 <= m <= 59:
        return dt.time(h, m)
    return None


def times_in(text: str) -> set[dt.time]:
    """Times of day written in `text`: 15:00, 15.00, 15h00, 3 pm, 3:00 PM, 3 p.m., noon, and both
    ends of 1:00-1:45 PM (which is not 01:00)."""
    out: set[dt.time | None] = set()
    shared: set[int] = set()  # where a range's first time starts: it takes the range's am/pm
    for m in _CLOCK_RANGE.finditer(text):
        first, second, half = int(m[1]), int(m[3]), m[4].lower()
        if first % 12 > second % 12:  # "11-1 pm" starts in the morning
            half = "am" if half.startswith("p") else "pm"
        out.add(_clock(first, int(m[2] or 0), half))
        shared.add(m.start(1))
    for m in _CLOCK.finditer(text):
        if m[0][len(m[1])] == "." and not m[3]:
            continue  # "15.00" alone is more often an amount than a time
        if m.start(1) in shared and not m[3]:
            continue
        out.add(_clock(int(m[1]), int(m[2]), m[3]))
    for m in _HOUR.finditer(text):
        out.add(_clock(int(m[1]), 0, m[2]))
    low = text.lower()
    out |= {t for word, t in _NAMED.items() if re.search(rf"\b{word}\b", low)}
    out.discard(None)
    return out  # type: ignore[return-value]


def mentions_time(text: str, time: dt.time | str) -> bool:
    t = dt.time.fromisoformat(time) if isinstance(time, str) else time
    return t in times_in(text)


# -- needles -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Money:
    """An amount a check looks for, written any common way. `currency` (EUR, GBP...) only decides how
    validation writes it; an amount stated with another currency code does not match."""
    value: float
    currency: str | None = None

    def __str__(self) -> str:
        return f"{self.value:.2f}" + (f" {self.currency}" if self.currency else "")

    def found_in(self, text: str) -> bool:
        return mentions_money(text, self.value, self.currency)


@dataclass(frozen=True)
class Day:
    """A calendar date a check looks for: Day("2026-03-27") or Day(date(2026, 3, 27))."""
    value: dt.date

    def __init__(self, value: dt.date | str):
        object.__setattr__(self, "value", dt.date.fromisoformat(value) if isinstance(value, str) else value)

    def __str__(self) -> str:
        return self.value.isoformat()

    def found_in(self, text: str) -> bool:
        return mentions_date(text, self.value)


@dataclass(frozen=True)
class Clock:
    """A time of day a check looks for: Clock("15:00")."""
    value: dt.time

    def __init__(self, value: dt.time | str):
        object.__setattr__(self, "value", dt.time.fromisoformat(value) if isinstance(value, str) else value)

    def __str__(self) -> str:
        return self.value.strftime("%H:%M")

    def found_in(self, text: str) -> bool:
        return mentions_time(text, self.value)


Needle = str | Money | Day | Clock | tuple["Needle", ...] | list["Needle"]


def _found(text: str, low: str, needle: Needle) -> bool:
    if isinstance(needle, str):
        return needle.lower() in low
    if isinstance(needle, (tuple, list)):
        return any(_found(text, low, n) for n in needle)
    return needle.found_in(text)


def mentions(text: str, *needles: Needle) -> bool:
    """Every needle occurs in `text`: a string case-insensitively, a tuple/list as any one of its
    alternatives, Money/Day/Clock however the value is written."""
    low = text.lower()
    return all(_found(text, low, n) for n in needles)


def mentions_any(text: str, needles: Iterable[Needle]) -> bool:
    low = text.lower()
    return any(_found(text, low, n) for n in needles)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;])\s+|\n+", text) if s.strip()]


def states(text: str, *needles: Needle, distractors: Iterable[Needle] = (),
           context: Mapping[Needle, tuple[str, ...]] | None = None) -> bool:
    """The answer states every needle and none of the distractors: the plausible wrong answers that
    the data holds (another account's balance, the runner-up, the old date). An answer that pastes
    the data, or hedges between the right value and a wrong one, fails. `context` lets a distractor
    stand in a sentence that also says what it is (distractor -> words): "25M now, 40M from June"
    names the June quota as context, not as the answer."""
    if not mentions(text, *needles):
        return False
    if not context:
        return not mentions_any(text, distractors)
    wrong = list(distractors)
    return not any(mentions_any(s, [d]) and not (d in context and mentions_any(s, context[d]))
                   for s in _sentences(text) for d in wrong)
