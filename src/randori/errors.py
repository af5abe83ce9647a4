"""Errors that carry meaning across the package."""

from __future__ import annotations

import os
import re


class UserError(Exception):
    """A mistake in what the user asked for (unknown suite, bad flag). The CLI prints it in one line."""


ERROR_CATEGORIES = ("rate_limit", "timeout", "connection", "server", "context_length", "bad_request",
                    "bad_response", "auth", "not_found", "internal", "other")

# Environment variables whose values are secrets: never let them into a message we store or print.
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)


def scrub_secrets(text: str) -> str:
    """`text` with the value of every secret-looking environment variable replaced by ***.

    Provider errors sometimes echo what was sent (an Authorization header, a key in a URL); error
    messages end up in the store and on the terminal, so they pass through here first."""
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_NAME.search(name) and value in text:
            text = text.replace(value, "***")
    return text


class ModelError(Exception):
    """A provider failure that remained after retries. Recorded per case, never scored.

    `retry_after` is the delay in seconds the provider asked for (Retry-After), if any."""

    def __init__(self, category: str, message: str, *, retry_after: float | None = None):
        super().__init__(scrub_secrets(message))
        self.category = category if category in ERROR_CATEGORIES else "other"
        self.retry_after = retry_after


class FatalModelError(ModelError):
    """A failure every further case would meet too (bad credentials, an unknown model or endpoint):
    the run stops at once instead of filling the store with identical error cases."""


class AuthError(FatalModelError):
    """Bad or missing credentials."""

    def __init__(self, message: str):
        super().__init__("auth", message)
