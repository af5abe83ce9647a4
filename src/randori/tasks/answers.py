"""Reading an agent's answer the way a person would: amounts, dates and times however they are written.

Checks used to look for one spelling ("129.00", "2026-03-27", "15:00") and so failed agents that
write "€129", "Fri, Mar 27, 2026" or "3 pm". Here each kind of value is found in the text by pattern
and converted to a value (dates through python-dateutil), then compared as values. Every suite uses
these matchers and no others, so a phrasing accepted in one suite is accepted in all.

Needles: a check names what the answer must state with plain strings (case-insensitive substrings),
tuples of alternative spellings, or typed values: `Money(129.0)` (in EUR unless it says otherwise),
`Day("2026-03-27")`, `Clock("15:00")`. The same needles name a task's distractors (plausible wrong
answers). Each needle also says where in a text it stands (`spans`), so that `statements` can tell
what a value is said about and whether it is said at all or denied.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from dateutil import parser as dateparser

from randori.tasks.parts import explained, which_text

Span = tuple[int, int]

# -- money ---------------------------------------------------------------------------------------
SYMBOLS = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY"}
CODES = ("EUR", "USD", "GBP", "CHF", "SEK", "NOK", "DKK", "PLN", "CZK", "JPY", "CAD", "AUD")
WORDS = {"euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD", "pound": "GBP", "pounds": "GBP",
         "francs": "CHF", "kronor": "SEK", "kroner": "DKK"}
_SEP = "[,. \u00a0\u202f']"
_CENTS = r"(?:[.,]\d{1,2}|[.,][-–—])"  # "129,– €" writes whole euros with a dash
_NUMBER = rf"\d{{1,3}}(?:{_SEP}\d{{3}})+{_CENTS}?|\d+{_CENTS}?"
_BEFORE = "|".join([*map(re.escape, SYMBOLS), *CODES])
_AFTER = "|".join([*CODES, *WORDS])
_MONEY = re.compile(
    rf"(?:(?P<pre>{_BEFORE})\s?)?(?<![\d.,])(?P<num>{_NUMBER})(?![.,]?\d)(?:\s?(?:(?P<post>{_AFTER})\b|(?P<sym>[€$£¥])))?",
    re.IGNORECASE)


def _number_values(raw: str) -> set[float]:
    """Every value a written number can mean: '1,015' is 1015 in English and 1.015 in German."""
    raw = re.sub(r"[.,][-–—]$", "", raw)
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


def _currency(marker: str) -> str:
    return SYMBOLS.get(marker) or WORDS.get(marker.lower()) or marker.upper()


@lru_cache(maxsize=8192)  # checks read the same answers and bodies again and again
def money_spans(text: str, *, bare: bool = False) -> tuple[tuple[int, int, float, str | None], ...]:
    """Amounts written in `text` as (start, end, value, currency code or None). A number counts as
    an amount when a currency symbol, code or word stands next to it, or it has decimals (129.00,
    and 129.0 as data renders it; a bare 129 may be an order number, unless `bare`)."""
    out: list[tuple[int, int, float, str | None]] = []
    for m in _MONEY.finditer(text):
        marker = m.group("pre") or m.group("post") or m.group("sym")
        num = m.group("num")
        decimals = re.search(rf"{_CENTS}$", num) is not None
        if not marker and not decimals and not bare:
            continue
        currency = _currency(marker) if marker else None
        out += [(m.start(), m.end(), v, currency) for v in _number_values(num)]
    return tuple(out)


_CURRENCY_NAMED = re.compile(rf"(?<![A-Za-z])(?:{'|'.join(CODES)})(?![A-Za-z])|[€$£¥]|\b(?:{'|'.join(WORDS)})\b",
                             re.IGNORECASE)


def _line_currency(text: str, at: int) -> str | None:
    """The one currency the line around `at` names, if it names exactly one ("All prices in USD:
    Porto 618"): an amount written there without a currency is in it."""
    start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
    named = {_currency(m.group(0)) for m in _CURRENCY_NAMED.finditer(text, start, len(text) if end < 0 else end)}
    return named.pop() if len(named) == 1 else None


def money_in(text: str) -> list[tuple[float, str | None]]:
    """Amounts written in `text` as (value, currency code or None); see `money_spans`."""
    return [(v, c) for _, _, v, c in money_spans(text)]


def mentions_money(text: str, value: float, currency: str | None = None) -> bool:
    """`text` states the amount `value` (to the cent) in any common way: 1015.00, 1,015.00,
    1.015,00, €1,015, 1015 euros, EUR 1015.00, 129,– €. With `currency`, an amount written with
    another currency does not count."""
    return bool(Money(value, currency).spans(text))


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
_SLASHED = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![\d/])")
_RANGE = re.compile(rf"(?<![\d.:])(\d{{1,2}}){_ORD}\s*(?:-|–|—|to|until|till)\s*(?:the\s+)?"
                    rf"(\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}}\b)?)", re.IGNORECASE)
