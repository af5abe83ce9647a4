"""How many requests one server gets at once, and when: adaptive concurrency (AIMD) under a ceiling,
pacing by the rate-limit headers a provider sends, and a pause when it asks for one (Retry-After).

The window of requests in flight starts at the provider's own default concurrency (what randori
sends a server of that kind at once when told nothing: 16 for OpenAI, 8 for Anthropic and Google,
2 for Ollama, 32 for vLLM; 4 where the provider names none), or the ceiling if that is lower. It
doubles per round of successes until the first rate limit or overload (slow start), then grows by
one per window of successes and halves on each rate limit or overload (at most once per round: the
requests already in flight when it was cut were sent under the old window). Where a provider sends
its limits (OpenAI-style
`x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, Anthropic's
`anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`), each
dimension is paced as a token bucket: its size is the limit, its refill rate follows from how far
below the limit it is and how long until it is full again, and a request waits until the bucket
holds its cost (1 request; its estimated input tokens). So a run stays just under the limit
instead of running into it."""

from __future__ import annotations

import asyncio
import math
import re
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

# Dimensions paced before a request is sent, and what a request costs in each ("tokens": its input).
PACED = {"requests": "requests", "tokens": "tokens", "input-tokens": "tokens"}
# Anthropic's names; OpenAI's are x-ratelimit-{limit,remaining,reset}-{dimension}.
_ANTHROPIC = re.compile(r"anthropic-ratelimit-(requests|tokens|input-tokens|output-tokens)-(limit|remaining|reset)$")
_OPENAI = re.compile(r"x-ratelimit-(limit|remaining|reset)-(requests|tokens)$")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
SLOW_START = 4  # the first window of a server whose provider names no default concurrency
# Token counts are estimated from the characters sent (the ratio learned from replies), and a
# request's content varies: paced token costs are raised by this share, and a bucket keeps this
# share of its size in reserve, so that an estimate a little short does not run into a 429.
TOKEN_MARGIN = 0.03
RESERVE = 0.01


def parse_duration(text: str) -> float | None:
    """Seconds in an OpenAI-style reset ("1s", "6m0s", "20ms", "1h2m3.5s") or a bare number."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def parse_reset(text: str, now: float) -> float | None:
    """Seconds until a reset given as a duration or as an RFC 3339 time (Anthropic)."""
    seconds = parse_duration(text)
    if seconds is not None:
        return seconds
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, when.timestamp() - now)


@dataclass(frozen=True)
class Limit:
    limit: float
    remaining: float
    reset_s: float | None


def rate_limits(headers: Mapping[str, str] | None, now: float | None = None) -> dict[str, Limit]:
    """The rate-limit state a response's headers report, per dimension (requests, tokens,
    input-tokens, output-tokens); only dimensions with a limit and a remaining count."""
    if not headers:
        return {}
    now = time.time() if now is None else now
    raw: dict[str, dict[str, str]] = {}
    for name, value in headers.items():
        low = name.lower()
        m = _ANTHROPIC.match(low)
        if m:
            raw.setdefault(m.group(1), {})[m.group(2)] = value
            continue
        m = _OPENAI.match(low)
        if m:
            raw.setdefault(m.group(2), {})[m.group(1)] = value
    out = {}
    for dim, fields_ in raw.items():
        try:
            limit, remaining = float(fields_["limit"]), float(fields_["remaining"])
        except (KeyError, ValueError):
            continue
        reset = parse_reset(fields_["reset"], now) if "reset" in fields_ else None
        if limit > 0 and remaining >= 0:
            out[dim] = Limit(limit, min(remaining, limit), reset)
    return out


def header_summary(headers: Mapping[str, str] | None) -> list[str]:
    """One short line per rate-limit dimension a response reported (for `randori models check`)."""
    lines = []
    for dim, lim in sorted(rate_limits(headers).items()):
        reset = f", full again in {lim.reset_s:g}s" if lim.reset_s is not None else ""
        lines.append(f"{dim}: {lim.remaining:,.0f} of {lim.limit:,.0f} left{reset}")
    return lines


@dataclass
class Bucket:
    """One dimension's limit as the client sees it: `level` of `size` left, refilled at `rate` per second."""

    size: float
    level: float
    rate: float | None  # None until a response said how fast it refills
    stamp: float = field(default_factory=time.monotonic)
    empty_until: float = 0.0  # a response said nothing is left until then

    def refill(self, now: float) -> None:
        if self.rate:
            self.level = min(self.size, self.level + self.rate * (now - self.stamp))
        self.stamp = now

    def wait_for(self, cost: float, now: float) -> float:
        """Seconds until `cost` fits (0: now). A cost above the whole bucket waits for a full one."""
        self.refill(now)
        cost = min(cost + RESERVE * self.size, self.size)
        if now < self.empty_until:
            return self.empty_until - now
        if self.level >= cost:
            return 0.0
        if not self.rate:
            return 0.0  # nothing known about the refill: the server's own answer decides
        return (cost - self.level) / self.rate

    def observe(self, lim: Limit, sent_since: float, age: float, now: float) -> None:
        """A response's report. It was true when its request was admitted, `age` seconds ago; the
        bucket has refilled since and paid for the `sent_since` cost sent after that request."""
        self.size = lim.limit
        if lim.reset_s and lim.remaining < lim.limit:
            self.rate = (lim.limit - lim.remaining) / lim.reset_s
        self.refill(now)
        estimate = lim.remaining + (self.rate or 0.0) * age - sent_since
        self.level = max(0.0, min(self.size, estimate))
        if lim.remaining < 1 and lim.reset_s and not self.rate:
            self.empty_until = now + lim.reset_s


