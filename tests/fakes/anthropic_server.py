"""A fake Anthropic Messages API (`POST /v1/messages`) on loopback HTTP, with `tool_use` blocks.

Replies and faults are those of `openai_server`: a string is a text answer, a list of (name, args)
pairs becomes `tool_use` blocks (a str `args` is sent as the block's input verbatim, which a real
server never does: it tests that a malformed input cannot crash the provider), `Cut` sets
stop_reason "max_tokens"."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.openai_server import FakeServer, Reply

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def message(reply: Reply, model: str, n: int, cut: bool = False) -> dict[str, Any]:
    if isinstance(reply, str):
        content: list[dict[str, Any]] = [{"type": "text", "text": reply}] if reply else []
        stop = "end_turn"
    else:
        content = [{"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name,
                    "input": args if isinstance(args, dict) else _loose(args)}
                   for i, (name, args) in enumerate(reply)]
        stop = "tool_use"
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "max_tokens" if cut else stop, "stop_sequence": None,
            "usage": {"input_tokens": 200 + n, "output_tokens": 20}}


def _loose(args: str) -> Any:
    try:
        return json.loads(args)
    except json.JSONDecodeError:
        return args


class FakeAnthropicServer(FakeServer):
    def accepts(self, path: str) -> bool:
        return path.rstrip("/").endswith("/v1/messages")

    def render(self, reply: Reply, request: dict[str, Any], path: str, n: int, cut: bool) -> dict[str, Any]:
        return message(reply, request.get("model", "fake"), n, cut)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}

    @property
    def base_url(self) -> str:
        return self.root


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in request["messages"] if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]
