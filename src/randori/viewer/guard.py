"""What stands between the network and the viewer's pages. A page on another site can reach a local
server through DNS rebinding (its own name made to resolve to 127.0.0.1): only requests naming this
machine in `Host` are served. Every response forbids framing, sniffing and any script but the one
inline handler the filters use."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
# The filters' only script: `<select onchange="this.form.submit()">`.
_HANDLER = base64.b64encode(hashlib.sha256(b"this.form.submit()").digest()).decode()
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
       f"script-src 'unsafe-hashes' 'sha256-{_HANDLER}'; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer")]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]


def host_name(header: str) -> str:
    """The name in a Host header, without its port: "[::1]:8765" -> "[::1]"."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[:header.find("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class LocalOnly:
    """ASGI middleware: refuses (421) a request whose Host is not one of `hosts`, adds HEADERS to
    every response."""

    def __init__(self, app: Any, hosts: Iterable[str] = ()):
        self.app = app
        self.hosts = {h.lower() for h in (*LOCAL_HOSTS, *hosts)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
        if host_name(host) not in self.hosts:
            body = b"this viewer answers only to requests for this machine (Host: 127.0.0.1 or localhost)\n"
            await send({"type": "http.response.start", "status": 421,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode()), *HEADERS]})
            await send({"type": "http.response.body", "body": body})
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)