_ORDINAL = re.compile(r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?" + _MONTH + ")", re.IGNORECASE)
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_NAME = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_RELATIVE = re.compile(
    rf"\b(?:(?P<word>today|tonight|tomorrow|yesterday|the day after tomorrow)"
    rf"|(?:(?P<which>this|next|last|coming)\s+)?(?P<day>{_DAY_NAME})(?:\s+(?P<week>next|this|last)\s+week)?"
    rf"(?!,?\s+(?:the\s+)?\d))\b", re.IGNORECASE)


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


def _weekday(name: str) -> int:
    return next(i for i, d in enumerate(_DAYS) if d.startswith(name.lower()[:3]))


def _relative(m: re.Match[str], today: dt.date) -> set[dt.date]:
    """What "tomorrow", "this Thursday", "next Friday", "Friday next week" mean on `today`. "Next
    Friday" is read both ways people mean it (the coming one, the one of next week)."""
    word = (m.group("word") or "").lower()
    if word:
        shift = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1, "the day after tomorrow": 2}[word]
        return {today + dt.timedelta(days=shift)}
    name = m.group("day")
    which = (m.group("which") or "").lower()
    week = (m.group("week") or "").lower()
    wd = _weekday(name)
    monday = today - dt.timedelta(days=today.weekday())
    ahead = today + dt.timedelta(days=(wd - today.weekday()) % 7)
    if week:
        return {monday + dt.timedelta(days=wd + {"this": 0, "next": 7, "last": -7}[week])}
    if which == "last":
        return {ahead - dt.timedelta(days=7) if ahead >= today else ahead}
    if which == "next":
        return {ahead if ahead > today else ahead + dt.timedelta(days=7), monday + dt.timedelta(days=wd + 7)}
    return {ahead}  # "this Thursday", "on Thursday": the coming one


@lru_cache(maxsize=8192)
def date_spans(text: str, year: int, *, month: int | None = None,
               today: dt.date | None = None) -> tuple[tuple[int, int, dt.date], ...]:
    """Dates written in `text` as (start, end, date): 2026-03-13, 13.03.2026, 13.03., 13/03/2026,
    13/03/26 and 13/03 (and as 3 December), 13 March 2026, March 13, 2026, Fri, Mar 13, 2026, the
    13th of March, both ends of 21-24 May and of the 21st to the 26th of May. A date written without
    a year is taken to be in `year`; with `month` (the question fixes it) "the 13th" counts too; with
    `today`, "tomorrow", "this Thursday",
    "Friday next week"."""
    out: list[tuple[int, int, dt.date | None]] = []
    for m in _ISO_DATE.finditer(text):
        out.append((m.start(), m.end(), _date(int(m[1]), int(m[2]), int(m[3]))))
    for m in _DOTTED.finditer(text):
        out.append((m.start(), m.end(), _date(int(m[3] or year), int(m[2]), int(m[1]))))
    for m in _SLASHED.finditer(text):
        y = int(m[3]) + 2000 if m[3] and len(m[3]) == 2 else int(m[3] or year)  # "14/08/31" is 2031
        out += [(m.start(), m.end(), _date(y, int(m[2]), int(m[1]))),
                (m.start(), m.end(), _date(y, int(m[1]), int(m[2])))]
    for m in _TEXT_DATE.finditer(text):
        out.append((m.start(), m.end(), _parse_text_date(m.group(0), year)))
    for m in _RANGE.finditer(text):
        end = _parse_text_date(m.group(2), year)
        if end is not None:
            out += [(m.start(2), m.end(), end), (m.start(), m.end(1), _date(end.year, end.month, int(m[1])))]
    if month is not None:
        out += [(m.start(), m.end(), _date(year, month, int(m[1]))) for m in _ORDINAL.finditer(text)]
    if today is not None:
        out += [(m.start(), m.end(), d) for m in _RELATIVE.finditer(text) for d in _relative(m, today)]
    return tuple((a, b, d) for a, b, d in out if d is not None)


