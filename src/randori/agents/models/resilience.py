"""Timeouts, retries, per-provider concurrency limits and recovery from bad replies, written once
for every provider: `get_model` wraps each model in a `ResilientModel`. Providers turn their SDK's
failures into `ModelError` with a category (and any Retry-After) and switch their SDK's own retries
off, so the attempt counts here are exact."""

from __future__ import annotations

import asyncio
import email.utils
import errno
import random
import socket
import ssl
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from randori.agents.models.base import CaseContext, ChatModel, Completion, ModelSettings
from randori.agents.models.limits import SLOW_START, Window, rate_limits, server_window
from randori.errors import AuthError, FatalModelError, ModelError, clip
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, Usage

# Failures worth another attempt; the rest (a bad request, a context overflow) would fail again.
RETRYABLE = frozenset({"rate_limit", "timeout", "connection", "server"})

EMPTY_NUDGE = ("Your last reply was empty. Continue with the task: call one of the tools, or give "
               "your final answer.")
CUT_OFF_NUDGE = ("Your last reply was cut off by the output token limit. Continue exactly where it "
                 "stopped, and be brief.")


@dataclass(frozen=True)
class RetryPolicy:
    """timeout: seconds for one request (None: no limit); max_retries: further attempts after the
    first on a retryable failure; base_delay/max_delay: exponential backoff bounds in seconds;
    max_retry_after: the longest Retry-After we obey; nudges: how often an empty or cut-off reply is
    answered with a request to continue before it is accepted as the model's answer."""

    timeout: float | None = 120.0
    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_retry_after: float = 300.0
    nudges: int = 1

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Wait before retry number `attempt` (0-based): exponential backoff with jitter, and never
        less than what the provider asked for."""
        backoff = min(self.max_delay, self.base_delay * 2 ** attempt)
        # Equal jitter: concurrent cases that failed together spread out, yet each waits at least half.
        wait = backoff / 2 + random.uniform(0, backoff / 2)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after))
        return wait


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_error(name: str, status: int, text: str, retry_after: float | None = None,
                 headers: Mapping[str, str] | None = None) -> ModelError:
    """Category of an HTTP error status, shared by the providers that speak HTTP; the response's
    `headers` stay on the error (the rate-limit state of a 429)."""
    err = _status_error(name, status, text, retry_after)
    err.headers = headers
    err.overloaded = status in (503, 529)
    return err


def _status_error(name: str, status: int, text: str, retry_after: float | None) -> ModelError:
    if status in (401, 403):
        return AuthError(f"{name}: authentication failed (HTTP {status}); check the API key")
    if status == 404:  # a wrong model name or base URL: every case would fail the same way
        return FatalModelError("not_found", f"{name}: not found (HTTP 404): {clip(text, 200)}; check the model "
                               "name and --base-url")
    low = text.lower()
    if status == 429:
        return ModelError("rate_limit", f"{name}: rate limited (HTTP 429)", retry_after=retry_after)
    if status == 408:
        return ModelError("timeout", f"{name}: the server timed out (HTTP 408)", retry_after=retry_after)
    if status >= 500 or status == 409:
        return ModelError("server", f"{name}: server error (HTTP {status})", retry_after=retry_after)
    if status in (400, 413, 422) and ("context" in low or "too long" in low or "too many tokens" in low
                                      or ("maximum" in low and "token" in low)):
        return ModelError("context_length", f"{name}: the conversation exceeds the context window "
                          f"({clip(text, 200)})")
    return ModelError("bad_request", f"{name}: request rejected (HTTP {status}): {clip(text, 300)}")


def transport_error(name: str, e: BaseException) -> ModelError:
    """Category of a failure below HTTP (httpx, aiohttp...), judged by the exception's class names so
    that no HTTP library has to be imported here."""
    kinds = " ".join(c.__name__ for c in type(e).__mro__)
    cause = connection_problem(e)
    if "Timeout" in kinds and cause is None:
        return ModelError("timeout", f"{name}: request timed out")
    if cause is not None or any(k in kinds for k in (
            "Connect", "Network", "Transport", "RemoteProtocol", "ReadError", "ServerDisconnected",
            "ClientOSError", "ConnectionError")):
        return connection_error(name, e)
    if isinstance(e, ValueError):  # a body that is not JSON, a reply of an unexpected shape
        return ModelError("bad_response", f"{name}: unreadable reply ({clip(str(e), 200)})")
    return ModelError("other", f"{name}: {type(e).__name__}: {clip(str(e), 200)}")


def _chain(e: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException | None] = [e]
    while todo:
        cur = todo.pop(0)
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        yield cur
        todo += [cur.__cause__, cur.__context__, getattr(cur, "os_error", None)]


def connection_problem(e: BaseException) -> tuple[str, bool] | None:
    """What the operating system said when a connection failed, in words (the SDKs wrap it in their
    own exceptions, several layers deep, and some report a refused connection as a timeout), and
    whether it means no server could be reached at all (refused, unknown host, no route, TLS)."""
    for cur in _chain(e):
        code = getattr(cur, "errno", None)
        if isinstance(cur, ConnectionRefusedError) or code == errno.ECONNREFUSED:
            return "connection refused: nothing is listening at that address", True
        if isinstance(cur, socket.gaierror):
            return "host name not found", True
        if code in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return "network unreachable", True
        if isinstance(cur, ssl.SSLError):
            return f"TLS failed ({getattr(cur, 'reason', None) or cur})", True
        if isinstance(cur, ConnectionResetError) or code == errno.ECONNRESET:
            return "connection reset by the server", False
        if type(cur).__name__ in ("ServerDisconnectedError", "RemoteProtocolError"):
            return "the server closed the connection", False
    return None


def connection_error(name: str, e: BaseException) -> ModelError:
    problem = connection_problem(e)
    err = ModelError("connection", f"{name}: connection failed ({problem[0] if problem else type(e).__name__})")
    err.unreachable = bool(problem and problem[1])
    return err


_timeout = getattr(asyncio, "timeout", None)

# A run stops when its requests cannot reach the server: as soon as one has failed for good (all its
# retries spent) because no server could be reached while none was ever answered, or once this many
# in a row have failed for good at the connection after earlier answers (the server went away).
GONE_AFTER = 10


def _explain_cut(call: ToolCall) -> ToolCall:
    if not call.parse_error:
        return call
    return call.model_copy(update={"parse_error": f"{call.parse_error}; the reply was cut off by the output "
                                                  "token limit, send shorter arguments"})


# A server that failed (no connection, a timeout, a server error) while others can take its
# requests is taken out for OUT_BASE retry delays (2 s by default), doubling with each failure in a
# row up to OUT_MAX seconds, then tried again.
OUT_BASE = 2.0
OUT_MAX = 60.0
# Failures that say something about one server, not about the request or the provider's limits.
SERVER_FAULTS = frozenset({"connection", "timeout", "server"})


@dataclass
class Server:
    """One address serving the model (several with a repeated --base-url)."""

    model: ChatModel
    url: str
    out_until: float = 0.0
    failures: int = 0
    answered: int = 0


def _url(model: ChatModel) -> str:
    return str(getattr(model, "base_url", None) or "default")


class ResilientModel(ChatModel):
    """Wraps a provider: each request gets a timeout, a place in its server's window of requests in
    flight (adaptive under the `concurrency` ceiling, or fixed with `adaptive=False`), pacing by the
    provider's rate-limit headers, and retries with backoff; an empty or cut-off reply gets a nudge,
    and the trace says so. With `others` (the same model at more addresses) each request goes to
    the least loaded server that is in service."""

    def __init__(self, inner: ChatModel, policy: RetryPolicy | None = None, concurrency: int | None = None,
                 *, others: Sequence[ChatModel] = (), adaptive: bool = True):
        super().__init__(inner.model, inner.settings)
        self.inner = inner
        self.provider = inner.provider
        self.policy = policy or RetryPolicy()
        self.concurrency = concurrency if concurrency is not None else inner.max_concurrency
        self.adaptive = adaptive
        self.servers = [Server(m, _url(m)) for m in (inner, *others)]
        self.health = _Health()
        self.token_ratio = 0.25  # input tokens per character sent, learned from replies
        self._tool_chars: dict[tuple[str, ...], int] = {}
        self._windows: dict[str, Window] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    def __getattr__(self, attr: str) -> Any:
        # Provider-specific attributes (base_url, client...) stay reachable through the wrapper.
        if attr in ("inner", "servers"):
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    @property
    def where(self) -> str:
        urls = [s.url for s in self.servers if s.url != "default"]
        return ", ".join(urls) if urls else "the provider's default address"

    def for_case(self, ctx: CaseContext) -> ChatModel:
        inner = self.inner.for_case(ctx)
        if inner is self.inner:
            return self
        model = ResilientModel(inner, self.policy, self.concurrency, adaptive=self.adaptive)
        model.health = self.health  # one server: its reachability is judged across all cases
        return model

    async def aclose(self) -> None:
        for s in self.servers:
            await s.model.aclose()

    def status(self) -> str:
        """The progress line's view: window of requests in flight against the ceiling, rate limits
        met, whether rate-limit headers pace requests, servers in service."""
        windows = list(self._windows.values())
        if not windows:
            return ""
        limit = sum(w.limit for w in windows)
        ceiling = sum(w.ceiling for w in windows)
        text = f"concurrency {limit}/{ceiling}" if self.adaptive else f"concurrency {ceiling} (fixed)"
        hits = sum(w.rate_limited for w in windows)
        if hits:
            text += f", {hits} rate-limited"
        if any(w.paced() for w in windows):
            text += ", paced"
        if len(self.servers) > 1:
            now = time.monotonic()
            up = sum(1 for s in self.servers if s.out_until <= now)
            text += f", {up}/{len(self.servers)} servers up"
        return text

    async def complete(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Message:
        return (await self.generate(messages, tools, settings)).message

    async def generate(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Completion:
        comp = await self._attempts(messages, tools, settings)
        msg, usage, notes = comp.message, comp.message.usage or Usage(), list(comp.message.annotations)
        history, prefix, nudged = list(messages), "", 0
        while True:
            if comp.finish == "length" and msg.tool_calls:
                # Truncated arguments fail to parse; the tool error tells the model why, so it can retry.
                notes.append("reply cut off by the output token limit")
                msg = msg.model_copy(update={"tool_calls": [_explain_cut(c) for c in msg.tool_calls]})
                break
            if comp.finish == "length":
                problem, extra = "cut off by the output token limit", [Message.assistant(msg.content),
                                                                       Message.user(CUT_OFF_NUDGE)]
            elif not msg.tool_calls and not msg.content.strip():
                filtered = " (the provider's content filter stopped it)" if comp.finish == "filtered" else ""
                problem, extra = f"empty{filtered}", [Message.user(EMPTY_NUDGE)]
            else:
                break
            if nudged >= self.policy.nudges:
                notes.append(f"reply {problem}; accepted as the answer after {nudged} nudge(s)")
                break
            nudged += 1
            notes.append(f"reply {problem}; the model was asked to continue")
            prefix += msg.content
            history += extra
            try:
                comp = await self._attempts(history, tools, settings)
            except ModelError as e:  # the replies already received were paid for: the case keeps them
                e.usage = usage + (e.usage or Usage())
                raise
            msg = comp.message
            usage = usage + (msg.usage or Usage())
            notes += msg.annotations
        out = msg.model_copy(update={"content": prefix + msg.content, "usage": usage, "annotations": notes})
        return Completion(out, comp.finish, comp.headers)

    async def _attempts(self, messages: list[Message], tools: list[Tool],
                        settings: ModelSettings | None) -> Completion:
        attempt = 0
        while True:
            try:
                comp = await self._once(messages, tools, settings)
                self.health.answered()
                return comp
            except FatalModelError:
                raise
            except ModelError as e:
                if e.category not in RETRYABLE or attempt >= self.policy.max_retries:
                    final = e
                    if attempt:
                        final = ModelError(e.category, f"{e} (gave up after {attempt + 1} attempts)")
                        final.unreachable = e.unreachable
                    self.health.failed(self, final)
                    if final is e:
                        raise
                    raise final from e
                if self._elsewhere(e):
                    delay = 0.0  # another server takes the retry at once
                else:
                    delay = self.policy.delay(attempt, e.retry_after)
            attempt += 1
            await asyncio.sleep(delay)

    def _elsewhere(self, e: ModelError) -> bool:
        """Whether a retry can go to another server now (the one that failed has been taken out)."""
        now = time.monotonic()
        return (len(self.servers) > 1 and e.category in SERVER_FAULTS and not e.overloaded
                and any(s.out_until <= now for s in self.servers))

    def _window(self, server: Server) -> Window | None:
        if not self.concurrency:
            return None
        window = self._windows.get(server.url)
        if window is None:
            # An adaptive window starts at the provider's own default concurrency (SLOW_START if it has none).
            start = self.inner.max_concurrency or SLOW_START
            window = self._windows[server.url] = server_window(self.provider, server.url, self.concurrency,
                                                               self.adaptive, start)
        return window

    async def _pick(self) -> Server:
        """The least loaded server in service (waiting for the first to come back if none is)."""
        if len(self.servers) == 1:
            return self.servers[0]
        while True:
            now = time.monotonic()
            up = [s for s in self.servers if s.out_until <= now]
            if up:
                return min(up, key=lambda s: (w.load() if (w := self._window(s)) else 0.0, s.failures))
            await asyncio.sleep(min(s.out_until for s in self.servers) - now)

    def _chars(self, messages: list[Message], tools: list[Tool]) -> int:
        names = tuple(t.name for t in tools)
        if names not in self._tool_chars:
            self._tool_chars[names] = sum(len(t.name) + len(t.description) + len(str(t.parameters)) for t in tools)
        return self._tool_chars[names] + sum(len(m.content) + 16 + sum(len(str(c.args)) for c in m.tool_calls)
                                             for m in messages)

    async def _once(self, messages: list[Message], tools: list[Tool],
                    settings: ModelSettings | None) -> Completion:
        server = await self._pick()
        window = self._window(server)
        paced = window is not None and self.adaptive
        chars = self._chars(messages, tools) if paced else 0
        grant = await window.enter(self.model if paced else None, chars * self.token_ratio) if window else None
        outcome, retry_after, limits = "failed", None, None
        try:
            try:
                comp = await self._timed(server.model, messages, tools, settings)
            except ModelError as e:
                if e.category == "rate_limit" or e.overloaded:
                    outcome, retry_after = "congested", e.retry_after
                elif e.category in SERVER_FAULTS:
                    self._take_out(server)
                if e.headers:
                    limits = rate_limits(e.headers)
                raise
            outcome = "ok"
            server.failures, server.answered = 0, server.answered + 1
            if paced:
                limits = rate_limits(comp.headers)
                used = comp.message.usage.input_tokens if comp.message.usage else 0
                if used and chars:
                    self.token_ratio = 0.8 * self.token_ratio + 0.2 * used / chars
            return comp
        finally:
            if window is not None and grant is not None:
                window.leave(grant, outcome, retry_after, limits)

    async def _timed(self, model: ChatModel, messages: list[Message], tools: list[Tool],
                     settings: ModelSettings | None) -> Completion:
        try:
            if _timeout is not None:  # no task per call, as wait_for makes (Python 3.11 on)
                async with _timeout(self.policy.timeout):
                    return await model.generate(messages, tools, settings)
            return await asyncio.wait_for(model.generate(messages, tools, settings), self.policy.timeout)
        except asyncio.TimeoutError as e:
            limit = f" within {self.policy.timeout:g}s" if self.policy.timeout else ""
            raise ModelError("timeout", f"{self.name}: no reply{limit}") from e

    def _take_out(self, server: Server) -> None:
        now = time.monotonic()
        if len(self.servers) == 1 or server.out_until > now:  # already out: requests sent before it was
            return
        server.failures += 1
        base = OUT_BASE * self.policy.base_delay
        server.out_until = now + min(OUT_MAX, base * 2 ** (server.failures - 1))


class _Health:
    """Whether the model's server can be reached at all: a run against a closed port or a dead
    server stops with a diagnosis instead of storing every case as a connection error."""

    def __init__(self) -> None:
        self.answers = 0
        self.failures_in_row = 0

    def answered(self) -> None:
        self.answers += 1
        self.failures_in_row = 0

    def failed(self, model: ResilientModel, e: ModelError) -> None:
        if e.category != "connection":
            self.failures_in_row = 0
            return
        self.failures_in_row += 1
        where = model.where
        if self.answers == 0 and e.unreachable:
            raise FatalModelError("connection", f"cannot reach {where}, no request has been answered: {e}; is the "
                                  "server running there, and is --base-url right?")
        if self.answers and self.failures_in_row >= GONE_AFTER:
            raise FatalModelError("connection", f"the server at {where} stopped answering: {self.failures_in_row} "
                                  f"requests in a row failed after {self.answers} answered ({e})")
