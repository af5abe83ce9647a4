"""ASGI middleware that knows which event streams (SSE responses) of an MCP server are open and how
much each has written. A change notification and the result of the tool call that caused it travel
on different HTTP connections (the standalone GET stream or a `subscriptions/listen` stream, and the
call's own POST), so either could reach the client first; waiting until every open stream has written
since the notification was sent puts it on the wire before the result, and a client that reads its
connections as data arrives hears of the change before it reads the result. (A stream that does not
carry it, such as a listen stream for other events, delays that one result by the wait's limit.)"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


def _is_event_stream(start: Message) -> bool:
    return any(k.lower() == b"content-type" and v.startswith(b"text/event-stream") for k, v in start.get("headers", ()))


class EventStreams:
    def __init__(self, app: App):
        self.app = app
        self.written: dict[object, int] = {}  # each open event stream -> body chunks written so far
        self._progress = asyncio.Event()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = object()

        async def watched(message: Message) -> None:
            await send(message)
            if message["type"] == "http.response.start" and _is_event_stream(message):
                self.written[key] = 0
            elif message["type"] == "http.response.body" and key in self.written:
                self.written[key] += 1
                self._wake()

        try:
            await self.app(scope, receive, watched)
        finally:
            if self.written.pop(key, None) is not None:
                self._wake()

    def _wake(self) -> None:
        self._progress.set()
        self._progress = asyncio.Event()

    def mark(self) -> dict[object, int]:
        """What every open event stream has written so far."""
        return dict(self.written)

    async def written_since(self, mark: dict[object, int], timeout: float) -> None:
        """Return once every stream open at `mark` has written more or closed, or after `timeout` s."""

        async def wait() -> None:
            while any(self.written.get(k, n + 1) <= n for k, n in mark.items()):
                await self._progress.wait()

        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(wait(), timeout)