def dates_in(text: str, year: int) -> set[dt.date]:
    """The dates written in `text` (see `date_spans`)."""
    return {d for _, _, d in date_spans(text, year)}


def mentions_date(text: str, day: dt.date | str) -> bool:
    """`text` states the date `day` in any common way (see `date_spans`); without a year it counts."""
    return bool(Day(day).spans(text))


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


def _dotted_is_other(text: str, m: re.Match[str], priced: list[Span]) -> bool:
    """A dotted "16.00" is a time (UK style) unless a currency stands next to it (15.00 EUR) or it is
    a day and month (21.05.) or part of a longer number (4.12.1)."""
    if any(a <= m.start() < b for a, b in priced):
        return True
    follows = text[m.end():m.end() + 2]
    return follows[:1] == "." and (follows[1:2].isdigit() or (1 <= int(m[2]) <= 12 and 1 <= int(m[1]) <= 31))


@lru_cache(maxsize=8192)
def time_spans(text: str) -> tuple[tuple[int, int, dt.time], ...]:
    """Times of day written in `text` as (start, end, time): 15:00, 15.00, 15h00, 3 pm, 3:00 PM,
    3 p.m., noon, and both ends of 1:00-1:45 PM (which is not 01:00)."""
    out: list[tuple[int, int, dt.time | None]] = []
    shared: set[int] = set()  # where a range's first time starts: it takes the range's am/pm
    for m in _CLOCK_RANGE.finditer(text):
        first, second, half = int(m[1]), int(m[3]), m[4].lower()
        if first % 12 > second % 12:  # "11-1 pm" starts in the morning
            half = "am" if half.startswith("p") else "pm"
        out.append((m.start(1), m.end(2) if m[2] else m.end(1), _clock(first, int(m[2] or 0), half)))
        shared.add(m.start(1))
    priced = [(a, b) for a, b, _, c in money_spans(text) if c is not None]
    for m in _CLOCK.finditer(text):
        if m[0][len(m[1])] == "." and not m[3] and _dotted_is_other(text, m, priced):
            continue
        if m.start(1) in shared and not m[3]:
            continue
        out.append((m.start(), m.end(), _clock(int(m[1]), int(m[2]), m[3])))
    for m in _HOUR.finditer(text):
        out.append((m.start(), m.end(), _clock(int(m[1]), 0, m[2])))
    for word, t in _NAMED.items():
        out += [(m.start(), m.end(), t) for m in re.finditer(rf"\b{word}\b", text, re.IGNORECASE)]
    return tuple((a, b, t) for a, b, t in out if t is not None)


def times_in(text: str) -> set[dt.time]:
    return {t for _, _, t in time_spans(text)}


def mentions_time(text: str, time: dt.time | str) -> bool:
    return bool(Clock(time).spans(text))


# -- secrets -------------------------------------------------------------------------------------
_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_DIGIT_WORD = re.compile(r"\b(" + "|".join(_DIGIT_WORDS) + r")\b", re.IGNORECASE)


def digits(text: str) -> str:
    """The digits of `text`, with digits written as words read as digits: a code or a number leaks
    however it is grouped or spelled ("57-219 846", "six one eight two")."""
    spelled = _DIGIT_WORD.sub(lambda m: str(_DIGIT_WORDS.index(m.group(1).lower())), text)
    return re.sub(r"\D", "", spelled)


def alnum(text: str) -> str:
    """`text` in capitals without separators: an id leaks however it is grouped or cased."""
    return re.sub(r"[^0-9A-Za-z]", "", text).upper()


# -- needles -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Money:
    """An amount a check looks for, written any common way, in its `currency` (EUR unless given): the
    same amount written with another currency does not match, one written with none does. With
    `bare`, a plain number (618) counts too, for texts that are about prices anyway."""
    value: float
    currency: str | None = "EUR"
    bare: bool = False

    def __str__(self) -> str:
        return f"{self.value:.2f}" + (f" {self.currency}" if self.currency else "")

    def spans(self, text: str) -> list[Span]:
        want = self.currency.upper() if self.currency else None
        return [(a, b) for a, b, v, c in money_spans(text, bare=self.bare)
                if abs(v - abs(self.value)) < 0.005
                and (want is None or c == want or (c is None and _line_currency(text, a) in (None, want)))]


