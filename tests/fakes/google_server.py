"""A fake Gemini API (`POST /v1beta/models/{model}:generateContent`) on loopback HTTP.

Replies and faults are those of `openai_server`: a string is a text part, a list of (name, args)
pairs becomes `functionCall` parts, `Cut` sets finishReason MAX_TOKENS."""

from __future__ import annotations

from typing import Any

from tests.fakes.openai_server import FakeServer, Reply

STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def generate_response(reply: Reply, n: int, cut: bool = False) -> dict[str, Any]:
    if isinstance(reply, str):
        parts: list[dict[str, Any]] = [{"text": reply}] if reply else []
    else:
        parts = [{"functionCall": {"name": name, "args": args}} for name, args in reply]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0,
                            "finishReason": "MAX_TOKENS" if cut else "STOP"}],
            "usageMetadata": {"promptTokenCount": 300 + n, "candidatesTokenCount": 30,
                              "totalTokenCount": 330 + n},
            "modelVersion": "fake"}


class FakeGoogleServer(FakeServer):
    def accepts(self, path: str) -> bool:
        return ":generateContent" in path

    def render(self, reply: Reply, request: dict[str, Any], path: str, n: int, cut: bool) -> dict[str, Any]:
        return generate_response(reply, n, cut)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": STATUS.get(status, "UNKNOWN")}}

    @property
    def base_url(self) -> str:
        return self.root
