"""Validity rule `roles` (see validate.py): a value counts only in the role it is asked for.

The data a ground truth reads holds most asked values beside others of the same kind: the check-in
time beside the check-out time (fields of one record), the current account's balance beside the
savings account's (the same field of sibling records), the due date of a bill beside its billing
period (lines of one text). For every amount, date and time a check reads (from the answer or from
a text the agent writes), the rule finds where the value stands in the tool results of the ground
truth, the other roles of its kind there, and how the ground-truth text names its own role (the
check's `Item` label, a field of its record, a field's name). Then, for each other role:

- *relabelled*: the value said about the other role (its name where this role's stands);
- *swapped*: the other role's value said about this role, and this value about the other role;

must both fail. Where the data holds no other role, the value said about another real entity of
its kind (another hotel, another flight from the suite's data) must fail. For a `Pick` (the item
an answer names as the best, cheapest, latest), the answer picking another candidate (a declared
one, or a sibling record from the data) must fail, and naming the runner-up as context must not.
A new task gets all of this from its data; it declares nothing but its `Item`s and `Pick`s.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from randori.tasks.answers import MONTHS, Clock, Day, Money, Needle, Span, spans
from randori.tasks.statements import Item, Pick, around, stated_spans, text_segments

if TYPE_CHECKING:
    from randori.validity.probe import SuiteCheck, _Probe, _Run

Typed = Money | Day | Clock


class _Where:
    """Where a read text comes from: the answer, or argument `arg` of ground-truth call `at`."""

    def __init__(self, text: str, at: int | None = None, arg: str = ""):
        self.text, self.at, self.arg = text, at, arg

    def __str__(self) -> str:
        return "the answer" if self.at is None else f"the {self.arg} it writes"


class _Claims(Protocol):
    """What this rule asks of validate_claims' judge (declared here: that module imports this one)."""

    task: Any

    def verdict(self, where: _Where, text: str, rule: str) -> bool | None: ...
MOST_SIBLINGS = 3  # other records of a list tried per value: the nearest ones
_MONEY_KEY = re.compile(r"amount|price|cost|balance|total|fee|deposit|limit|refund|charge|paid|rent|salary|eur|sum",
                        re.IGNORECASE)
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2})(?::\d{2})?)?$")
_TIME = re.compile(r"^(\d{1,2}:\d{2})(?::\d{2})?$")
# Words of a field's name that say nothing about its role ("check_in_from" is the check-in).
_GENERIC = frozenset({"date", "time", "from", "until", "at", "on", "of", "the", "id", "eur", "per", "value", "day",
                      "by", "to", "is", "in"})
# How people name the roles fields stand for, where the field's own name is not what they write.
_ARRIVE, _DEPART = r"arriv\w*|lands?|landing", r"depart\w*|leaves?|leaving|takes?\s+off"
_SYNONYMS = {"arrive": _ARRIVE, "arrival": _ARRIVE, "depart": _DEPART, "departure": _DEPART}
_STOP = frozenset({"with", "from", "that", "this", "your", "their", "have", "will", "been", "into", "over", "about",
                   "after", "before", "under", "there", "which", "what", "when", "where", "also", "only"})


# -- the data the ground truth read ----------------------------------------------------------------------
@dataclass(frozen=True)
class Role:
    """Another role of an asked value's kind: how to name it, its value (None: no value to swap), and
    what tells it apart: another field of the record ("field"), another record ("entity") or another
    line of a text ("line")."""
    label: str
    value: str | None
    by: str


@dataclass
class Slot:
    """Where an asked value stands in the data: a field of a record (with the other records of its
    list), or a line of a text."""
    record: dict[str, Any] | None
    key: str
    siblings: list[dict[str, Any]]
    lines: list[str] | None = None
    line: int = -1


def _parse(content: str) -> Any:
    try:
        return yaml.load(content, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader))  # every scalar a string
    except yaml.YAMLError:
        return None


def _leaf_kind(value: str) -> str | None:
    if _NUMBER.match(value):
        return "money"
    if _ISO_DATE.match(value):
        return "datetime" if " " in value or "T" in value else "date"
    if _TIME.match(value):
        return "time"
    return None