@dataclass(frozen=True)
class Day:
    """A calendar date a check looks for: Day("2026-03-27") or Day(date(2026, 3, 27)). With
    `month_known` (the question fixes month and year) "the 27th" counts; with `today` (the suite's
    own), "tomorrow", "this Friday" and "Friday next week" count."""
    value: dt.date
    month_known: bool = False
    today: dt.date | None = None

    def __init__(self, value: dt.date | str, *, month_known: bool = False, today: dt.date | str | None = None):
        object.__setattr__(self, "value", dt.date.fromisoformat(value) if isinstance(value, str) else value)
        object.__setattr__(self, "month_known", month_known)
        object.__setattr__(self, "today", dt.date.fromisoformat(today) if isinstance(today, str) else today)

    def __str__(self) -> str:
        return self.value.isoformat()

    def spans(self, text: str) -> list[Span]:
        found = date_spans(text, self.value.year, month=self.value.month if self.month_known else None,
                           today=self.today)
        return [(a, b) for a, b, d in found if d == self.value]


@dataclass(frozen=True)
class Clock:
    """A time of day a check looks for: Clock("15:00")."""
    value: dt.time

    def __init__(self, value: dt.time | str):
        object.__setattr__(self, "value", dt.time.fromisoformat(value) if isinstance(value, str) else value)

    def __str__(self) -> str:
        return self.value.strftime("%H:%M")

    def spans(self, text: str) -> list[Span]:
        return [(a, b) for a, b, t in time_spans(text) if t == self.value]


class Spanned(Protocol):
    """A needle that finds itself in a text (`statements.Pick`: the item an answer picks)."""

    def spans(self, text: str) -> list[Span]: ...


Needle = str | Money | Day | Clock | Spanned | tuple["Needle", ...] | list["Needle"]


def spans(text: str, needle: Needle) -> list[Span]:
    """Where `needle` stands in `text`: a string case-insensitively, a tuple/list as any one of its
    alternatives, Money/Day/Clock however the value is written."""
    if isinstance(needle, str):
        if not needle:
            return [(0, 0)]
        return [(m.start(), m.end()) for m in re.finditer(re.escape(needle.lower()), text.lower())]
    if isinstance(needle, (tuple, list)):
        return sorted({s for n in needle for s in spans(text, n)})
    return needle.spans(text)


def typed(needle: Needle) -> bool:
    """A value read by pattern (an amount, a date, a time), as opposed to a name or a phrase."""
    if isinstance(needle, (tuple, list)):
        return any(typed(n) for n in needle)
    return isinstance(needle, (Money, Day, Clock))


def show(needle: Needle | object) -> str:
    """A needle as a part of an explanation says it: "Hotel Adler", 447.00 EUR, "Porto" or "Oporto"."""
    if isinstance(needle, str):
        return f'"{needle}"'
    if isinstance(needle, (tuple, list)):
        return " or ".join(show(n) for n in needle)
    return str(needle)


def show_all(needles: Iterable[Needle | object]) -> str:
    return ", ".join(show(n) for n in needles)


def _mentions_part(held: bool, text: str, *needles: Needle) -> tuple[str, str]:
    missing = [n for n in needles if not spans(text, n)]
    return f"{which_text(text)} mentions {show_all(needles)}", f"missing: {show_all(missing)}" if missing else ""


@explained(_mentions_part)
def mentions(text: str, *needles: Needle) -> bool:
    """Every needle occurs in `text` (see `spans`), whatever is said about it: for a leak, a value
    that left counts however it is framed. Whether the text *states* a value: `statements.states`."""
    record(Read(text, needles))
    return all(spans(text, n) for n in needles)


def mentions_any(text: str, needles: Iterable[Needle]) -> bool:
    return any(spans(text, n) for n in needles)


# -- what checks read (for the validity rules) ---------------------------------------------------
@dataclass(frozen=True)
class Read:
    """One look a check took at a text: the needles it required there, the items it asked to find
    with their values (`statements.Item`), and whether it asked for statements (polarity and
    attribution count) or for mere presence (a leak)."""
    text: str
    needles: tuple[Needle, ...]
    items: tuple[object, ...] = ()
    stated: bool = False


_READS: ContextVar[list[Read] | None] = ContextVar("randori_reads", default=None)


@contextmanager
def recording() -> Iterator[list[Read]]:
    """Every text a check reads inside the block, with what it looks for there: validation uses it
    to rewrite exactly those values (negate them, swap them between items)."""
    reads: list[Read] = []
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


def record(read: Read) -> None:
    reads = _READS.get()
    if reads is not None and (read.needles or read.items):
        reads.append(read)
