"""A tiny agent process for MCP tests, standard library only so that it starts in milliseconds: it
asks an OpenAI-compatible chat server (the fake one) what to do, sending the tool list as it stands,
runs the tool calls through the MCP server named by RANDORI_MCP_URL (streamable HTTP, JSON-RPC, the
initialize handshake), and prints the final answer. When the server advertises `tools.listChanged` it
opens the session's standalone GET stream, and after each tool call it reads what has arrived there
without waiting: on `notifications/tools/list_changed` it lists the tools again.

Environment: RANDORI_MCP_URL, RANDORI_PROMPT, RANDORI_INSTRUCTIONS (from randori) and
MODEL_BASE_URL (the chat server, e.g. http://127.0.0.1:PORT/v1). With MCP_AGENT_TIMINGS set to a
file, the round trip of each tool call is appended to it (seconds, one a line: benchmarks/); with
MCP_AGENT_EVENTS, each notification received and each listing (one a line: tests). With
MCP_AGENT_USAGE=1 it reports each chat reply's tokens to $RANDORI_USAGE_FILE, as a real agent may;
with MCP_AGENT_USAGE=bad it writes a line that is not a usage report."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time
from typing import Any


class Http:
    """One keep-alive HTTP/1.1 connection to one origin, on a bare socket: `http.client` alone costs a
    test of a thousand cases a minute of imports (it pulls in email and ssl)."""

    def __init__(self, url: str):
        host_port, _, path = url.split("://", 1)[1].partition("/")
        host, _, port = host_port.partition(":")
        self.host_port, self.path = host_port, "/" + path
        self.sock = socket.create_connection((host, int(port or 80)), timeout=60)
        self.file = self.sock.makefile("rb")
        self.headers: dict[str, str] = {}

    def post(self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[Any, Any]:
        data = json.dumps(body).encode()
        head = {"host": self.host_port, "content-type": "application/json", "content-length": str(len(data)),
                **self.headers, **(headers or {})}
        self.sock.sendall(f"POST {path} HTTP/1.1\r\n".encode()
                          + "".join(f"{k}: {v}\r\n" for k, v in head.items()).encode() + b"\r\n" + data)
        status = int(self.file.readline().split()[1])
        reply: dict[str, str] = {}
        while (line := self.file.readline().decode().strip()):
            key, _, value = line.partition(":")
            reply[key.strip().lower()] = value.strip()
        text = self.file.read(int(reply.get("content-length", 0))).decode()
        if status >= 400:
            raise SystemExit(f"{path}: HTTP {status}: {text[:300]}")
        if reply.get("content-type", "").startswith("text/event-stream"):
            text = "".join(line[5:].strip() for line in text.splitlines() if line.startswith("data:"))
        return reply, json.loads(text) if text.strip() else None


class Events:
    """The session's standalone GET stream (server-sent events), read only when asked and never waited
    for: `poll()` gives the methods of the notifications whose bytes have arrived."""

    def __init__(self, http: Http):
        self.sock = socket.create_connection(http.sock.getpeername()[:2], timeout=60)
        head = {"host": http.host_port, **http.headers, "accept": "text/event-stream"}
        self.sock.sendall(f"GET {http.path} HTTP/1.1\r\n".encode()
                          + "".join(f"{k}: {v}\r\n" for k, v in head.items()).encode() + b"\r\n")
        self.raw = b""
        while b"\r\n\r\n" not in self.raw:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("GET stream: the server closed it")
            self.raw += chunk
        status, _, self.raw = self.raw.partition(b"\r\n\r\n")
        if b" 200 " not in status.split(b"\r\n")[0] + b" ":
            raise SystemExit(f"GET stream: {status.decode()[:200]}")
        self.body = b""  # the stream with its chunked framing taken off

    def poll(self) -> list[str]:
        while select.select([self.sock], [], [], 0)[0]:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.raw += chunk
        while True:  # chunked transfer encoding: "<hex size>\r\n<data>\r\n"
            size_line, sep, rest = self.raw.partition(b"\r\n")
            if not sep or len(rest) < int(size_line, 16) + 2:
                break
            size = int(size_line, 16)
            self.body, self.raw = self.body + rest[:size], rest[size + 2:]
        methods = []
        text = self.body.decode().replace("\r\n", "\n")
        *events, rest_text = text.split("\n\n")
        self.body = rest_text.encode()
        for event in events:
            data = "".join(line[5:].strip() for line in event.splitlines() if line.startswith("data:"))
            if data:
                methods.append(json.loads(data).get("method", ""))
        return methods


class Mcp:
    def __init__(self, url: str):
        self.http = Http(url)
        self.http.headers = {"accept": "application/json, text/event-stream"}
        self.ids = 0
        self.times: list[float] = []
        resp, init = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                 "clientInfo": {"name": "randori-test-agent", "version": "1"}})
        self.instructions = init["result"].get("instructions", "")
        session = resp.get("mcp-session-id")
        if session:
            self.http.headers["mcp-session-id"] = session
        self.http.headers["mcp-protocol-version"] = init["result"]["protocolVersion"]
        self.http.post(self.http.path, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = init["result"].get("capabilities", {}).get("tools") or {}
        self.events = Events(self.http) if tools.get("listChanged") else None

    def request(self, method: str, params: dict[str, Any]) -> tuple[Any, Any]:
        self.ids += 1
        resp, reply = self.http.post(self.http.path, {"jsonrpc": "2.0", "id": self.ids, "method": method,
                                                      "params": params})
        if "error" in reply:
            raise SystemExit(f"{method}: {reply['error']}")
        return resp, reply

    def tools(self) -> list[dict[str, Any]]:
        return self.request("tools/list", {})[1]["result"]["tools"]

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        t0 = time.perf_counter()
        result = self.request("tools/call", {"name": name, "arguments": arguments})[1]["result"]
        self.times.append(time.perf_counter() - t0)
        return "".join(c.get("text", "") for c in result["content"])

    def tools_changed(self) -> bool:
        """Whether a `notifications/tools/list_changed` has arrived since the last look."""
        return "notifications/tools/list_changed" in (self.events.poll() if self.events else [])


def log(line: str) -> None:
    if os.environ.get("MCP_AGENT_EVENTS"):
        with open(os.environ["MCP_AGENT_EVENTS"], "a") as f:
            f.write(line + "\n")


def report_usage(usage: dict[str, Any], path: str | None, served: int) -> None:
    how = os.environ.get("MCP_AGENT_USAGE")
    if not how or not path:
        return
    line = ({"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]} if how == "1"
            else {"input_tokens": served, "output_tokens": 0} if how == "served"
            else {"input_tokens": -1, "output_tokens": 0})
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def listing(mcp: Mcp) -> list[dict[str, Any]]:
    log("listed tools")
    return [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                              "parameters": t["inputSchema"]}} for t in mcp.tools()]


def answer(url: str, prompt: str, usage_file: str | None, served: int) -> str:
    mcp = Mcp(url)
    tools = listing(mcp)
    model = Http(os.environ["MODEL_BASE_URL"])
    messages: list[dict[str, Any]] = [{"role": "system", "content": mcp.instructions},
                                      {"role": "user", "content": prompt}]
    for _ in range(50):
        _, reply = model.post(model.path + "/chat/completions", {"model": "fake", "messages": messages,
                                                                 "tools": tools})
        message = reply["choices"][0]["message"]
        messages.append(message)
        if os.environ.get("MCP_AGENT_USAGE") != "served":
            report_usage(reply.get("usage") or {}, usage_file, served)
        if not message.get("tool_calls"):
            if os.environ.get("MCP_AGENT_TIMINGS"):
                with open(os.environ["MCP_AGENT_TIMINGS"], "a") as f:
                    f.write("".join(f"{t}\n" for t in mcp.times))
            if os.environ.get("MCP_AGENT_USAGE") == "served":
                report_usage({}, usage_file, served)
            return message.get("content") or ""
        for call in message["tool_calls"]:
            text = mcp.call(call["function"]["name"], json.loads(call["function"]["arguments"] or "{}"))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
        if mcp.tools_changed():
            log("notified notifications/tools/list_changed")
            tools = listing(mcp)
    sys.exit("too many turns")


def main() -> None:
    if not os.environ.get("RANDORI_REUSE"):
        print(answer(os.environ["RANDORI_MCP_URL"], os.environ["RANDORI_PROMPT"],
                     os.environ.get("RANDORI_USAGE_FILE"), 1))
        return
    # --agent-reuse: one case a line on stdin, one answer a line on stdout.
    for served, line in enumerate(sys.stdin, 1):
        case = json.loads(line)
        print(json.dumps({"answer": answer(case["url"], case["prompt"], case["usage_file"], served)}), flush=True)


if __name__ == "__main__":
    main()
