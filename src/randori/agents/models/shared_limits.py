"""One provider's limits held by several worker processes as by one: a `Coordinator` keeps the
windows and pacers (limits.py) of every server in one event loop (the driver's, or a Ray actor's),
and each worker's requests ask it for a place before they are sent and tell it how they ended.

A worker reaches the coordinator through a `Channel`: `ask` awaits an answer, `tell` does not (a
request's end must never wait: a cancelled request still gives its place back). Requests are named
by their worker (`owner`) and a number the worker chose, so a worker that dies, or abandons a
request while it waits, gives its places back without the coordinator trusting anything else."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Protocol

from randori.agents.models.limits import Grant, Limit, Window

Key = tuple[str, str, bool]  # provider, server, adaptive


class Coordinator:
    """The windows of every worker's servers. Lives in one event loop; every method is called there."""

    def __init__(self) -> None:
        self.windows: dict[Key, Window] = {}
        self.grants: dict[tuple[str, int], tuple[Window, Grant]] = {}
        self.waiting: dict[tuple[str, int], asyncio.Task[Any]] = {}

    def window(self, key: Key, ceiling: int) -> Window:
        if key not in self.windows:
            self.windows[key] = Window(ceiling, key[2])
        return self.windows[key]

    async def enter(self, owner: str, number: int, key: Key, ceiling: int, model: str | None,
                    tokens: float) -> tuple[int, int, bool]:
        """Wait for a place (and the pacer) for request `number` of `owner`; returns the window's
        limit, the rate limits it met and whether it is paced: the worker's progress line and its
        load balancing between servers read them."""
        window = self.window(key, ceiling)
        task = asyncio.ensure_future(window.enter(model, tokens))
        self.waiting[(owner, number)] = task
        try:
            grant = await task
        finally:
            self.waiting.pop((owner, number), None)
        self.grants[(owner, number)] = (window, grant)
        return window.limit, window.rate_limited, window.paced()

    def leave(self, owner: str, number: int, outcome: str, retry_after: float | None,
              limits: dict[str, Limit] | None) -> None:
        held = self.grants.pop((owner, number), None)
        if held is not None:
            held[0].leave(held[1], outcome, retry_after, limits)

    def abandon(self, owner: str, number: int) -> None:
        """The worker stopped waiting for request `number` (cancelled): its place, if given, is free."""
        task = self.waiting.pop((owner, number), None)
        if task is not None:
            task.cancel()
        self.leave(owner, number, "failed", None, None)

    def forget(self, owner: str) -> None:
        """`owner` is gone (a dead worker, a lost batch): every place it held or waited for is free."""
        for o, n in [k for k in self.waiting if k[0] == owner] + [k for k in self.grants if k[0] == owner]:
            self.abandon(o, n)

    def status(self) -> str:
        windows = list(self.windows.values())
        if not windows:
            return ""
        text = f"shared concurrency {sum(w.limit for w in windows)}/{sum(w.ceiling for w in windows)}"
        hits = sum(w.rate_limited for w in windows)
        if hits:
            text += f", {hits} rate-limited"
        if any(w.paced() for w in windows):
            text += ", paced"
        return text


class Channel(Protocol):
    owner: str

    async def ask(self, method: str, *args: Any) -> Any: ...

    def tell(self, method: str, *args: Any) -> None: ...


class SharedWindow(Window):
    """A worker's view of a window the coordinator keeps: `enter` and `leave` go to it."""

    def __init__(self, channel: Channel, key: Key, ceiling: int):
        super().__init__(ceiling, key[2])
        self.channel = channel
        self.key = key
        self.shared_paced = False

    async def enter(self, model: str | None, tokens: float) -> Grant:
        number = next(_numbers)
        self.in_flight += 1  # this worker's share, for its load balancing between servers
        try:
            self.size, self.rate_limited, self.shared_paced = await self.channel.ask(
                "enter", self.channel.owner, number, self.key, self.ceiling, model, tokens)
        except BaseException:
            self.in_flight -= 1
            self.channel.tell("abandon", self.channel.owner, number)
            raise
        return Grant(0.0, model, None, number)

    def paced(self) -> bool:
        return self.shared_paced

    def leave(self, grant: Grant, outcome: str, retry_after: float | None = None,
              limits: dict[str, Limit] | None = None) -> None:
        self.in_flight -= 1
        self.channel.tell("leave", self.channel.owner, grant.id, outcome, retry_after, limits or None)


_numbers = itertools.count(1)


def use_channel(channel: Channel) -> None:
    """Every window made from now on in the running loop is shared through `channel`."""
    from randori.agents.models.limits import share_windows

    share_windows(lambda key, ceiling: SharedWindow(channel, key, ceiling))
