"""An agent process on the official `mcp` SDK's client, for tests of what a real MCP client gets from
randori: it asks an OpenAI-compatible chat server (the fake one) what to do, sending the tool list as
it stands, runs the tool calls over MCP, and prints the final answer. When the server says the tool
list changed it lists the tools again before its next request to the model.

How it hears of a change depends on the protocol era (MCP_AGENT_ERA):
- `legacy` (default): the initialize handshake; the SDK opens the session's standalone GET stream,
  where `notifications/tools/list_changed` arrives (handed to `message_handler`);
- `modern`: protocol 2026-07-28, no handshake; the agent opens a `subscriptions/listen` stream for
  tool-list changes.

Environment: RANDORI_MCP_URL, RANDORI_PROMPT (from randori or `randori mcp serve`), MODEL_BASE_URL (the
chat server, e.g. http://127.0.0.1:PORT/v1), MCP_AGENT_ERA, MCP_AGENT_EVENTS: a file to which each
change notification received and each listing is appended, one line each (what tests assert), and
MCP_AGENT_IGNORE_CHANGES: when set, the agent ignores notifications and keeps its first listing.
With $RANDORI_REUSE set it takes its cases on stdin, one JSON line each (--agent-reuse)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import mcp_types as types
from mcp.client.client import Client


class Agent:
    def __init__(self, url: str, prompt: str) -> None:
        self.url, self.prompt = url, prompt
        self.era = os.environ.get("MCP_AGENT_ERA", "legacy")
        self.log_path = os.environ.get("MCP_AGENT_EVENTS")
        self.deaf = bool(os.environ.get("MCP_AGENT_IGNORE_CHANGES"))  # keeps its first listing
        self.changed = asyncio.Event()
        self.listening = asyncio.Event()
        self.tools: list[dict[str, Any]] = []

    def log(self, line: str) -> None:
        if self.log_path:
            with open(self.log_path, "a") as f:
                f.write(line + "\n")

    def heard(self, how: str) -> None:
        self.log(f"notified {how}")
        self.changed.set()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification) and not self.deaf:
            self.heard("notifications/tools/list_changed")

    async def listen(self, client: Client) -> None:
        async with client.listen(tools_list_changed=True) as sub:
            self.listening.set()
            async for _ in sub:
                if not self.deaf:
                    self.heard("subscriptions/listen tools_list_changed")

    async def list_tools(self, client: Client) -> None:
        self.changed.clear()
        listed = await client.list_tools(cache_mode="refresh")
        self.tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                        "parameters": t.input_schema}} for t in listed.tools]
        self.log("listed tools")

    @contextlib.asynccontextmanager
    async def connected(self) -> AsyncIterator[Client]:
        mode = "legacy" if self.era == "legacy" else "auto"
        async with Client(self.url, mode=mode, message_handler=self.on_message) as client:
            self.log(f"protocol {client.protocol_version}; tools.listChanged "
                     f"{bool(client.server_capabilities.tools and client.server_capabilities.tools.list_changed)}")
            if self.era == "legacy":
                yield client
                return
            task = asyncio.create_task(self.listen(client))
            await asyncio.wait({task, asyncio.create_task(self.listening.wait())},
                               return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                task.result()
            try:
                yield client
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def read_what_arrived(self) -> None:
        """Let the tasks that read the notification streams handle what is already on their sockets (the
        server writes a change notification before the result of the call that caused it)."""
        for _ in range(50):
            if self.changed.is_set():
                return
            await asyncio.sleep(0)

    async def run(self) -> str:
        async with self.connected() as client, httpx.AsyncClient(base_url=os.environ["MODEL_BASE_URL"],
                                                                  timeout=60) as model:
            await self.list_tools(client)
            messages: list[dict[str, Any]] = [{"role": "system", "content": client.instructions or ""},
                                              {"role": "user", "content": self.prompt}]
            for _ in range(50):
                if self.changed.is_set():
                    await self.list_tools(client)
                reply = await model.post("/chat/completions", json={"model": "fake", "messages": messages,
                                                                    "tools": self.tools})
                reply.raise_for_status()
                message = reply.json()["choices"][0]["message"]
                messages.append(message)
                if not message.get("tool_calls"):
                    return str(message.get("content") or "")
                for call in message["tool_calls"]:
                    result = await client.call_tool(call["function"]["name"],
                                                    json.loads(call["function"]["arguments"] or "{}"))
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    self.log(f"called {call['function']['name']}")
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
                await self.read_what_arrived()
        sys.exit("too many turns")


def main() -> None:
    if not os.environ.get("RANDORI_REUSE"):
        print(asyncio.run(Agent(os.environ["RANDORI_MCP_URL"], os.environ["RANDORI_PROMPT"]).run()))
        return
    for line in sys.stdin:  # --agent-reuse: a case a line, an answer a line
        case = json.loads(line)
        print(json.dumps({"answer": asyncio.run(Agent(case["url"], case["prompt"]).run())}), flush=True)


if __name__ == "__main__":
    main()