def _leaf_value(needle: Typed, leaf: str) -> bool:
    """A scalar of the data is the needle's value: 3184.52 (or -3184.52), 2026-03-27, 15:00."""
    if isinstance(needle, Money):
        return bool(_NUMBER.match(leaf)) and abs(abs(float(leaf)) - abs(needle.value)) < 0.005
    m = _ISO_DATE.match(leaf)
    if isinstance(needle, Day):
        return m is not None and m[1] == needle.value.isoformat()
    t = _TIME.match(leaf)
    text = m[2] if m and m[2] else t[1] if t else None
    return text is not None and dt.time.fromisoformat(text.zfill(5)) == needle.value


def _kind_of(needle: Typed) -> tuple[str, ...]:
    return ("money",) if isinstance(needle, Money) else ("date", "datetime") if isinstance(needle, Day) \
        else ("time", "datetime")


def _slots(data: Any, needle: Typed, siblings: list[dict[str, Any]] | None = None) -> Iterator[Slot]:
    if isinstance(data, list):
        records = [x for x in data if isinstance(x, dict)]
        for x in data:
            yield from _slots(x, needle, records if isinstance(x, dict) else None)
    elif isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, str):
                if "\n" in v or len(v) > 80:
                    lines = v.splitlines()
                    for i, line in enumerate(lines):
                        if spans(line, needle):
                            yield Slot(None, k, [], lines, i)
                elif _leaf_value(needle, v):
                    # The other records of its list, the nearest first (the neighbouring transactions).
                    others = list(siblings or [])
                    at = next((i for i, x in enumerate(others) if x is data), 0)
                    near = [x for i, x in sorted(enumerate(others), key=lambda p: abs(p[0] - at)) if x is not data]
                    yield Slot(data, k, near)
            else:
                yield from _slots(v, needle)


def _value_text(needle: Typed, leaf: str) -> str | None:
    """The value of a scalar as the needle's kind reads it, normalised (see `_norm`); None when it is
    of another kind."""
    kind = _leaf_kind(leaf)
    if kind is None or kind not in _kind_of(needle):
        return None
    if isinstance(needle, Money):
        return f"{abs(float(leaf)):.2f}"
    m = _ISO_DATE.match(leaf)
    if isinstance(needle, Day):
        return m[1] if m else None
    t = m[2] if m and m[2] else (_TIME.match(leaf) or [None, None])[1]
    return t.zfill(5) if t else None


def _norm(needle: Typed) -> str:
    if isinstance(needle, Money):
        return f"{abs(needle.value):.2f}"
    if isinstance(needle, Day):
        return needle.value.isoformat()
    return needle.value.strftime("%H:%M")


def _humanised(key: str) -> str:
    words = [w for w in re.split(r"[_\W]+", key.lower()) if w and w not in _GENERIC]
    return "-".join(words) if len(words) == 2 and words[0] == "check" else " ".join(words)


def _key_pattern(key: str) -> str | None:
    words = [w for w in re.split(r"[_\W]+", key.lower()) if w and w not in _GENERIC]
    if not words:
        return None
    if len(words) == 1 and words[0] in _SYNONYMS:
        return rf"\b(?:{_SYNONYMS[words[0]]})\b"
    return r"\b" + r"[\s_-]*".join(map(re.escape, words)) + r"\b"


def _entity_fields(record: dict[str, Any]) -> list[str]:
    """The fields of a record that name it: short texts, not numbers, dates or times."""
    return [k for k, v in record.items() if isinstance(v, str) and v.strip() and len(v) <= 60
            and _leaf_kind(v) is None]


_KEYED = re.compile(r"^\s*(?:[-*•]\s*)?([A-Za-zÀ-ÿ0-9][^:|\t]{0,40}?)\s*(?::|\.{2,}|\s[-–—]\s|\t|\|)\s*"
                    r"(?:[A-Z]{3}\s?|[€$£]\s?)?$")


