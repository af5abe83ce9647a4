"""Errors that carry meaning across the package, and the scrubbing of secrets from any text that
leaves the process (the store, the terminal, a report)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from randori.agents.messages import Usage


class UserError(Exception):
    """A mistake in what the user asked for (unknown suite, bad flag). The CLI prints it in one line."""


class StoreError(UserError):
    """A results store that cannot be used as asked (not a store, damaged, read-only...): one line
    naming the file and the problem."""


ERROR_CATEGORIES = ("rate_limit", "timeout", "connection", "server", "context_length", "bad_request",
                    "bad_response", "auth", "not_found", "internal", "other",
                    # an external agent (a Python callable or an MCP client process) that failed or ran out of time
                    "agent_crash", "agent_timeout")

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


def _fragmentable(value: str) -> bool:
    # Paths and phrases are not keys: masking every 6 characters of "/home/ana/..." would garble paths,
    # and an escape character would make a fragment unsafe to cut out of JSON text.
    return len(value) >= FRAGMENT and not any(c in value for c in '/\\" \t\n\r')


def scrub_secrets(text: str, secrets: list[str] | None = None, *, fragments: bool = True) -> str:
    """`text` with every secret value masked (***), and (`fragments`) every run of FRAGMENT or more
    of its characters too: some servers quote the credentials they were sent, or a part of them.
    Looking for fragments costs a search per FRAGMENT-long piece of each key; the store skips it for
    traces, which hold no text that was cut (error messages, where cuts happen, get the full search)."""
    if not text:
        return text
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, MASK)
        if fragments and _fragmentable(value):
            text = _mask_fragments(text, value)
    return text


def _mask_fragments(text: str, value: str) -> str:
    spans: list[tuple[int, int]] = []
    for i in range(len(value) - FRAGMENT + 1):
        gram = value[i:i + FRAGMENT]
        at = text.find(gram)
        while at != -1:
            spans.append((at, at + FRAGMENT))
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
    """An external agent that crashed or ran past its time limit (`agent_crash`, `agent_timeout`).
    Like a provider failure it is recorded per case, never scored, and retried by the next run."""


class AuthError(FatalModelError):
    """Bad or missing credentials."""

    def __init__(self, message: str):
        super().__init__("auth", message)
