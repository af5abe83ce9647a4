"""Errors that carry meaning across the package, and the scrubbing of secrets from any text that
leaves the process (the store, the terminal, a report)."""

from __future__ import annotations

import functools
import json
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from randori.vocabulary import Usage


class UserError(Exception):
    """A mistake in what the user asked for (unknown suite, bad flag). The CLI prints it in one line."""


class StoreError(UserError):
    """A results store that cannot be used as asked (not a store, damaged, read-only...): one line
    naming the file and the problem."""


ERROR_CATEGORIES = ("rate_limit", "timeout", "connection", "server", "context_length", "bad_request",
                    "bad_response", "auth", "not_found", "internal", "other",
                    # an external agent (a Python callable or an MCP client process) that failed, ran out of
                    # time, or finished without an answer
                    "agent_crash", "agent_timeout", "agent_no_answer")

# Environment variables whose values are secrets: never let them into a message we store or print.
_SECRET_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|PRIVATE_?KEY|ACCESS_?KEY|AUTH_?KEY",
                          re.IGNORECASE)
# Values of such variables that are settings, not secrets (TOKENIZERS_PARALLELISM=false).
_NOT_SECRET = frozenset({"true", "false", "yes", "no", "none", "null", "on", "off"})
MIN_SECRET = 4  # shorter values would mask ordinary words everywhere, and cannot be guessed back anyway
FRAGMENT = 6  # no run of this many characters of a key may survive
MASK = "***"

_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Scrub `value` too from now on: a key a provider was given directly, a password in a URL."""
    if value and _worth_scrubbing(value):
        _registered.add(value)


def _worth_scrubbing(value: str) -> bool:
    return len(value) >= MIN_SECRET and value.strip().lower() not in _NOT_SECRET


def secret_values() -> list[str]:
    """Every secret value known now, longest first (so a key is masked before a shorter one inside it)."""
    found = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and _worth_scrubbing(v)}
    return sorted(found | _registered, key=len, reverse=True)


# A provider's public prefix ("sk-", "sk-ant-api03-", "gsk_"): the same in every key of that provider,
# so it says nothing about which key a text holds. Up to three short lower-case segments.
_PUBLIC_PREFIX = re.compile(r"(?:[a-z][a-z0-9]{0,7}[-_]){1,3}")
# Where a server or a length limit cut a key it showed ("sk-abc12****", "sk-abc12...", a text's end).
_CUT = frozenset("*.\u2026")
# A token that may name a file (the user's prices.toml, a store's folder): such a value is the
# user's own, and a piece of a key inside it is a coincidence, never a leak.
_DELIMITERS = frozenset(" \t\r\n\"'<>,;()[]{}")


def secret_part(value: str) -> str:
    """`value` without its provider's public prefix, where the rest is still long enough to be a key."""
    m = _PUBLIC_PREFIX.match(value)
    return value[m.end():] if m and len(value) - m.end() >= FRAGMENT else value


@functools.lru_cache(maxsize=256)
def _fragmentable(value: str) -> bool:
    """Whether pieces of `value` are masked, not only the whole of it. A key may hold any character
    ("/" and "+" in base64 ones). A path is not a key: masking every 6 characters of "/home/ana/..."
    would garble every path shown; nor is a short phrase. And a secret part with few distinct
    characters ("test-0000000000") shares its pieces with ordinary text ("pytest-0"): only the whole
    of such a key can be told from text that happens to contain a piece of it."""
    if len(value) < FRAGMENT or _looks_like_path(value):
        return False
    if len(value) < 16 and any(c.isspace() for c in value):
        return False
    secret = secret_part(value)
    return len(secret) >= FRAGMENT and len(set(secret)) >= min(10, len(secret) / 2)


def _looks_like_path(value: str) -> bool:
    if value.startswith(("./", "../", "~/")):
        return True
    path = os.path.expanduser(value)
    return os.path.isabs(path) and os.path.exists(path)


def _distinctive(piece: str) -> bool:
    """A piece of a key that ordinary text does not hold by chance: four or more distinct characters,
    and not a number or a word (digits only; letters of one case only, unless 8 or more of them)."""
    if len(set(piece)) < 4 or piece.isdigit():
        return False
    return len(piece) >= 8 or not (piece.isalpha() and (piece.islower() or piece.isupper()))


def scrub_secrets(text: str, secrets: list[str] | None = None, *, fragments: bool = True) -> str:
    """`text` with every secret value masked (***), and (`fragments`) every piece of FRAGMENT or more
    characters of its secret part too, where the piece can be that key: some servers quote the
    credentials they were sent, or a part of them, and a length limit may cut a key in two. A piece
    is masked when it is distinctive (`_distinctive`), the text around it does not contradict the key
    (a letter or digit beside it that the key does not have there: "pytest-0" is not "sk-ant-test-0"),
    and it is not inside a path that exists (a value the user gave). Looking for pieces costs a search
    per FRAGMENT-long piece of each key; the store skips it for traces, which hold no text that was cut
    (error messages, where cuts happen, get the full search)."""
    if not text:
        return text
    for value in secret_values() if secrets is None else secrets:
        for form in {value, json.dumps(value, ensure_ascii=False)[1:-1]}:  # as is, and inside JSON text
            if form in text:
                text = text.replace(form, MASK)
        if fragments and _fragmentable(value):
            text = _mask_fragments(text, value)
    return text


