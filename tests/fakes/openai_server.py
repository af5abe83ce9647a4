"""A fake OpenAI-compatible chat server on real loopback HTTP, scripted per test.

`policy(request_json) -> reply` decides each reply. A reply is either a plain string (the final
answer), a list of (tool name, arguments) pairs (tool calls; arguments may be a dict, or a str sent
verbatim so tests can send malformed JSON), or a `Fault` that makes the server misbehave.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Fault:
    """status: HTTP status to answer with; delay: seconds to wait before answering;
    retry_after: value of the Retry-After header; drop: close the connection without a reply;
    body: raw body to send instead of JSON."""

    status: int = 200
    delay: float = 0.0
    retry_after: str | None = None
    drop: bool = False
    body: str | None = None


Reply = Any
Policy = Callable[[dict[str, Any]], Reply]


def completion(reply: Reply, model: str, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(reply, str):
        message["content"] = reply
        finish = "stop"
    else:
        message["tool_calls"] = [
            {"id": f"call_{n}_{i}", "type": "function",
             "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for i, (name, args) in enumerate(reply)]
        finish = "tool_calls"
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 100 + n, "completion_tokens": 10, "total_tokens": 110 + n}}


class FakeOpenAIServer:
    def __init__(self, policy: Policy, latency: float = 0.0):
        self.policy = policy
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    n = len(server.requests)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if server.latency:
                    time.sleep(server.latency)
                reply = server.policy(body)
                if isinstance(reply, Fault):
                    self._fault(reply)
                    return
                self._send(200, completion(reply, body.get("model", "fake"), n))

            def _fault(self, f: Fault) -> None:
                if f.delay:
                    time.sleep(f.delay)
                if f.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                extra = {"Retry-After": f.retry_after} if f.retry_after else {}
                if f.body is not None:
                    self._raw(f.status, f.body.encode(), extra)
                else:
                    self._send(f.status, {"error": {"message": f"fake fault {f.status}", "type": "fake"}}, extra)

            def _send(self, status: int, obj: dict[str, Any], extra: dict[str, str] | None = None) -> None:
                self._raw(status, json.dumps(obj).encode(), extra or {})

            def _raw(self, status: int, data: bytes, extra: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def scripted_policy(steps: list[Reply]) -> Policy:
    """Reply with steps[k] where k is the number of tool results so far (stateless per conversation,
    so concurrent conversations work)."""

    def policy(request: dict[str, Any]) -> Reply:
        k = len([m for m in request["messages"] if m["role"] == "assistant"])
        return steps[min(k, len(steps) - 1)]

    return policy
