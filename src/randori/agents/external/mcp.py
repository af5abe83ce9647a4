"""`--agent "mcp:COMMAND ARGS..."`: for each case randori serves the case's tools over MCP (the
official `mcp` SDK, streamable HTTP on 127.0.0.1, a free port per case) and starts COMMAND with the
server's URL and the user's prompt in its environment, in its container (`process.py`,
`container.py`). The answer is what COMMAND printed on stdout when it exited. `randori mcp serve`
serves one case the same way to a client started by hand."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import shlex
import shutil
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from randori.agents.external.event_streams import EventStreams
from randori.agents.external.session import AgentCase, CaseStopped, Driver, ExternalSpec
from randori.errors import UserError

HOST = "127.0.0.1"
PATH = "/mcp"
FORWARDED_PORT = 8000  # where an agent with no network finds the case's server, on its own loopback
SHUTDOWN_WAIT = 10.0  # seconds a case's MCP server may take to stop (it has 1 s for open connections)
KEEP_ALIVE_S = 3600  # seconds an agent's connection may sit idle between two requests
NOTIFY_WAIT = 1.0  # seconds a call that changed the tool list waits for its notification to be written


def preload() -> None:
    """Import the MCP server stack now, before the run: imported by the first case, it would stall
    every case in flight (and eat into that case's time)."""
    import anyio._backends._asyncio  # noqa: F401
    import anyio.streams.stapled  # noqa: F401
    import mcp.server.lowlevel  # noqa: F401
    import mcp.server.subscriptions  # noqa: F401
    import mcp_types  # noqa: F401
    import uvicorn

    async def nothing(scope: Any, receive: Any, send: Any) -> None: ...

    _case_server()
    # The HTTP protocol and lifespan classes uvicorn would import when the first server starts.
    uvicorn.Config(nothing, log_level="warning", access_log=False, lifespan="on").load()


def _case_server() -> type:
    import uvicorn

    class CaseServer(uvicorn.Server):
        """uvicorn for one case. It leaves SIGINT/SIGTERM alone: uvicorn takes them over while it serves
        and restores them after, which is wrong for several servers starting and stopping in any order
        inside one run. And it stops when `stopping` is set, instead of polling a flag every 0.1 s."""

        stopping: asyncio.Event

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

        async def main_loop(self) -> None:
            await self.on_tick(0)  # sets the Date header once: a case lasts minutes at most
            await self.stopping.wait()

    return CaseServer


def _case_app(case: AgentCase) -> tuple[Any, Callable[[], None]]:
    """The case's MCP server as an ASGI app, and what ends its `subscriptions/listen` streams when the
    case is over.

    `tools/list` answers with the descriptions as they are now (a rug pull changes them after the first
    tool call), and a call that changed them tells the client before its result returns: on the
    handshake era (initialize; up to 2025-11-25) as `notifications/tools/list_changed` on each session's
    standalone stream (the GET SSE stream the client opens), on the 2026-07-28 era through the
    subscription bus to every `subscriptions/listen` stream that asked for tool changes. Every case
    advertises `tools.listChanged`, attacked or not, so the capability gives nothing away."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import NotificationOptions, Server
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    import randori

    schemas = {t.name: t.parameters for t in case.tools}
    bus = InMemorySubscriptionBus()
    listen = ListenHandler(bus)
    sessions: dict[str | None, Any] = {}  # handshake-era sessions by Mcp-Session-Id, to tell of a change

    def own_lookup(ctx: Any) -> bool:
        """A tools/list the SDK runs itself while it handles a tools/call (its HTTP request says so)."""
        headers = getattr(ctx.request, "headers", None)
        return headers is not None and headers.get("mcp-method") == "tools/call"

    def remember(ctx: Any) -> None:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            headers = getattr(ctx.request, "headers", None)
            sessions[headers.get("mcp-session-id") if headers is not None else None] = ctx.session

    async def list_tools(ctx: Any, params: Any) -> Any:
        if own_lookup(ctx):
            # mcp < 2.3 resolves a 2026-07-28 call's schema by running this handler (see below): its
            # answer goes to the SDK, not to the agent, so it must not count as showing the descriptions.
            return types.ListToolsResult(tools=[types.Tool(name=n, description="", input_schema=s)
                                                for n, s in schemas.items()])
        remember(ctx)
        return types.ListToolsResult(tools=[types.Tool(name=t.name, description=t.description,
                                                       input_schema=t.parameters) for t in case.current_tools()])

    async def call_tool(ctx: Any, params: Any) -> Any:
        remember(ctx)
        try:
            text, failed = await case.call_result(params.name, params.arguments)
        except CaseStopped as e:
            text, failed = str(e), True
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed)

    async def tools_changed() -> None:
        mark = streams.mark()
        for session in list(sessions.values()):
            # Dropped when the session opened no stream; a session that has ended must not fail the call.
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await session.send_tool_list_changed()
        await bus.publish(ToolsListChanged())
        await streams.written_since(mark, NOTIFY_WAIT)

    case.on_tools_changed(tools_changed)

    class CaseServer(Server):  # type: ignore[type-arg]
        def create_initialization_options(self, notification_options: Any = None, *args: Any, **kw: Any) -> Any:
            # The handshake era reads listChanged from here; the 2026-07-28 era from the listen handler.
            return super().create_initialization_options(notification_options or NotificationOptions(
                tools_changed=True), *args, **kw)

    # get_tool_input_schema (mcp >= 2.3): without it the 2026-07-28 path validates a call's Mcp-Param
    # headers by running the tools/list handler, which would count as showing the agent the descriptions;
    # on older 2.x releases (verifiers pins 2.0.0) list_tools tells that lookup apart (own_lookup).
    lookup = ({"get_tool_input_schema": schemas.get}
              if "get_tool_input_schema" in inspect.signature(Server.__init__).parameters else {})
    server = CaseServer("randori", version=randori.__version__, instructions=case.instructions,
                        on_list_tools=list_tools, on_call_tool=call_tool, on_subscriptions_listen=listen, **lookup)
    server.middleware = []  # OpenTelemetry spans: nothing exports them here, and every call would pay for them
    # JSON responses (no SSE per call: cheaper) still carry change notifications: the handshake era's
    # standalone GET stream and the 2026-07-28 era's subscriptions/listen are SSE in this mode too.
    streams = EventStreams(server.streamable_http_app(json_response=True, host=HOST))
    return streams, listen.close


@contextlib.asynccontextmanager
async def serve(case: AgentCase, port: int = 0, unix: str | None = None) -> AsyncIterator[str]:
    """Serve `case` over MCP on 127.0.0.1 (`port` 0: a free one), or on the Unix socket `unix`, while
    the block runs; yields the URL (for `unix`, the one its forwarder serves: `forwarder.py`)."""
    import uvicorn

    app, close_streams = _case_app(case)
    if unix is not None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(unix)
        url = f"http://{HOST}:{FORWARDED_PORT}{PATH}"
    else:
        # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY on accepted connections only for sockets
        # that say so, and without it every reply waits ~40 ms for the client's delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.bind((HOST, port))
        except OSError as e:
            sock.close()
            raise UserError(f"cannot serve MCP on {HOST}:{port}: {e.strerror}") from None
        url = f"http://{HOST}:{sock.getsockname()[1]}{PATH}"
    # An agent may think for minutes between two calls: uvicorn's default (5 s) would close its idle
    # connection under it. The case's own time limit (--agent-timeout) ends a case that hangs.
    server = _case_server()(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                           timeout_graceful_shutdown=1, timeout_keep_alive=KEEP_ALIVE_S))
    server.stopping = asyncio.Event()
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the MCP server stopped while starting")
            await asyncio.sleep(0.002)
        yield url
    finally:
        close_streams()
        server.should_exit = True
        server.stopping.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), SHUTDOWN_WAIT)
        except asyncio.TimeoutError:  # a shutdown that hangs must not hold the case (and the run) with it
            task.cancel()
            await asyncio.wait({task}, timeout=1)
        except Exception:
            pass
        sock.close()
        if unix is not None:
            with contextlib.suppress(OSError):
                os.unlink(unix)


def parse_command(command: str) -> list[str]:
    """`COMMAND ARGS...` split as a shell would (no shell runs it); a UserError when it cannot run."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise UserError(f"agent 'mcp:{command}': cannot split the command ({e})") from None
    if not argv:
        raise UserError("agent 'mcp:' names no command: use --agent \"mcp:COMMAND ARGS...\"")
    if shutil.which(argv[0]) is None:
        raise UserError(f"agent 'mcp:{command}': no executable '{argv[0]}' (not found on PATH, or not executable)")
    return argv


class ManualDriver(Driver):
    """`randori mcp serve`: serves the case until `stop` is set; `answer` then gives the final answer."""

    def __init__(self, port: int, announce: Callable[[str, AgentCase], None], stop: asyncio.Event,
                 answer: Callable[[], Awaitable[str]]):
        self.port, self.announce, self.stop, self.answer = port, announce, stop, answer

    async def run(self, case: AgentCase) -> str:
        async with serve(case, self.port) as url:
            self.announce(url, case)
            await self.stop.wait()
        return await self.answer()


class ManualAgent(ExternalSpec):
    """The client of `randori mcp serve`; `manual` is set once the session's driver exists."""

    name = "mcp:serve"

    def __init__(self, version: str | None):
        super().__init__(self.name, version, None)
        self.manual: ManualDriver | None = None

    def driver(self) -> Driver:
        assert self.manual is not None, "no session to serve"
        return self.manual