class Pacer:
    """The rate-limit buckets of one model on one server, learned from its responses."""

    def __init__(self) -> None:
        self.buckets: dict[str, Bucket] = {}
        self.sent = {"requests": 0.0, "tokens": 0.0}  # cost sent so far, per kind
        self.lock = asyncio.Lock()  # requests pass the buckets in the order they arrived
        self.waits = 0

    @property
    def known(self) -> bool:
        return bool(self.buckets)

    async def admit(self, tokens: float) -> dict[str, float]:
        """Wait until the buckets hold this request; returns the cost sent so far (a ticket)."""
        cost = {"requests": 1.0, "tokens": tokens * (1 + TOKEN_MARGIN)}
        async with self.lock:
            while True:
                now = time.monotonic()
                wait = max((b.wait_for(cost[PACED[d]], now) for d, b in self.buckets.items() if d in PACED),
                           default=0.0)
                for d, b in self.buckets.items():  # output tokens: only a reported exhaustion waits
                    if d not in PACED and now < b.empty_until:
                        wait = max(wait, b.empty_until - now)
                if wait <= 0:
                    break
                self.waits += 1
                await asyncio.sleep(wait)
            for d, b in self.buckets.items():
                if d in PACED:
                    b.level -= min(cost[PACED[d]], b.size)
            for kind, c in cost.items():
                self.sent[kind] += c
            return dict(self.sent)

    def observe(self, limits: dict[str, Limit], ticket: dict[str, float], sent_at: float) -> None:
        now = time.monotonic()
        for dim, lim in limits.items():
            bucket = self.buckets.get(dim)
            if bucket is None:
                bucket = self.buckets[dim] = Bucket(size=lim.limit, level=lim.remaining, rate=None, stamp=now)
            kind = PACED.get(dim)
            since = self.sent[kind] - ticket.get(kind, 0.0) if kind else 0.0
            bucket.observe(lim, since, now - sent_at, now)


@dataclass
class Grant:
    """A request's place in a window (and, when paced, its ticket at the buckets of `model`)."""

    sent_at: float
    model: str | None = None
    ticket: dict[str, float] | None = None
    id: int = 0  # the coordinator's name for it, when the window is shared across processes