def _line_label(line: str, at: int) -> str | None:
    """How a line of a text names the value at `at`, where it names it as a key does ("Billing
    period: 2026-02-01", "Amount due ...... 187.40 EUR", "Update – 09:20"); None in prose."""
    m = _KEYED.match(line[:at])
    return " ".join(m[1].split()) if m and re.search(r"[A-Za-zÀ-ÿ]{3}", m[1]) else None


# -- how the ground-truth text names the value's role ------------------------------------------------------
def _near(text: str, at: Span, found: list[Span]) -> list[Span]:
    """The spans of `found` in the clause of `at`, else in its sentence, line or list item."""
    for a, b in around(text, at[0], text_segments(text)):
        inside = [s for s in found if a <= s[0] < b and not (s[0] <= at[0] and at[1] <= s[1])]
        if inside:
            return inside
    return []


def _whole_spans(text: str, value: str) -> list[Span]:
    return [(m.start(), m.end()) for m in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE)]


def _word_spans(text: str, value: str) -> list[Span]:
    """Where the distinctive words of `value` stand in `text` ("current" of "Everyday current")."""
    out: list[Span] = []
    for w in re.findall(r"[A-Za-zÀ-ÿ][\wÀ-ÿ'’-]{3,}", value):
        if w.lower() not in _STOP:
            out += [(m.start(), m.end()) for m in re.finditer(rf"(?<!\w){re.escape(w)}(?!\w)", text, re.IGNORECASE)]
    return out


def _disjoint(found: list[tuple[Span, Any]]) -> list[tuple[Span, Any]]:
    out: list[tuple[Span, Any]] = []
    for span, what in sorted(found, key=lambda x: (x[0][0], -(x[0][1] - x[0][0]))):
        if not out or span[0] >= out[-1][0][1]:
            out.append((span, what))
    return out


# -- writing a value as the text wrote this one ---------------------------------------------------------
def _write(needle: Typed, value: str, like: str) -> str:
    if isinstance(needle, Money):
        v = abs(float(value))
        num = re.search(r"\d[\d,.\s]*\d|\d", like)
        decimals = 2 if num and re.search(r"[.,]\d{2}$", num.group(0)) else 0
        grouped = num is not None and re.search(r"\d[,\s]\d{3}", num.group(0)) is not None
        new = f"{v:,.{decimals}f}" if grouped else f"{v:.{decimals}f}"
        return like[:num.start()] + new + like[num.end():] if num else new
    if isinstance(needle, Day):
        d = dt.date.fromisoformat(value)
        if re.match(r"\d{4}-\d{2}-\d{2}$", like):
            return d.isoformat()
        year = f" {d.year}" if re.search(r"\d{4}", like) else ""
        return f"{d.day} {MONTHS[d.month - 1].capitalize()}{year}"
    t = dt.time.fromisoformat(value.zfill(5))
    if re.search(r"[ap]\.?m", like, re.IGNORECASE):
        return f"{t.hour % 12 or 12}:{t.minute:02d} {'pm' if t.hour >= 12 else 'am'}"
    return f"{t.hour:02d}:{t.minute:02d}"


def _replace(text: str, edits: list[tuple[int, int, str]]) -> str:
    for a, b, new in sorted(edits, reverse=True):
        text = text[:a] + new + text[b:]
    return text


