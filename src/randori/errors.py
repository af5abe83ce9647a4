"""Errors that carry meaning across the package."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in what the user asked for (unknown suite, bad flag). The CLI prints it in one line."""


ERROR_CATEGORIES = ("rate_limit", "timeout", "connection", "server", "context_length", "bad_response", "auth",
                    "internal", "other")


class ModelError(Exception):
    """A provider failure that remained after retries. Recorded per case, never scored."""

    def __init__(self, category: str, message: str):
        super().__init__(message)
        self.category = category if category in ERROR_CATEGORIES else "other"


class AuthError(ModelError):
    """Bad or missing credentials: the run stops at once."""

    def __init__(self, message: str):
        super().__init__("auth", message)
