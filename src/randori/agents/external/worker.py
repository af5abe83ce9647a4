"""The worker process a Python agent runs in (`--agent MODULE:CALLABLE`, the default route): randori
starts it in the agent's container, as it starts an MCP agent, and gives it cases one JSON line at a
time on stdin. For each it calls `await agent(case)` with a `Case` that reaches the case's tools over
MCP (the case's own server, the same boundary as an MCP agent's), and writes one JSON line on its
own copy of stdout: {"answer": TEXT} or {"error": TEXT}. What the agent prints goes to stderr.

Standard library only, and no import of randori: the worker starts in milliseconds, and holds
nothing of randori's: the case's environment, trace and verdict stay in randori's process.

`python worker.py --check SPEC` imports the agent and says what is wrong with it (exit status 2)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import select
import socket
import sys
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

PROTOCOL = "2025-06-18"
CHANGED = b"notifications/tools/list_changed"
USAGE_FIELDS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens", "calls")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


class Connection:
    """One keep-alive HTTP/1.1 connection to the case's MCP endpoint."""

    def __init__(self, url: str):
        rest = url.split("://", 1)[1]
        self.origin, _, path = rest.partition("/")
        host, _, port = self.origin.partition(":")
        self.address = (host, int(port or 80))
        self.path = "/" + path
        self.headers = {"accept": "application/json, text/event-stream"}
        self._connect()

    def _connect(self) -> None:
        self.sock = socket.create_connection(self.address)
        self.reader = self.sock.makefile("rb")

    def send(self, method: str, head: dict[str, str], body: bytes = b"", sock: socket.socket | None = None) -> None:
        lines = [f"{method} {self.path} HTTP/1.1", f"host: {self.origin}", *(f"{k}: {v}" for k, v in head.items())]
        (sock or self.sock).sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def post(self, message: dict[str, Any]) -> tuple[dict[str, str], Any]:
        body = json.dumps(message).encode()
        request = {**self.headers, "content-type": "application/json", "content-length": str(len(body))}
        try:
            self.send("POST", request, body)
            first = self.reader.readline()
        except (BrokenPipeError, ConnectionResetError):
            first = b""
        if not first:
            # A server may close a keep-alive connection that sat idle (an agent thinking between calls);
            # it does so only with no request in flight, so this one was not read: send it again.
            self.reader.close()
            self.sock.close()
            self._connect()
            self.send("POST", request, body)
            first = self.reader.readline()
        if not first:
            raise ConnectionError("the case's MCP server closed the connection without an answer")
        status = int(first.split()[1])
        head: dict[str, str] = {}
        while line := self.reader.readline().strip():
            key, _, value = line.decode("latin-1").partition(":")
            head[key.strip().lower()] = value.strip()
        data = self.reader.read(int(head.get("content-length", "0"))).decode()
        if status >= 400:
            raise ConnectionError(f"the case's MCP server answered HTTP {status}: {data[:300]}")
        return head, json.loads(data) if data.strip() else None