# -- the rule ---------------------------------------------------------------------------------------------
class _Roles:
    def __init__(self, probe: _Probe, report: SuiteCheck, claims: _Claims, run: _Run):
        self.probe, self.report, self.claims, self.run = probe, report, claims, run
        # What the ground truth read: the results of its calls that change nothing (a write's result
        # echoes what the agent wrote, which is no data).
        self.data = [d for i, r in enumerate(run.results) if i not in run.changing and r.error is None
                     and (d := _parse(r.content)) is not None]
        self.task = claims.task

    def fail(self, where: _Where, text: str, what: str) -> None:
        passed = self.claims.verdict(where, text, "roles")
        if passed is not None:
            self.report.count("roles", not passed, self.task.id, f"{where} with {what} still passes")

    def hold(self, where: _Where, text: str, what: str) -> None:
        passed = self.claims.verdict(where, text, "roles")
        if passed is not None:
            self.report.count("roles", passed, self.task.id, f"{where} with {what} fails")

    # -- amounts, dates, times
    def value(self, where: _Where, needle: Typed, items: list[Item], alternatives: tuple[Needle, ...] = ()) -> None:
        """`needle` in its role; `alternatives`: the other values the check accepts in its place (any
        day of a trip), which are no other role."""
        text = where.text
        found = stated_spans(text, needle)
        slots = [s for d in self.data for s in _slots(d, needle)]
        if not found or not slots:
            return  # not in the data the ground truth read (a sum, a date it worked out): no role to mix up
        at = found[0]
        # Where the text names the record a value comes from, that record is the value's slot: the
        # one it names most of ("AT1958 from Porto" is the flight, not the Porto hotel ending that day).
        # A line of a text is the slot where the text repeats its words ("mooring kit ... due 21 May").
        def score(sl: Slot) -> int:
            if sl.record is not None:
                named = [s for f in _entity_fields(sl.record)
                         for s in _whole_spans(text, sl.record[f]) + _word_spans(text, sl.record[f])]
            else:
                named = _word_spans(text, sl.lines[sl.line] if sl.lines else "")
            return sum(b - a for a, b in _near(text, at, named))

        scores = [score(sl) for sl in slots]
        if max(scores) > 0:
            slots = [sl for sl, n in zip(slots, scores, strict=True) if n == max(scores)]
        labels = self._own_labels(text, at, needle, items, slots)
        accepted = {_norm(a) for a in alternatives if isinstance(a, (Money, Day, Clock))}
        roles = [r for r in self._roles(needle, slots, labels) if r.value not in accepted]
        v_text = text[at[0]:at[1]]
        for role in roles:
            # A field's role is named by the field's name, another record's by its name; the check's
            # own label may be either.
            own = _disjoint([(span, what) for span, what in labels if span[0] >= 0
                             and (what == "item" or what.startswith("key:") == (role.by == "field"))])
            if own and role.by != "line":
                relabelled = _replace(text, [(a, b, role.label) for (a, b), _ in own])
                self.fail(where, relabelled, f"{needle} said about {role.label!r} (relabelled)")
            if role.value is not None and role.label:
                other = _write(needle, role.value, v_text)
                edits = [(a, b, other) for a, b in found]
                clause = around(text, at[0], text_segments(text))[0]
                gap = " " if clause[1] < len(text) and not text[clause[1]].isspace() else ""
                edits.append((clause[1], clause[1], f"; {role.label}: {v_text}{gap}"))
                self.fail(where, _replace(text, edits), f"{other} said about it and {v_text} about {role.label!r} "
                          "(swapped)")

    def _own_labels(self, text: str, at: Span, needle: Typed, items: list[Item],
                    slots: list[Slot]) -> list[tuple[Span, str]]:
        """How the text names the value's role near it: the check's item label, and fields of its
        record (by value, or by field name) found in its clause or sentence."""
        found: list[tuple[Span, str]] = []
        for it in items:
            if any(needle == v or (isinstance(v, (tuple, list)) and needle in v) for v in it.values):
                found += [(s, "item") for s in _near(text, at, spans(text, it.label))]
        for slot in slots:
            if slot.record is None:
                continue
            for f in _entity_fields(slot.record):
                # A name written whole, in the value's sentence; a word of it (to be replaced) only in
                # its clause: "the Douro road map" does not name Douro Drive, but it tells which of the
                # record's fields name it.
                whole = _near(text, at, _whole_spans(text, slot.record[f]))
                words = _near(text, at, _word_spans(text, slot.record[f]))
                clause = around(text, at[0], text_segments(text))[0]
                found += [(s, f) for s in whole or [w for w in words if clause[0] <= w[0] < clause[1]]]
                if words and not whole:
                    found.append(((-1, -1), f))  # names the field, replaces nothing
            if (pattern := _key_pattern(slot.key)) is not None:
                found += [(s, f"key:{slot.key}") for s in
                          _near(text, at, [(m.start(), m.end()) for m in re.finditer(pattern, text, re.IGNORECASE)])]
        return found

    def _roles(self, needle: Typed, slots: list[Slot], labels: list[tuple[Span, str]]) -> list[Role]:
        roles: dict[tuple[str, str | None], Role] = {}
        fields = [f for _, f in labels if f != "item" and not f.startswith("key:")]

        def add(label: str, value: str | None, by: str) -> None:
            if label:
                roles.setdefault((label.lower(), value), Role(label, value, by))

        own = {_norm(needle)}
        for slot in slots:
            if slot.lines is not None:
                for i in sorted(range(len(slot.lines)), key=lambda i: abs(i - slot.line))[1:MOST_SIBLINGS + 1]:
                    line = slot.lines[i]
                    for a, _, value in _typed_in(line, needle):
                        if value not in own and (label := _line_label(line, a)):
                            add(label, value, "line")
                continue
            record = slot.record
            assert record is not None
            # Other fields of the record holding a value of the kind (check-out beside check-in).
            for k, v in record.items():
                other = _value_text(needle, v) if isinstance(v, str) and k != slot.key else None
                if other is None or other in own:
                    continue
                if isinstance(needle, Money) and (other == "0.00" or not (_MONEY_KEY.search(k)
                                                                           and _MONEY_KEY.search(slot.key))):
                    continue  # a zero is a default (no overdraft), not a role
                add(_humanised(k), other, "field")
            # The same field of the other records of its list (the savings account beside the current one).
            # The record's name as the text gives it, its longest such field first ("AT1958 Porto →
            # Zurich" rather than "flight").
            named = sorted((f for f in dict.fromkeys(fields) if f in record), key=lambda f: -len(str(record[f]))) \
                or _entity_fields(record)[:1]
            for sib in slot.siblings[:MOST_SIBLINGS]:
                theirs = sib.get(slot.key)
                swap = _value_text(needle, theirs) if isinstance(theirs, str) else None
                name = next((str(sib[f]) for f in named if f in sib and sib[f] != record.get(f)), None)
                if swap is not None and swap not in own and name:
                    add(name, swap, "entity")
        if not roles:
            # One role only: the value said about another real entity of its kind.
            for slot in slots:
                fixed = slot.record or {}
                for f in [f for f in fields if f in fixed]:
                    alts = self.probe.pool.same_kind(fixed[f], f)
                    if alts:
                        add(str(alts[0]), None, "entity")
                        break
        return list(roles.values())

    # -- picks
    def pick(self, where: _Where, pick: Pick, declared: bool = True) -> None:
        """The answer picking another candidate must fail; naming the runner-up beside the pick must
        not (for a declared `Pick`: a name the check merely looks for may be strict on purpose)."""
        text = where.text
        choice_spans = spans(text, pick.choice)
        if not choice_spans:
            return
        written = text[choice_spans[0][0]:choice_spans[0][1]]
        candidates = [_first(o) for o in pick.others]
        for sib in self._pick_siblings(written):
            if sib.lower() not in (c.lower() for c in candidates) and not spans(sib, pick.choice):
                candidates.append(sib)
        if not declared:
            candidates = candidates[:MOST_SIBLINGS]
        for other in candidates:
            if not other:
                continue
            theirs = spans(text, other)
            swapped = _replace(text, [(a, b, other) for a, b in choice_spans] + [(a, b, written) for a, b in theirs])
            if not theirs:
                swapped += f" ({written} is another option.)"
            self.fail(where, swapped, f"{other!r} as the pick instead of {written!r}")
        if candidates and declared:
            self.hold(where, f"{text} The runner-up is {candidates[0]}.", f"the runner-up {candidates[0]!r} named "
                      "as context")

    def _pick_siblings(self, written: str) -> list[str]:
        out: list[str] = []
        for data in self.data:
            for record, key, siblings in _records_with(data, written):
                at = next(i for i, s in enumerate(siblings) if s is record)
                near = [s for _, s in sorted(enumerate(siblings), key=lambda p: abs(p[0] - at))]
                out += [str(s[key]) for s in near if s is not record and isinstance(s.get(key), str)
                        and s[key] != record[key]][:MOST_SIBLINGS]
        return list(dict.fromkeys(out))


