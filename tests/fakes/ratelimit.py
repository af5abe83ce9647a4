"""A fake OpenAI-compatible server that enforces R requests and T tokens per minute, as OpenAI
does: every reply carries x-ratelimit-{limit,remaining,reset}-{requests,tokens}, and a request
beyond either limit is answered 429 with Retry-After (it costs nothing).

Each limit is a token bucket refilled continuously at R/60 (T/60) per second. Its size, the burst a
client may send at once, is `window` seconds of the limit: 60 s as on the real service, or, for a
benchmark that must finish in a minute or two, 1 s, so that what is measured is the sustained
rate rather than one minute's burst. The headers report the bucket as it is (limit = its size),
so a client reading them sees the same refill rate either way.

A request's tokens are those of its prompt (words and punctuation marks of its messages and tools,
the stand-in tokenizer of anthropic_cache), reported as usage.prompt_tokens, plus its max_tokens
when given, as OpenAI counts them."""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

from tests.fakes.anthropic_cache import count_tokens
from tests.fakes.openai_server import FakeOpenAIServer, Fault, Policy, completion


def fmt_duration(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms" if seconds < 1 else f"{seconds:.3f}s"


class Bucket:
    def __init__(self, per_minute: float, window: float):
        self.rate = per_minute / 60.0
        self.size = self.rate * window
        self.level = self.size
        self.stamp = time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.size, self.level + self.rate * (now - self.stamp))
        self.stamp = now

    def wait(self, cost: float) -> float:
        return max(0.0, (cost - self.level) / self.rate)

    def headers(self, name: str) -> dict[str, str]:
        return {f"x-ratelimit-limit-{name}": str(int(self.size)),
                f"x-ratelimit-remaining-{name}": str(max(0, int(self.level))),
                f"x-ratelimit-reset-{name}": fmt_duration((self.size - self.level) / self.rate)}


class RateLimitedOpenAIServer(FakeOpenAIServer):
    """`rpm`, `tpm`: the limits per minute; `window`: seconds of the limit a burst may use;
    `send_headers`: whether replies say the limits (Retry-After on a 429 is always sent);
    `latency`: seconds the model takes over an accepted request (a 429 comes at once)."""

    def __init__(self, policy: Policy, *, rpm: float, tpm: float, window: float = 60.0,
                 send_headers: bool = True, latency: float = 0.0, **kwargs: Any):
        super().__init__(policy, **kwargs)  # the latency of a reply; a 429 comes at once
        self.requests_bucket = Bucket(rpm, window)
        self.tokens_bucket = Bucket(tpm, window)
        self.send_headers = send_headers
        self.accepted: list[tuple[float, int]] = []  # (time, tokens) of each request let through
        self.rejected = 0
        self._limit_lock = threading.Lock()
        self._last_headers: dict[int, dict[str, str]] = {}
        self._tokens: dict[int, int] = {}
        inner_policy = self.policy

        def limited(request: dict[str, Any]) -> Any:
            tokens = count_tokens(json.dumps(request.get("messages", []))) + count_tokens(
                json.dumps(request.get("tools", [])))
            cost = tokens + (request.get("max_tokens") or 0)
            with self._limit_lock:
                now = time.monotonic()
                self.requests_bucket.refill(now)
                self.tokens_bucket.refill(now)
                wait = max(self.requests_bucket.wait(1), self.tokens_bucket.wait(cost))
                if wait <= 0:
                    self.requests_bucket.level -= 1
                    self.tokens_bucket.level -= cost
                    self.accepted.append((now, cost))
                else:
                    self.rejected += 1
                headers = self._headers()
            ident = threading.get_ident()
            self._last_headers[ident] = headers
            if wait > 0:  # OpenAI's retry-after-ms beside the standard whole seconds
                headers["retry-after-ms"] = str(math.ceil(wait * 1000))
                return Fault(status=429, retry_after=str(math.ceil(wait)))
            self._tokens[ident] = tokens
            if latency:
                time.sleep(latency)
            return inner_policy(request)

        self.policy = limited

    def _headers(self) -> dict[str, str]:
        if not self.send_headers:
            return {}
        return {**self.requests_bucket.headers("requests"), **self.tokens_bucket.headers("tokens")}

    def extra_headers(self) -> dict[str, str]:
        return self._last_headers.pop(threading.get_ident(), {})

    def render(self, reply: Any, request: dict[str, Any], path: str, n: int, cut: bool) -> dict[str, Any]:
        out = completion(reply, request.get("model", "fake"), n, cut)
        prompt = self._tokens.pop(threading.get_ident(), 0)
        out["usage"].update(prompt_tokens=prompt, total_tokens=prompt + out["usage"]["completion_tokens"])
        return out

    def throughput(self) -> dict[str, float]:
        """Requests and tokens let through per minute, from the first to the last accepted request,
        not counting the first full bucket (the burst a client may send at once): the sustained rate."""
        if len(self.accepted) < 2:
            return {"rpm": 0.0, "tpm": 0.0, "seconds": 0.0}
        span = self.accepted[-1][0] - self.accepted[0][0]
        requests = max(0.0, len(self.accepted) - self.requests_bucket.size)
        tokens = max(0.0, sum(t for _, t in self.accepted) - self.tokens_bucket.size)
        return {"rpm": 60 * requests / span, "tpm": 60 * tokens / span, "seconds": span}
