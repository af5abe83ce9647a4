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


@functools.lru_cache(maxsize=256)
def _fragmentable(value: str) -> bool:
    # A key may hold any character ("/" and "+" in base64 ones). A path is not a key: masking every 6
    # characters of "/home/ana/..." would garble every path shown; nor is a short phrase.
    if len(value) < FRAGMENT or _looks_like_path(value):
        return False
    return len(value) >= 16 or not any(c.isspace() for c in value)


def _looks_like_path(value: str) -> bool:
    if value.startswith(("./", "../", "~/")):
        return True
    path = os.path.expanduser(value)
    return os.path.isabs(path) and os.path.exists(path)


def scrub_secrets(text: str, secrets: list[str] | None = None, *, fragments: bool = True) -> str:
    """`text` with every secret value masked (***), and (`fragments`) every run of FRAGMENT or more
    of its characters too: some servers quote the credentials they were sent, or a part of them.
    Looking for fragments costs a search per FRAGMENT-long piece of each key; the store skips it for
    traces, which hold no text that was cut (error messages, where cuts happen, get the full search)."""
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
    for i in range(len(value) - FRAGMENT + 1):
        gram = value[i:i + FRAGMENT]
        if "\\" in gram or '"' in gram:
            continue  # in JSON text these stand escaped: the pieces around them are masked instead
        at = text.find(gram)
        while at != -1:
            spans.append((_escape_start(text, at), at + FRAGMENT))
            at = text.find(gram, at + 1)
    if not spans:
        return text
    spans.sort()
    out, pos = [], 0
    start, end = spans[0]
    for s, e in spans[1:] + [(len(text) + 1, len(text) + 1)]:
        if s <= end:
            end = max(end, e)
            continue
        out += [text[pos:start], MASK]
        pos, (start, end) = end, (s, e)
    out.append(text[pos:])
    return "".join(out)


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