def _first(needle: Needle) -> str:
    if isinstance(needle, (tuple, list)):
        return _first(needle[0]) if needle else ""
    return needle if isinstance(needle, str) else str(needle)


def _typed_in(line: str, needle: Typed) -> Iterator[tuple[int, int, str]]:
    """The values of the needle's kind written in a line of text, ISO-written."""
    from randori.tasks.answers import date_spans, money_spans, time_spans

    if isinstance(needle, Money):
        for a, b, v, _ in money_spans(line):
            yield a, b, f"{abs(v):.2f}"
    elif isinstance(needle, Day):
        for a, b, d in date_spans(line, needle.value.year):
            yield a, b, d.isoformat()
    else:
        for a, b, t in time_spans(line):
            yield a, b, t.strftime("%H:%M")


def _records_with(data: Any, value: str) -> Iterator[tuple[dict[str, Any], str, list[dict[str, Any]]]]:
    """Records of a list whose field holds `value` (whole or as its start), with the list's records."""
    if isinstance(data, list):
        records = [x for x in data if isinstance(x, dict)]
        for r in records:
            for k, v in r.items():
                if isinstance(v, str) and len(v) <= 80 and v.lower().startswith(value.lower()):
                    yield r, k, records
    children = data if isinstance(data, list) else list(data.values()) if isinstance(data, dict) else []
    for x in children:
        if isinstance(x, (dict, list)):
            yield from _records_with(x, value)