class Window:
    """Requests in flight at one server: an AIMD window under `ceiling`, and a pause when the server
    asks for one. `adaptive=False` is a fixed limit of `ceiling` (randori before issue 17). An
    adaptive window starts at `start` (the provider's default concurrency), or `ceiling` if lower."""

    def __init__(self, ceiling: int, adaptive: bool = True, start: int = SLOW_START):
        self.ceiling = ceiling
        self.adaptive = adaptive
        self.size = float(min(ceiling, max(1, start)) if adaptive else ceiling)
        self.threshold = float(ceiling)  # slow start until the first cut
        self.in_flight = 0
        self.cut_at = 0.0
        self.paused_until = 0.0
        self.rate_limited = 0  # rate limits and overloads seen
        self.waiters: deque[asyncio.Future[None]] = deque()
        self.pacers: dict[str, Pacer] = {}

    @property
    def limit(self) -> int:
        return max(1, int(self.size))

    def load(self) -> float:
        return (self.in_flight + len(self.waiters) + 1) / self.limit

    async def acquire(self) -> None:
        """Wait for a place in the window (and for the end of any pause the server asked for).
        Waiters are served in order: a freed place is handed to the first of them directly."""
        while time.monotonic() < self.paused_until and not self.waiters:
            await asyncio.sleep(self.paused_until - time.monotonic())
        if self.in_flight < self.limit and not self.waiters:
            self.in_flight += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters.append(fut)
        try:
            await fut
        except BaseException:
            if fut.done() and not fut.cancelled():  # handed a place, then cancelled: give it back
                self.in_flight -= 1
                self._wake()
            elif fut in self.waiters:
                self.waiters.remove(fut)
            raise

    def _wake(self) -> None:
        while self.waiters and self.in_flight < self.limit and time.monotonic() >= self.paused_until:
            fut = self.waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def release(self, sent_at: float, outcome: str, retry_after: float | None = None) -> None:
        """`outcome`: "ok", "congested" (rate limit, overload) or "failed" (anything else). Never
        awaits, so a cancelled request still gives its place back."""
        self.in_flight -= 1
        self.settle(sent_at, outcome, retry_after)
        self._wake()

    def would_wait(self) -> bool:
        """A request entering now would wait: the window is full, others wait, or the server asked for a pause."""
        return bool(self.waiters) or self.in_flight >= self.limit or time.monotonic() < self.paused_until

    def settle(self, sent_at: float, outcome: str, retry_after: float | None = None) -> None:
        """What a request's outcome says of the window (its size, a pause), its place aside."""
        if outcome == "congested":
            self.rate_limited += 1
        if self.adaptive:
            if outcome == "ok":
                self.size = min(self.ceiling, self.size + (1.0 if self.size < self.threshold else 1.0 / self.size))
            elif outcome == "congested":
                if sent_at >= self.cut_at:  # once per round: later failures were sent under the old window
                    self.size = max(1.0, self.size / 2)
                    self.threshold = self.size
                    self.cut_at = time.monotonic()
                if retry_after:
                    pause = min(retry_after, 300.0)
                    if time.monotonic() + pause > self.paused_until:
                        self.paused_until = time.monotonic() + pause
                        asyncio.get_running_loop().call_later(pause, self._wake)

    async def enter(self, model: str | None, tokens: float) -> Grant:
        """A place for one request, paced at `model`'s buckets unless `model` is None."""
        await self.acquire()
        if model is None:
            return Grant(time.monotonic())
        try:
            ticket = await self.pacer(model).admit(tokens)
        except BaseException:
            self.release(time.monotonic(), "failed")
            raise
        return Grant(time.monotonic(), model, ticket)

    def leave(self, grant: Grant, outcome: str, retry_after: float | None = None,
              limits: dict[str, Limit] | None = None) -> None:
        """The request of `grant` ended: what the server said of its limits, then `release`."""
        if grant.model is not None and grant.ticket is not None and limits:
            self.pacer(grant.model).observe(limits, grant.ticket, grant.sent_at)
        self.release(grant.sent_at, outcome, retry_after)

    def pacer(self, model: str) -> Pacer:
        if model not in self.pacers:
            self.pacers[model] = Pacer()
        return self.pacers[model]

    def paced(self) -> bool:
        return any(p.known for p in self.pacers.values())


# One window per server and event loop: asyncio objects must not outlive the loop they wait on
# (tests and the CLI may run several loops in one process). Every model of a run on one server
# (the agent, an attacker on the same provider) shares it.
_WINDOWS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str, bool], Window]] = (
    weakref.WeakKeyDictionary())


def server_window(provider: str, server: str, ceiling: int, adaptive: bool, start: int = SLOW_START) -> Window:
    loop = asyncio.get_running_loop()
    per_loop = _WINDOWS.setdefault(loop, {})
    key = (provider, server, adaptive)
    if key not in per_loop:
        shared = _SHARED.get(loop)
        per_loop[key] = shared(key, ceiling, start) if shared is not None else Window(ceiling, adaptive, start)
    return per_loop[key]


# A worker process of a run on several processes or machines: its windows are views of the ones a
# coordinator keeps for every worker (randori.agents.models.shared_limits), so N workers hold one
# provider's limit as one process does.
_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Callable[[tuple[str, str, bool], int, int], Window]] = (
    weakref.WeakKeyDictionary())


def share_windows(make: Callable[[tuple[str, str, bool], int, int], Window] | None) -> None:
    """From now on, windows made in the running loop come from `make` (None: local ones again)."""
    loop = asyncio.get_running_loop()
    _WINDOWS.pop(loop, None)
    if make is None:
        _SHARED.pop(loop, None)
    else:
        _SHARED[loop] = make


def estimate_tokens(chars: int, ratio: float) -> float:
    return math.ceil(chars * ratio)
