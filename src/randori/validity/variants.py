"""What validation tries against a check: real wrong values, extra calls, and answers as people write them.

- `ValuePool` finds, for an argument of a ground-truth call, other real values of the same kind in
  the suite's own data (another IBAN, another contact's address, another file id, another date).
  A sentinel such as "changed" mostly makes the tool fail; a real value makes it act on the wrong
  object, which is the mistake a real agent makes.
- `phrasings` rewrites a ground-truth answer the way people and models write: amounts, dates and
  times in other styles, markdown, a chatty preamble, another letter case.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from randori.tasks import answers

# -- real values ---------------------------------------------------------------------------------
_CLASSES = {
    "email": re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$"),
    "iban": re.compile(r"^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "datetime": re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?$"),
    "time": re.compile(r"^\d{2}:\d{2}$"),
    "url": re.compile(r"^https?://\S+$"),
}


def lexical_class(value: str) -> str | None:
    return next((name for name, rx in _CLASSES.items() if rx.match(value)), None)


def _is_collection(d: dict[str, Any]) -> bool:
    """A dict keyed by ids (files by name, accounts by id) rather than a record's fields: two or more
    entries, all records with the same fields."""
    vals = list(d.values())
    return (len(vals) >= 2 and all(isinstance(v, dict) for v in vals)
            and len({tuple(sorted(v)) for v in vals}) == 1)


def _order(value: Any) -> str:
    """A stable order that is not alphabetical, so the first few alternatives are spread out."""
    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


class ValuePool:
    """Every leaf value of an environment dump, indexed by where it sits (the path with list positions
    and collection keys generalised), by its field name, and by its lexical class."""

    def __init__(self, data: Any):
        self.by_pattern: dict[str, dict[str, Any]] = defaultdict(dict)
        self.patterns_of: dict[str, set[str]] = defaultdict(set)
        self.by_field: dict[str, dict[str, Any]] = defaultdict(dict)
        self.by_class: dict[str, dict[str, Any]] = defaultdict(dict)
        self._walk(data, "", "")

    def _add(self, value: Any, pattern: str, field: str) -> None:
        key = _key(value)
        self.by_pattern[pattern][key] = value
        self.patterns_of[key].add(pattern)
        if field:
            self.by_field[field][key] = value
        if isinstance(value, str) and (cls := lexical_class(value)):
            self.by_class[cls][key] = value

    def _walk(self, obj: Any, pattern: str, field: str) -> None:
        if isinstance(obj, dict):
            if _is_collection(obj):
                for k, v in obj.items():
                    self._add(k, pattern + ".#", field)
                    self._walk(v, pattern + ".*", field)
            else:
                for k, v in obj.items():
                    self._walk(v, f"{pattern}.{k}", str(k))
        elif isinstance(obj, list):
            for v in obj:
                self._walk(v, pattern + "[]", field)
        elif obj is not None:
            self._add(obj, pattern, field)

    def same_kind(self, value: Any, arg: str) -> list[Any]:
        """Other real values of `value`'s kind: those found where `value` itself is found, those of
        its lexical class (any e-mail address, IBAN, date...), and, for a value the data does not
        hold (a new message's text), the data's values of a field named like the argument."""
        key = _key(value)
        found: dict[str, Any] = {}
        for p in sorted(self.patterns_of.get(key, ())):
            found.update(self.by_pattern[p])
        if isinstance(value, str) and (cls := lexical_class(value)):
            found.update(self.by_class[cls])
        if not found:
            for name in _field_names(arg):
                found.update(self.by_field.get(name, {}))
        found.pop(key, None)
        same_type = [v for v in found.values() if type(v) is type(value)
                     and not (isinstance(v, str) and v.casefold() == str(value).casefold())]
        return sorted(same_type, key=_order)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _field_names(arg: str) -> list[str]:
    names = [arg]
    for suffix in ("_id", "_ids", "s"):
        if arg.endswith(suffix) and len(arg) > len(suffix):
            names.append(arg[: -len(suffix)])
    if arg.endswith("_id"):
        names.append("id")
    return names


def shifted(value: Any) -> list[Any]:
    """Near misses of a number, date or time: an amount off by a cent or a unit, a day or an hour."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, float):
        return [round(value + 0.01, 2), round(value + 1, 2), round(value - 1, 2)]
    if isinstance(value, str):
        cls = lexical_class(value)
        if cls == "date":
            d = dt.date.fromisoformat(value)
            return [(d + dt.timedelta(days=1)).isoformat(), (d - dt.timedelta(days=1)).isoformat()]
        if cls == "datetime":
            t = dt.datetime.fromisoformat(value.replace(" ", "T"))
            sep = " " if " " in value else "T"
            spec = "minutes" if value.count(":") == 1 else "seconds"
            return [(t + delta).isoformat(sep=sep, timespec=spec)
                    for delta in (dt.timedelta(hours=1), dt.timedelta(days=1))]
        if cls == "time":
            h, m = map(int, value.split(":"))
            return [f"{(h + 1) % 24:02d}:{m:02d}", f"{(h - 1) % 24:02d}:{m:02d}"]
    return []


def plausible_values(pool: ValuePool, value: Any, arg: str, *, limit: int = 3,
                     grow_and_shrink: bool = True) -> list[Any]:
    """Wrong values a real agent might pass for `arg`: near misses of numbers, dates and times, and
    up to `limit` other real values of the same kind. A list loses an element or gains a real one
    when `grow_and_shrink` (an attacker's goal is still met when the agent adds someone, so
    injection checks are probed with same-size changes only)."""
    out: list[Any] = list(shifted(value))
    if isinstance(value, list):
        if value:
            for alt in plausible_values(pool, value[-1], arg, limit=1, grow_and_shrink=False):
                if alt not in value:
                    out.append([*value[:-1], alt])
            if grow_and_shrink:
                out.append(value[:-1])
                extra = [a for a in plausible_values(pool, value[-1], arg, limit=limit, grow_and_shrink=False)
                         if a not in value and not isinstance(a, list)]
                if extra:
                    out.append([*value, extra[0]])
        return _unique(out, value)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        out += pool.same_kind(value, arg)[:limit]
    return _unique(out, value)


def _unique(values: list[Any], original: Any) -> list[Any]:
    seen = {_key(original)}
    out = []
    for v in values:
        k = _key(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


# -- answers as people write them ----------------------------------------------------------------
_CURRENCY_WORD = {"EUR": "euros", "USD": "dollars", "GBP": "pounds"}
_SYMBOL = {code: sym for sym, code in answers.SYMBOLS.items()}
_MONTHS = [m.capitalize() for m in answers.MONTHS]
_ISO_TIME = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")


def _money_spans(text: str) -> Iterator[tuple[int, int, float, str]]:
    """Amounts written with a currency in a ground-truth answer (written English style)."""
    for m in answers._MONEY.finditer(text):
        marker = m.group("pre") or m.group("post") or m.group("sym")
        if not marker:
            continue
        code = answers.SYMBOLS.get(marker) or answers.WORDS.get(marker.lower()) or marker.upper()
        yield m.start(), m.end(), float(m.group("num").replace(",", "")), code


def _grouped(v: float, decimals: int) -> str:
    return f"{v:,.{decimals}f}"


def _european(v: float) -> str:
    return _grouped(v, 2).replace(",", "_").replace(".", ",").replace("_", ".")


def money_styles(v: float, code: str) -> dict[str, str]:
    sym = _SYMBOL.get(code, code + " ")
    whole = float(v).is_integer()
    short = _grouped(v, 0) if whole else _grouped(v, 2)
    return {
        "symbol before": f"{sym}{_grouped(v, 2)}".replace("  ", " "),
        "symbol after": f"{_grouped(v, 2)} {sym.strip()}",
        "code before": f"{code} {_grouped(v, 2)}",
        "code after": f"{_grouped(v, 2)} {code}",
        "no cents": f"{sym}{short}".replace("  ", " "),
        "in words": f"{short} {_CURRENCY_WORD.get(code, code)}",
        "no thousands separator": f"{v:.2f} {code}",
        "european": f"{_european(v)} {sym.strip()}",
        **({"dash": f"{_european(v)[:-3]},– {sym.strip()}"} if whole else {}),
    }


def _date_spans(text: str) -> Iterator[tuple[int, int, dt.date, bool, str]]:
    """(start, end, date, has_year, weekday text) for ISO dates and written dates, except the end of
    a range such as "21 to 24 May" (rewriting half a range would be no answer at all)."""
    ranges = [(m.start(), m.end()) for m in answers._RANGE.finditer(text)]
    for m in answers._ISO_DATE.finditer(text):
        d = answers._date(int(m[1]), int(m[2]), int(m[3]))
        if d:
            yield m.start(), m.end(), d, True, ""
    for m in answers._TEXT_DATE.finditer(text):
        if any(a <= m.start() < b for a, b in ranges):
            continue
        span = m.group(0)
        has_year = re.search(r"\d{4}\b", span) is not None
        d = answers._parse_text_date(span, 2000)  # a leap year, so 29 February parses
        weekday = re.match(answers._WEEKDAY, span, re.IGNORECASE)
        if d:
            yield m.start(), m.end(), d, has_year, (weekday.group(0).strip(" ,") if weekday else "")


def date_styles(d: dt.date, has_year: bool, weekday: str) -> dict[str, str]:
    month = _MONTHS[d.month - 1]
    if not has_year:
        lead = f"{weekday}, " if weekday else ""
        return {"day month": f"{lead}{d.day} {month}", "month day": f"{lead}{month} {d.day}",
                "dotted": f"{lead}{d:%d.%m.}", "day/month": f"{lead}{d:%d/%m}"}
    return {"iso": d.isoformat(), "day month year": f"{d.day} {month} {d.year}",
            "month day, year": f"{month} {d.day}, {d.year}",
            "weekday, month day, year": f"{d:%a}, {month[:3]} {d.day}, {d.year}",
            "dotted": f"{d:%d.%m.%Y}", "day/month": f"{d:%d/%m}"}


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _relative(d: dt.date, today: dt.date) -> str | None:
    """How a person names `d` from `today` when it is near: tomorrow, this Thursday, Friday next week."""
    name = d.strftime("%A")
    monday = today - dt.timedelta(days=today.weekday())
    if d == today + dt.timedelta(days=1):
        return "tomorrow"
    if today < d < monday + dt.timedelta(days=7):
        return f"this {name}"
    if monday + dt.timedelta(days=7) <= d < monday + dt.timedelta(days=14):
        return f"{name} next week"
    return None


def context_date_styles(d: dt.date, days: list[Any]) -> dict[str, str]:
    """Styles a date may take where the check's own needles allow them: "the 27th" where the
    question fixes the month, "this Thursday" where the check knows the suite's today."""
    out: dict[str, str] = {}
    for day in days:
        if day.value != d:
            continue
        if day.month_known:
            out["ordinal"] = f"the {_ordinal(d.day)}"
        if day.today is not None and (near := _relative(d, day.today)):
            out["relative"] = near
    return out


def time_styles(h: int, m: int) -> dict[str, str]:
    h12 = h % 12 or 12
    half = "pm" if h >= 12 else "am"
    return {"24-hour": f"{h:02d}:{m:02d}", "12-hour short": f"{h12} {half}" if m == 0 else f"{h12}:{m:02d} {half}",
            "12-hour": f"{h12}:{m:02d} {half.upper()}", "dotted": f"{h:02d}.{m:02d}"}


def _spans(text: str, days: list[Any]) -> dict[str, list[tuple[int, int, dict[str, str]]]]:
    out: dict[str, list[tuple[int, int, dict[str, str]]]] = {"money": [], "date": [], "time": []}
    for a, b, v, code in _money_spans(text):
        out["money"].append((a, b, money_styles(v, code)))
    for a, b, d, has_year, wd in _date_spans(text):
        out["date"].append((a, b, {**date_styles(d, has_year, wd), **context_date_styles(d, days)}))
    for m in _ISO_TIME.finditer(text):
        out["time"].append((m.start(), m.end(), time_styles(int(m[1]), int(m[2]))))
    return out


def _replace(text: str, spans: list[tuple[int, int, str]]) -> str:
    for a, b, new in sorted(spans, reverse=True):
        text = text[:a] + new + text[b:]
    return text


def phrasings(answer: str, days: Iterable[Any] = ()) -> list[tuple[str, str]]:
    """The ground-truth answer as people and models write it: (what changed, text). Each amount,
    date and time style is applied to every value of its kind at once; then markdown, a chatty
    frame and letter case. `days` are the Day needles the check reads: they allow "the 27th" and
    "this Thursday" where the question fixes the month or the check knows the suite's today."""
    spans = _spans(answer, list(days))
    out: list[tuple[str, str]] = []
    for kind, found in spans.items():
        if not found:
            continue
        for style in dict.fromkeys(k for _, _, styles in found for k in styles):
            out.append((f"{kind}: {style}", _replace(answer, [(a, b, s[style]) for a, b, s in found
                                                               if style in s])))
    values = [(a, b, f"**{answer[a:b]}**") for found in spans.values() for a, b, _ in found]
    if values:
        out.append(("markdown emphasis", _replace(answer, _disjoint(values))))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", answer.strip()) if s]
    out.append(("markdown bullets", "Here is what I found:\n\n" + "\n".join(f"- {s}" for s in sentences)))
    out.append(("chatty", f"Sure! I looked into this for you.\n\n{answer}\n\nLet me know if you need anything else."))
    out.append(("upper case", answer.upper()))
    out.append(("lower case", answer.lower()))
    return [(label, text) for label, text in out if text != answer]


def _disjoint(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    for a, b, s in sorted(spans):
        if not out or a >= out[-1][1]:
            out.append((a, b, s))
    return out


def with_alternative(answer: str, distractor: Any) -> str:
    """The answer hedged with a wrong value as an alternative."""
    return f"{answer} Or possibly {distractor}, I am not completely sure."


# -- statements turned wrong -----------------------------------------------------------------------
def negate(text: str, found: list[tuple[int, int]]) -> str:
    """`text` with each value at `found` denied ("not 129.00 EUR")."""
    return _replace(text, [(a, a, "not ") for a, _ in found])


def swap(text: str, first: list[tuple[int, int]], second: list[tuple[int, int]]) -> str | None:
    """`text` with the values at `first` and at `second` exchanged (every occurrence of each), or
    None when they overlap or read the same."""
    one, two = text[first[0][0]:first[0][1]], text[second[0][0]:second[0][1]]
    if one.casefold() == two.casefold() or any(a < d and c < b for a, b in first for c, d in second):
        return None
    return _replace(text, [(a, b, two) for a, b in first] + [(a, b, one) for a, b in second])


_OTHER_CURRENCY = {"EUR": "USD", "€": "$", "euros": "dollars", "euro": "dollar"}


def in_another_currency(text: str, amounts: list[tuple[int, int]]) -> str:
    """`text` with each amount at `amounts` written in another currency: euros become dollars, any
    other currency euros; an amount written without one gets "USD" after it."""
    edits: list[tuple[int, int, str]] = []
    for m in answers._MONEY.finditer(text):
        if not any(a < m.end() and m.start() < b for a, b in amounts):
            continue
        group = next((g for g in ("pre", "post", "sym") if m.group(g)), None)
        if group is None:
            edits.append((m.end("num"), m.end("num"), " USD"))
            continue
        marker = m.group(group)
        other = _OTHER_CURRENCY.get(marker) or _OTHER_CURRENCY.get(marker.upper()) \
            or _OTHER_CURRENCY.get(marker.lower()) or ("euros" if marker.isalpha() and marker.islower() and
                                                        len(marker) > 3 else "€" if not marker.isalpha() else "EUR")
        edits.append((m.start(group), m.end(group), other))
    return _replace(text, edits)
