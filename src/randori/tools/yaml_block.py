"""A fast writer for the YAML that tool outputs are shown in, byte for byte what PyYAML writes
with libyaml's emitter (which tools/runtime.py uses; without libyaml this writer stands aside).

Rendering a tool's result is on the hot path of every case, and PyYAML spends most of that time
building a node graph in Python before its (C) emitter runs. Tool results are plain JSON-like data,
so this module writes them directly, following PyYAML's own decisions for block style (indentless
sequences under keys, two-space indents, plain scalars where PyYAML would write them plain,
single quotes otherwise, literal blocks for multi-line text). It handles a deliberately narrow
subset; for anything else (a tab, a control character, a character outside the Basic Multilingual
Plane, a long or multi-line key, shared containers that PyYAML would write as anchors) `dump`
returns None and the caller uses PyYAML. tests/tools/test_yaml_block.py
checks the output against PyYAML's on every tool result of every suite and on generated data."""

from __future__ import annotations

import re
from typing import Any

import yaml

# Characters PyYAML writes as they are (printable, allow_unicode), minus every line break and the
# byte order mark. A string with any other character is left to PyYAML.
_SAFE = "\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
_SAFE_LINE = re.compile(f"[{_SAFE}]*")
_SAFE_TEXT = re.compile(f"[{_SAFE}\n]*")
# Given only safe characters on one line, where PyYAML refuses a plain scalar in block context: a
# leading indicator or space, "- ", "? " or ": " at the start, a document marker, ": " or " #"
# inside, a trailing ":" or space.
_NOT_PLAIN = re.compile(r"""\A(?:[ #,\[\]{}&*!|>'"%@`]|[?:-](?: |\Z)|---|\.\.\.)|: |:\Z| #| \Z""")
_LIBYAML = hasattr(yaml, "CSafeDumper")  # the Python emitter differs in details (e.g. after "|+")
_RESOLVERS: dict[Any, list[tuple[str, re.Pattern[str]]]] = getattr(
    yaml, "CSafeDumper", yaml.SafeDumper).yaml_implicit_resolvers
_STR_TAG = "tag:yaml.org,2002:str"
_MAX_KEY = 100  # PyYAML writes keys of 128 characters or more (tag included) as complex keys


class _Unsure(Exception):
    """The data holds something this writer does not handle exactly as PyYAML would."""


def dump(data: Any) -> str | None:
    """`data` (a non-empty dict or list) as PyYAML's block-style dump with sort_keys=False,
    allow_unicode=True and no line folding, without the final newline; None when unsure."""
    if not data or type(data) not in (dict, list) or not _LIBYAML:
        return None
    w = _Writer()
    try:
        if type(data) is dict:
            w.mapping(data, 0, "")
        else:
            w.sequence(data, 0, "")
    except _Unsure:
        return None
    if w.open_ended:  # when the last block scalar was "|+", libyaml ends the document with "..."
        w.out.append("...")
    return "\n".join(w.out)


class _Writer:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.seen: set[int] = set()
        self.open_ended = False

    def mapping(self, d: dict[Any, Any], indent: int, lead: str) -> None:
        self.enter(d)
        pad = " " * indent
        for i, (k, v) in enumerate(d.items()):
            head = (lead if i == 0 else pad) + _key(k) + ":"
            kind = type(v)
            if kind is dict and v:
                self.out.append(head)
                self.mapping(v, indent + 2, " " * (indent + 2))
            elif kind is list and v:
                self.out.append(head)
                self.sequence(v, indent, pad)  # PyYAML does not indent a sequence under a key
            else:
                self.leaf(v, indent + 2, head + " ")

    def sequence(self, items: list[Any], indent: int, lead: str) -> None:
        self.enter(items)
        pad = " " * indent
        for i, v in enumerate(items):
            head = (lead if i == 0 else pad) + "- "
            kind = type(v)
            if kind is dict and v:
                self.mapping(v, indent + 2, head)
            elif kind is list and v:
                self.sequence(v, indent + 2, head)
            else:
                self.leaf(v, indent + 2, head)

    def enter(self, container: Any) -> None:
        if id(container) in self.seen:  # PyYAML would write an anchor and an alias
            raise _Unsure
        self.seen.add(id(container))

    def leaf(self, v: Any, block_indent: int, head: str) -> None:
        kind = type(v)
        if kind is str:
            if "\n" in v:
                self.literal(v, block_indent, head)
            else:
                self.out.append(head + _scalar(v))
        elif v is None:
            self.out.append(head + "null")
        elif kind is bool:
            self.out.append(head + ("true" if v else "false"))
        elif kind is int:
            self.out.append(head + str(v))
        elif kind is float:
            self.out.append(head + _float(v))
        elif kind is dict:  # empty
            self.out.append(head + "{}")
        elif kind is list:
            self.out.append(head + "[]")
        else:
            raise _Unsure

    def literal(self, text: str, indent: int, head: str) -> None:
        # As the representer in tools/runtime.py does: trailing spaces go, the text becomes a "|" block.
        text = "\n".join(line.rstrip() for line in text.split("\n"))
        if _SAFE_TEXT.fullmatch(text) is None:
            raise _Unsure
        hints = "2" if text[0] in " \n" else ""  # an indentation indicator when the text starts blank
        self.open_ended = False  # libyaml's flag follows the document's last block scalar
        if not text.endswith("\n"):
            hints += "-"  # strip: no final line break
        else:
            text = text[:-1]  # the final line break ends the last line
            if text == "" or text.endswith("\n"):
                hints += "+"  # keep: more than one final line break
                self.open_ended = True
        self.out.append(head + "|" + hints)
        pad = " " * indent
        self.out.extend(pad + line if line else "" for line in text.split("\n"))


def _scalar(s: str) -> str:
    if not s:
        return "''"
    if _SAFE_LINE.fullmatch(s) is None:
        raise _Unsure
    if _NOT_PLAIN.search(s) is None and _resolves_to_str(s):
        return s
    return "'" + s.replace("'", "''") + "'"


def _key(k: Any) -> str:
    if type(k) is not str or not k or len(k) >= _MAX_KEY or "\n" in k:
        raise _Unsure
    return _scalar(k)


def _resolves_to_str(s: str) -> bool:
    for tag, regexp in _RESOLVERS.get(s[0], []) + _RESOLVERS.get(None, []):
        if regexp.match(s):
            return tag == _STR_TAG
    return True


def _float(v: float) -> str:
    # PyYAML's SafeRepresenter.represent_float
    if v != v:
        return ".nan"
    if v in (float("inf"), float("-inf")):
        return ".inf" if v > 0 else "-.inf"
    text = repr(v).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text