class Mcp:
    def __init__(self, url: str):
        self.conn = Connection(url)
        self.ids = 0
        head, reply = self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                                  "clientInfo": {"name": "randori-python-worker", "version": "1"}})
        if head.get("mcp-session-id"):
            self.conn.headers["mcp-session-id"] = head["mcp-session-id"]
        self.conn.headers["mcp-protocol-version"] = reply["protocolVersion"]
        self.conn.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.events: socket.socket | None = None
        self.heard = b""

    def request(self, method: str, params: dict[str, Any]) -> tuple[dict[str, str], Any]:
        self.ids += 1
        head, reply = self.conn.post({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error'].get('message', reply['error'])}")
        return head, reply["result"]

    def listen(self) -> None:
        """Open the session's stream of server notifications (read only when asked, never waited for)."""
        self.events = socket.create_connection(self.conn.address)
        self.conn.send("GET", {**self.conn.headers, "accept": "text/event-stream"}, sock=self.events)

    def changed(self) -> bool:
        """Whether the tool list changed since the last look. The server writes the notification
        before the result of the call that caused it, so its bytes are here by then."""
        if self.events is None:
            return False
        while select.select([self.events], [], [], 0)[0]:
            chunk = self.events.recv(65536)
            if not chunk:
                break
            self.heard += chunk
        seen = CHANGED in self.heard
        self.heard = self.heard[self.heard.rfind(CHANGED) + len(CHANGED):] if seen else self.heard[-len(CHANGED):]
        return seen


def check_usage(counts: dict[str, Any]) -> None:
    """The agent hears at once of a report randori would refuse (randori checks it again)."""
    for k, v in counts.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"usage {k} must be a whole number >= 0, not {v!r}")
    if counts["cached_input_tokens"] + counts["cache_write_tokens"] > counts["input_tokens"]:
        raise ValueError("usage cached_input_tokens and cache_write_tokens are parts of input_tokens: "
                         "together they cannot exceed it")


class Case:
    """The case, as `AgentCase` gives it in randori's process (see its documentation): `prompt`,
    `instructions`, `tools`, `timeout`, `current_tools()`, `on_tools_changed(callback)`,
    `await call(name, arguments)`, `await call_result(...)`, `add_usage(...)`."""

    def __init__(self, spec: dict[str, Any]):
        self.prompt: str = spec["prompt"]
        self.timeout: float | None = spec.get("timeout")
        self._usage_file: str = spec["usage_file"]
        self._mcp = Mcp(spec["url"])
        self.instructions: str = spec["instructions"]
        self.tools = self.current_tools()
        self._listeners: list[Callable[[], Awaitable[None]]] = []

    def current_tools(self) -> list[ToolSpec]:
        return [ToolSpec(t["name"], t.get("description") or "", t["inputSchema"])
                for t in self._mcp.request("tools/list", {})[1]["tools"]]

    def on_tools_changed(self, callback: Callable[[], Awaitable[None]]) -> None:
        if self._mcp.events is None:
            self._mcp.listen()
        self._listeners.append(callback)

    async def call(self, name: str, arguments: Any = None) -> str:
        return (await self.call_result(name, arguments))[0]

    async def call_result(self, name: str, arguments: Any = None) -> tuple[str, bool]:
        if isinstance(arguments, str):
            arguments = json.loads(arguments) if arguments.strip() else {}
        # Raises here, in the agent, for what JSON cannot carry (as a model's call could not either).
        params = json.loads(json.dumps({"name": name, "arguments": arguments or {}}, allow_nan=False))
        result = self._mcp.request("tools/call", params)[1]
        text = "".join(c.get("text", "") for c in result.get("content", []))
        if self._listeners and self._mcp.changed():
            for callback in list(self._listeners):
                await callback()
        return text, bool(result.get("isError"))

    def add_usage(self, input_tokens: int, output_tokens: int, *, cached_input_tokens: int = 0,
                  cache_write_tokens: int = 0, calls: int = 1) -> None:
        counts = {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "cached_input_tokens": cached_input_tokens, "cache_write_tokens": cache_write_tokens,
                  "calls": calls}
        check_usage(counts)
        with open(self._usage_file, "a") as f:
            f.write(json.dumps(counts) + "\n")


def load(spec: str) -> Callable[..., Any]:
    """MODULE:CALLABLE, or the name of a `randori.agents` entry point; ValueError says what is wrong."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    if ":" not in spec:
        from importlib.metadata import entry_points

        found = [ep for ep in entry_points(group="randori.agents") if ep.name == spec]
        if not found:
            raise ValueError(f"unknown agent '{spec}'")
        spec = found[0].value
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as e:
        raise ValueError(f"cannot import {module_name}: {type(e).__name__}: {e}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{module_name} has no attribute '{attr}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"is not callable (it is a {type(obj).__name__})")
    return obj  # type: ignore[no-any-return]


async def run_case(fn: Callable[..., Any], spec: dict[str, Any]) -> dict[str, str]:
    try:
        answer = fn(Case(spec))
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as e:
        where = "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=-4))
        return {"error": f"the agent raised {type(e).__name__}: {e}\n{where[-1500:]}"}
    if not isinstance(answer, str):
        return {"error": f"the agent returned {type(answer).__name__}, not the final answer as a str"}
    return {"answer": answer}


def main(argv: list[str]) -> int:
    if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
        del sys.path[0]  # run as a file: randori's modules beside it must not shadow the agent's imports
    if argv[:1] == ["--check"]:
        try:
            load(argv[1])
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the agent's prints must not mix with the answers
    fn = load(argv[0])
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in sys.stdin:
        reply = asyncio.run(run_case(fn, json.loads(line)))  # a fresh event loop per case
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