def _mask_fragments(text: str, value: str) -> str:
    spans: list[tuple[int, int]] = []
    start = len(value) - len(secret_part(value))
    for i in range(start, len(value) - FRAGMENT + 1):
        gram = value[i:i + FRAGMENT]
        if "\\" in gram or '"' in gram:
            continue  # in JSON text these stand escaped: the pieces around them are masked instead
        at = text.find(gram)
        while at != -1:
            span = _as_key(text, at, value, i, start)
            if span is not None:
                spans.append(span)
            at = text.find(gram, at + 1)
    if not spans:
        return text
    spans.sort()
    out, pos = [], 0
    first, end = spans[0]
    for s, e in spans[1:] + [(len(text) + 1, len(text) + 1)]:
        if s <= end:
            end = max(end, e)
            continue
        out += [text[pos:first], MASK]
        pos, (first, end) = end, (s, e)
    out.append(text[pos:])
    return "".join(out)


def _as_key(text: str, at: int, value: str, i: int, start: int) -> tuple[int, int] | None:
    """The span of `text` to mask for the piece of `value` found at `at` (`value[i:]` starts there),
    grown as far as text and key agree; None where it cannot be that key."""
    ts, ks = at, i
    while ts > 0 and ks > 0 and text[ts - 1] == value[ks - 1]:
        ts, ks = ts - 1, ks - 1
    te, ke = at + FRAGMENT, i + FRAGMENT
    while te < len(text) and ke < len(value) and text[te] == value[ke]:
        te, ke = te + 1, ke + 1
    if not _distinctive(value[max(ks, start):ke]):
        return None
    key_chars = set(value[start:])

    def contradicts(c: str) -> bool:  # a character the key's secret could continue with, but does not
        return (c.isalnum() or c in key_chars) and c not in _CUT

    if (ks > 0 and ts > 0 and contradicts(text[ts - 1])) or (
            ke < len(value) and te < len(text) and contradicts(text[te])):
        return None
    if _in_existing_path(text, ts, te):
        return None
    return _escape_start(text, ts), te


def _in_existing_path(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` lies in a path that exists: in the word holding it (between spaces,
    quotes, brackets), the part up to the end of the path component where the piece ends names a
    file or folder (a folder the user named, a file to be written in it)."""
    while start > 0 and text[start - 1] not in _DELIMITERS:
        start -= 1
    slash = text.find("/", end)
    stop = end
    while stop < len(text) and text[stop] not in _DELIMITERS:
        stop += 1
    path = text[start:slash if 0 <= slash < stop else stop].rstrip(".:")
    return "/" in path and _looks_like_path(path)


def _escape_start(text: str, at: int) -> int:
    """`at`, or `at - 1` when text[at] is the letter of a JSON escape (\\n, \\t...): a mask must not
    leave a lone backslash in front of it."""
    slashes = 0
    while at - slashes > 0 and text[at - slashes - 1] == "\\":
        slashes += 1
    return at - 1 if slashes % 2 else at


def clip(text: str, limit: int) -> str:
    """`text` scrubbed of secrets, THEN shortened to `limit` characters. In that order: a key cut in
    two by the limit is no longer recognisable as the key, and its first part would leak."""
    text = scrub_secrets(text)
    return text if len(text) <= limit else text[:max(0, limit - 3)] + "..."


class ModelError(Exception):
    """A provider failure that remained after retries. Recorded per case, never scored.

    `retry_after` is the delay in seconds the provider asked for (Retry-After), if any. `usage` is
    what the failed turn had already spent (a reply before a failed follow-up request), so that a
    case's cost keeps it."""

    def __init__(self, category: str, message: str, *, retry_after: float | None = None):
        super().__init__(scrub_secrets(message))
        self.category = category if category in ERROR_CATEGORIES else "other"
        self.retry_after = retry_after
        self.usage: Usage | None = None
        self.unreachable = False  # a connection failure meaning no server could be reached at all
        self.overloaded = False  # the server said it is overloaded (HTTP 503, 529): a signal to send less
        self.headers: Any = None  # the failed response's headers, when there was one (rate-limit state)


class FatalModelError(ModelError):
    """A failure every further case would meet too (bad credentials, an unknown model or endpoint,
    a server nobody answers at): the run stops at once instead of filling the store with identical
    error cases."""


class AgentFailure(ModelError):
    """An external agent that crashed, ran past its time limit or gave no answer (`agent_crash`,
    `agent_timeout`, `agent_no_answer`).
    Like a provider failure it is recorded per case, never scored, and retried by the next run."""


class AuthError(FatalModelError):
    """Bad or missing credentials."""

    def __init__(self, message: str):
        super().__init__("auth", message)


def install_hint(extra: str) -> str:
    """The command that installs randori's `extra` for how this randori was installed: from a
    checkout (an editable install) `pip install 'randori[x]'` would fetch another copy from PyPI,
    so there it is `pip install -e '<checkout>[x]'`."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]  # src/randori/errors.py -> the checkout
    if not ((root / "pyproject.toml").is_file() and (root / "src" / "randori").is_dir()):
        return f"pip install 'randori[{extra}]'"
    try:
        where = "." if root == Path.cwd().resolve() else os.path.relpath(root)
    except ValueError:  # another drive (Windows)
        where = str(root)
    if where.startswith("../../..") or " " in where:
        where = str(root)
    return f"pip install -e '{where}[{extra}]'"
