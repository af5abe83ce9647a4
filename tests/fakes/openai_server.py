"""A fake OpenAI-compatible chat server on real loopback HTTP, scripted per test.

`policy(request_json) -> reply` decides each reply. A reply is either a plain string (the final
answer; "" is an empty reply), a list of (tool name, arguments) pairs (tool calls; arguments may be a
dict, or a str sent verbatim so tests can send malformed JSON), `Cut(reply)` (the same reply marked as
cut off by the token limit), or a `Fault` that makes the server misbehave.

`FakeServer` holds the HTTP machinery; each provider's fake (this one, `anthropic_server`,
`google_server`) only says which path it serves and how replies and errors look on its wire.
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
    body: raw body to send instead of JSON; echo_auth: put the request's credentials in the error
    message, as careless servers do (to test that keys never reach the store)."""

    status: int = 200
    delay: float = 0.0
    retry_after: str | None = None
    drop: bool = False
    body: str | None = None
    echo_auth: bool = False


@dataclass
class Cut:
    """`reply`, marked as cut off by the output token limit."""

    reply: Any


Reply = Any
Policy = Callable[[dict[str, Any]], Reply]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 drops the SYNs of a 32-case run's first connections,
    # which the client then retries a second later.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout tests) leaves a broken pipe behind; that is expected


class FakeServer:
    """Serves POSTs on the paths `accepts` allows; replies come from the policy."""

    def __init__(self, policy: Policy, latency: float = 0.0, record: bool = True):
        self.policy = policy
        self.latency = latency
        # Tests read back what was sent; a benchmark serving thousands of calls must not keep every
        # body alive, or its own garbage collector stalls all replies as the heap grows.
        self.record = record
        self.count = 0
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []  # the request bodies as sent, byte for byte
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.times: list[float] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes; with Nagle on, each reply waits ~40 ms for an ACK.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                with server._lock:
                    server.count += 1
                    n = server.count
                    if server.record:
                        server.requests.append(body)
                        server.raw.append(raw)
                        server.headers.append({k.lower(): v for k, v in self.headers.items()})
                        server.paths.append(self.path)
                        server.times.append(time.monotonic())
                if not server.accepts(self.path):
                    self._send(404, server.error_body(404, "not found"))
                    return
                if server.latency:
                    time.sleep(server.latency)
                reply = server.policy(body)
                extra = server.extra_headers()
                if isinstance(reply, Fault):
                    self._fault(reply, extra)
                    return
                cut = isinstance(reply, Cut)
                self._send(200, server.render(reply.reply if cut else reply, body, self.path, n, cut), extra)

            def _fault(self, f: Fault, headers: dict[str, str]) -> None:
                if f.delay:
                    time.sleep(f.delay)
                if f.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                extra = {**headers, **({"Retry-After": f.retry_after} if f.retry_after else {})}
                if f.body is not None:
                    self._raw(f.status, f.body.encode(), extra)
                    return
                message = f"fake fault {f.status}"
                if f.echo_auth:
                    creds = {k: v for k, v in self.headers.items()
                             if k.lower() in ("authorization", "x-api-key", "x-goog-api-key")}
                    message += f"; you sent {creds}"
                self._send(f.status, server.error_body(f.status, message), extra)

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

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    # -- what differs per provider --------------------------------------------------------------
    def accepts(self, path: str) -> bool:
        raise NotImplementedError

    def render(self, reply: Reply, request: dict[str, Any], path: str, n: int, cut: bool) -> dict[str, Any]:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "fake", "code": status}}

    def extra_headers(self) -> dict[str, str]:
        """Headers for the reply the policy just chose (called in the request's thread)."""
        return {}

    # -------------------------------------------------------------------------------------------
    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Any:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def completion(reply: Reply, model: str, n: int, cut: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(reply, str):
        message["content"] = reply or None
        finish = "stop"
    else:
        message["tool_calls"] = [
            {"id": f"call_{n}_{i}", "type": "function",
             "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for i, (name, args) in enumerate(reply)]
        finish = "tool_calls"
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "length" if cut else finish}],
            "usage": {"prompt_tokens": 100 + n, "completion_tokens": 10, "total_tokens": 110 + n}}


class FakeOpenAIServer(FakeServer):
    def accepts(self, path: str) -> bool:
        return path.endswith("/chat/completions")

    def render(self, reply: Reply, request: dict[str, Any], path: str, n: int, cut: bool) -> dict[str, Any]:
        return completion(reply, request.get("model", "fake"), n, cut)

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def model_turns(request: dict[str, Any]) -> int:
    """How many model turns the conversation in `request` already has (OpenAI, Anthropic or Gemini)."""
    turns = request.get("messages") or request.get("contents") or []
    return len([m for m in turns if m.get("role") in ("assistant", "model")])


def scripted_policy(steps: list[Reply]) -> Policy:
    """Reply with steps[k] where k is the number of model turns so far (stateless per conversation,
    so concurrent conversations work)."""

    def policy(request: dict[str, Any]) -> Reply:
        return steps[min(model_turns(request), len(steps) - 1)]

    return policy


def serve_first(replies: list[Reply], policy: Policy) -> Policy:
    """Serve `replies` (faults or replies) to the first requests, one each, in order; then answer with
    `policy`."""
    queue = list(replies)
    lock = threading.Lock()

    def wrapped(request: dict[str, Any]) -> Reply:
        with lock:
            if queue:
                return queue.pop(0)
        return policy(request)

    return wrapped
