"""A fake Anthropic Messages API that applies the documented prompt-cache rule, so tests and the
cost benchmark see the usage a real server would report.

The rule, as Anthropic documents it: the prompt is a sequence of blocks in the order tools, system,
messages; a block carrying `cache_control` is a breakpoint, and the prefix ending there is written
to the cache (if it holds at least the model's minimum of tokens; 1,024 here). A later request
reads from the cache the longest prefix that was written before and that ends at one of its own
breakpoints or at one of the 20 block boundaries before each breakpoint. An entry lives five
minutes from its last use. Usage then says `cache_read_input_tokens` (the prefix read),
`cache_creation_input_tokens` (from there to the last breakpoint, written now) and `input_tokens`
(the rest, after the last breakpoint). The cache_control markers themselves are not part of a
prefix: moving a breakpoint forward keeps the earlier prefix readable.

Tokens are counted as words and punctuation marks of each block's JSON, a stand-in tokenizer."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from typing import Any

from tests.fakes.anthropic_server import FakeAnthropicServer, message
from tests.fakes.openai_server import Reply

LOOKBACK = 20
TTL = 300.0
_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def blocks(request: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request's prompt as (canonical JSON without cache_control, is a breakpoint) per block."""
    out: list[tuple[str, bool]] = []

    def add(block: Any) -> None:
        if isinstance(block, dict):
            bare = {k: v for k, v in block.items() if k != "cache_control"}
            out.append((json.dumps(bare, sort_keys=True), "cache_control" in block))
        else:
            out.append((json.dumps(block), False))

    for tool in request.get("tools") or []:
        add(tool)
    system = request.get("system")
    for b in ([system] if isinstance(system, str) else system or []):
        add({"type": "text", "text": b} if isinstance(b, str) else b)
    for m in request.get("messages") or []:
        content = m["content"]
        for b in ([{"type": "text", "text": content}] if isinstance(content, str) else content):
            add({"role": m["role"], **b})
    return out


class CachingAnthropicServer(FakeAnthropicServer):
    """`min_tokens`: the smallest prefix the cache accepts."""

    def __init__(self, *args: Any, min_tokens: int = 1024, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.min_tokens = min_tokens
        self.cache: dict[str, float] = {}  # prefix hash -> expiry
        self.breakpoints: list[int] = []  # per request, how many it carried
        self.usages: list[dict[str, int]] = []
        self._cache_lock = threading.Lock()

    def usage(self, request: dict[str, Any]) -> dict[str, int]:
        seq = blocks(request)
        hashes, cum, h, total = [], [], hashlib.sha256(), 0
        for text, _ in seq:
            h.update(text.encode() + b"\0")
            hashes.append(h.copy().hexdigest())
            total += count_tokens(text)
            cum.append(total)
        points = [i for i, (_, bp) in enumerate(seq) if bp]
        now = time.monotonic()
        with self._cache_lock:
            hit = -1
            for bp in points:
                for j in range(bp, max(-1, bp - LOOKBACK - 1), -1):
                    if self.cache.get(hashes[j], 0) > now:
                        hit = max(hit, j)
                        break
            if hit >= 0:
                self.cache[hashes[hit]] = now + TTL
            last = points[-1] if points else -1
            read = cum[hit] if hit >= 0 else 0
            written = 0
            if last > hit and cum[last] >= self.min_tokens:
                written = cum[last] - read
                for bp in points:
                    if bp > hit and cum[bp] >= self.min_tokens:
                        self.cache[hashes[bp]] = now + TTL
            self.breakpoints.append(len(points))
        usage = {"input_tokens": total - read - written, "cache_read_input_tokens": read,
                 "cache_creation_input_tokens": written, "output_tokens": 20}
        self.usages.append(usage)
        return usage

    def render(self, reply: Reply, request: dict[str, Any], path: str, n: int, cut: bool) -> dict[str, Any]:
        out = message(reply, request.get("model", "fake"), n, cut)
        out["usage"] = self.usage(request)
        return out
