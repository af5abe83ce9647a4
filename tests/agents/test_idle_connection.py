"""An external agent may think for a long time between two tool calls (a real model does): the case's
MCP server keeps its idle connection open, and randori's worker connection sends again on a fresh one
when a server closed it while idle."""

from __future__ import annotations

import socketserver
import threading
import time
from typing import Any

from randori.agents.external.worker import Connection
from tests.agents.test_external import outcomes
from tests.helpers import randori

PAUSE_S = 6  # longer than uvicorn's default keep-alive (5 s), which closed such connections


async def sleepy_agent(case: Any) -> str:
    """Reads the accounts, thinks (blocking, as a slow model call would) and reads them again."""
    first = await case.call("get_accounts", {})
    time.sleep(PAUSE_S)
    second = await case.call("get_accounts", {})
    return "same" if first == second else "changed"


def test_an_agent_that_pauses_between_calls_keeps_its_connection(tmp_path):
    r = randori("run", "--agent", f"{__name__}:sleepy_agent", "-s", "banking", "-u", "user_task_0", "--no-attack",
                "--no-benign", "-i", "injection_task_0", "-r", str(tmp_path), "--agent-timeout", "120")
    # injection_only case: the agent answers; its status must be ok, not an agent crash
    assert r.returncode == 0, r.stderr
    assert {v[0] for v in outcomes(tmp_path).values()} == {"ok"}


class OneRequestPerConnection(socketserver.StreamRequestHandler):
    """Answers one JSON-RPC POST, then closes the connection (as a server does to an idle one)."""

    def handle(self) -> None:
        length = 0
        while (line := self.rfile.readline().strip()):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        self.rfile.read(length)
        # Counted before the answer is written: the client may assert as soon as it has read it.
        self.server.connections += 1  # type: ignore[attr-defined]
        body = b'{"jsonrpc": "2.0", "id": 1, "result": {"ok": true}}'
        self.wfile.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)


def test_the_worker_sends_again_on_a_new_connection_when_the_server_closed_the_idle_one():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), OneRequestPerConnection)
    server.connections = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        conn = Connection(f"http://127.0.0.1:{server.server_address[1]}/mcp")
        for _ in range(3):
            head, reply = conn.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert reply["result"] == {"ok": True}
        assert server.connections == 3  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
