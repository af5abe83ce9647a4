"""Mark injected text inside tool output.

Tool output reaches the model as YAML (multi-line strings as indented literal blocks, one-line
strings often quoted with their quotes doubled) or JSON (escaped), so an injection rarely appears
verbatim. It is matched line by line instead: each line of the injected text, in its plain and
escaped forms, is searched for, and neighbouring matches of one vector are joined into a single
mark when only whitespace, an escape, or another line of the same injection lies between them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from markupsafe import Markup, escape

# Shorter lines ("-", "Thanks") would mark ordinary data that happens to contain them.
MIN_LINE = 6
FRAGMENT = 12
_ESCAPED = re.compile(r"[\"'\\]")


def _needles(text: str) -> list[str]:
    lines = {ln.strip() for ln in text.splitlines()}
    whole = text.strip()
    found = {ln for ln in lines if len(ln) >= MIN_LINE}
    if whole and len(whole) < MIN_LINE:
        found.add(whole)
    escaped = set()
    for ln in found:
        escaped.add(json.dumps(ln, ensure_ascii=False)[1:-1])  # JSON, and YAML double-quoted scalars
        escaped.add(ln.replace("'", "''"))  # YAML single-quoted scalars
        # Any other quoting: the runs between characters that renderers escape still match.
        escaped.update(part for part in _ESCAPED.split(ln) if len(part) >= FRAGMENT)
    return sorted(found | escaped, key=len, reverse=True)


def spans(content: str, injections: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, vector) spans of injected text in `content`, in order."""
    hits: list[tuple[int, int, str]] = []
    for vector, text in injections.items():
        if not text:
            continue
        short = {ln.strip() for ln in text.splitlines() if ln.strip()}
        raw: list[tuple[int, int]] = []
        for needle in _needles(text):
            start = content.find(needle)
            while start != -1:
                raw.append((start, start + len(needle)))
                start = content.find(needle, start + 1)
        raw.sort()
        merged: list[list[int]] = []
        for s, e in raw:
            if merged:
                gap = content[merged[-1][1]:s]
                # Join across whitespace, another line of this injection, or an escape (a quote).
                if s <= merged[-1][1] or not gap.strip() or gap.strip() in short or len(gap) <= 2:
                    merged[-1][1] = max(merged[-1][1], e)
                    continue
            merged.append([s, e])
        hits += [(s, e, vector) for s, e in merged]
    hits.sort()
    out: list[tuple[int, int, str]] = []
    for s, e, v in hits:  # two vectors with the same text: the first mark wins
        if out and s < out[-1][1]:
            continue
        out.append((s, e, v))
    return out


def highlight(content: str, injections: Mapping[str, str]) -> tuple[Markup, set[str]]:
    """`content` as safe HTML with injected text in <mark>, and the vectors that were marked."""
    parts: list[str] = []
    pos = 0
    marked: set[str] = set()
    for s, e, vector in spans(content, injections):
        parts.append(escape(content[pos:s]))
        parts.append(Markup('<mark class="inj" data-vector="{0}" title="injected text (vector {0})">{1}</mark>')
                     .format(vector, content[s:e]))
        marked.add(vector)
        pos = e
    parts.append(escape(content[pos:]))
    return Markup("").join(parts), marked
