"""The `ChatModel` interface every provider implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from randori.errors import UserError, register_secret
from randori.tools.function import Tool
from randori.vocabulary import Message

if TYPE_CHECKING:
    from randori.tasks.suite import TaskSuite
    from randori.tasks.task import InjectionTask, UserTask


def check_base_url(url: str, source: str) -> str:
    """`url` if it is an http(s) address with a host; a UserError naming `source` (the option or
    environment variable it came from) otherwise. A password in it is scrubbed from every message."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError as e:
        raise UserError(f"{source} is not a valid URL ({e}): '{url}'") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"{source} must be an http:// or https:// address with a host, e.g. "
                        f"http://localhost:8000/v1, not '{url}'")
    register_secret(parts.password)
    return url


class ModelSettings(BaseModel):
    """Sent to the provider exactly as set (None means: not sent). Part of every case key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    reasoning_effort: str | None = None

    def key_fields(self) -> dict[str, Any]:
        return self.model_dump()


@dataclass
class CaseContext:
    """What the harness knows about a case. Only scripted models look at it (to replay ground truth);
    real models must never see it."""

    suite: TaskSuite[Any]
    env: Any  # the live environment
    user_task: UserTask | None
    injection_task: InjectionTask | None
    injections: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Completion:
    """One provider reply before the resilience layer looks at it. `finish` is normalised:
    "stop" (a final answer), "tool_calls", "length" (cut off by the token limit), "filtered" (a
    provider's safety filter stopped it) or "other"."""

    message: Message
    finish: str = "stop"
    # The response's HTTP headers, where the SDK exposes them: the resilience layer reads the
    # provider's rate-limit state from them.
    headers: Mapping[str, str] | None = None


class ChatModel(ABC):
    provider: str = ""
    # Requests to this provider in flight at once, across all cases of a run (None: no limit).
    max_concurrency: int | None = None
    # In-process models with no network (scripted) skip the resilience layer: no timeouts or retries
    # to apply, and its per-call task would be the largest cost of a scripted case.
    remote: bool = True
    # What get_model was asked for, so a worker process can build the model again: a ModelSpec
    # (models/spec.py, which builds models and so sits above this module).
    spec: Any = None

    def __init__(self, model: str, settings: ModelSettings):
        self.model = model
        self.settings = settings

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"

    def for_case(self, ctx: CaseContext) -> ChatModel:
        """A model instance for one case; real providers are stateless and return themselves."""
        return self

    @classmethod
    def preload(cls) -> None:
        """Import now what making this provider's model or sending its first request would import
        later (an SDK, an HTTP client): a worker process does it while the driver plans, so that
        the first request of a run does not wait for it. Optional; errors are left to the model."""
        return None

    @abstractmethod
    async def complete(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Message:
        """One assistant turn (text and/or tool calls) with `usage` set."""

    async def generate(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Completion:
        """Like `complete`, but also says why the reply ended. Real providers override this (and
        `complete` then returns its message); the resilience layer calls it."""
        return Completion(await self.complete(messages, tools, settings))

    def share_state(self, first: ChatModel) -> None:
        """This instance serves the same model at another address as `first` (a repeated
        --base-url): share whatever a conversation keeps between turns, since its turns may go to
        either server."""
        return None

    async def aclose(self) -> None:
        return None


class ProviderModel(ChatModel):
    """Base of the real providers: they implement `generate`; `complete` returns its message."""

    async def complete(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Message:
        return (await self.generate(messages, tools, settings)).message

    @abstractmethod
    async def generate(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Completion:
        """One reply and why it ended; failures raise `ModelError` (or `AuthError`) with a category."""