def _names(needle: Needle) -> bool:
    leaves = needle if isinstance(needle, (tuple, list)) else (needle,)
    return bool(leaves) and all(isinstance(x, str) and len(x) >= 2 and re.search(r"[A-Z0-9]", x) for x in leaves)


def _records_in(data: list[Any], value: str) -> list[tuple[dict[str, Any], str, list[dict[str, Any]]]]:
    return [r for d in data for r in _records_with(d, value)]


# A prompt that asks which item is the best, cheapest, latest...: its answer names a pick.
_SUPERLATIVE = re.compile(r"\b(?:best|worst|cheapest|latest|last|newest|oldest|first|most|least|lowest|highest"
                          r"|deepest|priciest|biggest|smallest|earliest|\w+est-rated)\b", re.IGNORECASE)


def check_roles(probe: _Probe, report: SuiteCheck, claims: _Claims, run: _Run, where: _Where,
                needles: list[Needle], items: list[Item], seen: set[tuple[Any, ...]]) -> None:
    """`roles` on one text a check reads (the answer, or a body the agent writes). `seen`: what was
    tried already (a check that reads a body line by line and whole reads its values more than once).
    Where the prompt asks for a best, latest or cheapest item, a name the check looks for in the
    answer that is a record of the data among others is read as a pick, declared or not."""
    roles = _Roles(probe, report, claims, run)
    # Names (capitalised, or ids with digits), one per field: several names of one list are a list
    # asked for ("the last three purchases"), whose members may trade places.
    names = [n for n in needles if _names(n)]
    fields = [key for n in names for _, key, _ in _records_in(roles.data, _first(n))]
    picking = (where.at is None and bool(_SUPERLATIVE.search(getattr(claims.task, "prompt", "")))
               and len(fields) == len(set(fields)))
    for n in [*needles, *(v for it in items for v in it.values)]:
        leaves = n if isinstance(n, (tuple, list)) else (n,)
        if picking and n in names:
            if (key := (where.at, where.arg, repr(n))) not in seen:
                seen.add(key)
                roles.pick(where, Pick(n, words=()), declared=False)
            continue
        for leaf in leaves:
            if not isinstance(leaf, (Money, Day, Clock, Pick)) or (key := (where.at, where.arg, repr(leaf))) in seen:
                continue
            seen.add(key)
            if isinstance(leaf, Pick):
                roles.pick(where, leaf)
            else:
                roles.value(where, leaf, items, tuple(n) if isinstance(n, (tuple, list)) else ())
