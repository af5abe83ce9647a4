"""One provider's limits held by several worker processes as by one: a `Coordinator` keeps the
windows and pacers (limits.py) of every server in one event loop (the driver's, or a Ray actor's),
and each worker's requests ask it for a place before they are sent and tell it how they ended.

A worker reaches the coordinator through a `Channel`: `ask` awaits an answer, `tell` does not (a
request's end must never wait: a cancelled request still gives its place back). Requests are named
by their worker (`owner`) and a number the worker chose, so a worker that dies, or abandons a
request while it waits, gives its places back without the coordinator trusting anything else.

Kept places. Asking before every request costs a round trip through two busy event loops (a median
of 35 ms with two workers on two cores, against 200 ms replies: about a tenth of the requests a run
could have in flight). So where the coordinator can reach a worker (`notify`, the process pool), a
worker whose request ended well may keep its place for its next request, and uses it without asking
(and, once the window cannot grow, without telling either). A kept place counts as a request in
flight, so the limit holds exactly as before.
The coordinator lets workers keep places only while nobody waits, nothing is paced by rate-limit
headers and no pause is asked for; as soon as a request must wait, or one is rate-limited, it asks
every worker holding kept places to give back those it is not using (`revoke`), and they stop keeping
until an answer says they may again. On Ray the actor cannot reach its tasks: there every request asks."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from randori.agents.models.limits import SLOW_START, Grant, Limit, Window

Key = tuple[str, str, bool]  # provider, server, adaptive


class Coordinator:
    """The windows of every worker's servers. Lives in one event loop; every method is called there.
    `notify(owner, message)`, when given, sends a worker a message unasked (a `revoke` of its kept
    places); without it no worker keeps a place."""

    def __init__(self, notify: Callable[[str, tuple[Any, ...]], None] | None = None) -> None:
        self.windows: dict[Key, Window] = {}
        self.grants: dict[tuple[str, int], tuple[Key, Grant]] = {}
        self.waiting: dict[tuple[str, int], asyncio.Task[Any]] = {}
        self.notify = notify
        self.kept: Counter[tuple[str, Key]] = Counter()  # places kept by a worker between its requests
        self.revoked: set[tuple[str, Key]] = set()  # asked back, not kept again since

    def window(self, key: Key, ceiling: int, start: int = SLOW_START) -> Window:
        if key not in self.windows:
            self.windows[key] = Window(ceiling, key[2], start)
        return self.windows[key]

    async def enter(self, owner: str, number: int, key: Key, ceiling: int, model: str | None,
                    tokens: float, start: int = SLOW_START) -> tuple[int, int, bool, bool]:
        """Wait for a place (and the pacer) for request `number` of `owner`; returns the window's
        limit, the rate limits it met and whether it is paced (the worker's progress line and its
        load balancing between servers read them), and whether the worker may keep its places.
        `ceiling` and `start` make the window if this is its first request."""
        window = self.window(key, ceiling, start)
        if window.would_wait():
            self.reclaim(key)
        task = asyncio.ensure_future(window.enter(model, tokens))
        self.waiting[(owner, number)] = task
        try:
            grant = await task
        finally:
            self.waiting.pop((owner, number), None)
        self.grants[(owner, number)] = (key, grant)
        return window.limit, window.rate_limited, window.paced(), self.may_keep(window)

    def may_keep(self, window: Window) -> bool:
        """Nobody waits, no pause, no pacing. A full window is no reason: a kept place is one the
        worker holds already, and whoever comes to wait for one gets it back by `reclaim`."""
        return (self.notify is not None and not window.waiters and time.monotonic() >= window.paused_until
                and not window.paced())

    def leave(self, owner: str, number: int, outcome: str, retry_after: float | None,
              limits: dict[str, Limit] | None, keep: bool = False) -> None:
        """Request `number` of `owner` ended; with `keep` (only after "ok") the worker keeps its place."""
        held = self.grants.pop((owner, number), None)
        if held is None:
            return
        key, grant = held
        window = self.windows[key]
        if keep and outcome == "ok":
            window.settle(grant.sent_at, outcome, retry_after)
            self.kept[(owner, key)] += 1
            self.revoked.discard((owner, key))
            if window.waiters:
                self.reclaim(key)
            return
        window.leave(grant, outcome, retry_after, limits)
        if outcome == "congested":  # a rate limit or a pause: kept places must not go out unasked
            self.reclaim(key)

    def leave_kept(self, owner: str, key: Key, sent_at: float, outcome: str, retry_after: float | None,
                   limits: dict[str, Limit] | None, keep: bool) -> None:
        """A request `owner` sent on a place it kept (at `sent_at`, this machine's monotonic clock)
        ended: with `keep` the place stays kept and only the window hears of the outcome; else it
        goes back. (A worker sends nothing when it keeps a place in a window that cannot grow.)"""
        window = self.windows[key]
        if keep and outcome == "ok":
            window.settle(sent_at, outcome, retry_after)
            if window.waiters:
                self.reclaim(key)
            return
        if self.kept[(owner, key)] <= 0:  # cannot happen with an honest worker: nothing to give back
            return
        self.kept[(owner, key)] -= 1
        window.leave(Grant(sent_at), outcome, retry_after, limits)
        if outcome == "congested":
            self.reclaim(key)

    def give_back(self, owner: str, key: Key, count: int) -> None:
        """`owner` returns `count` of its kept places."""
        count = min(count, self.kept[(owner, key)])
        self.kept[(owner, key)] -= count
        window = self.windows[key]
        for _ in range(count):
            window.release(time.monotonic(), "returned")

    def reclaim(self, key: Key) -> None:
        """Ask every worker that keeps places at `key` for those it is not using."""
        if self.notify is None:
            return
        for (owner, k), count in list(self.kept.items()):
            if k == key and count > 0 and (owner, k) not in self.revoked:
                self.revoked.add((owner, k))
                self.notify(owner, ("revoke", key))

    def abandon(self, owner: str, number: int) -> None:
        """The worker stopped waiting for request `number` (cancelled): its place, if given, is free."""
        task = self.waiting.pop((owner, number), None)
        if task is not None:
            task.cancel()
        self.leave(owner, number, "failed", None, None)

    def forget(self, owner: str) -> None:
        """`owner` is gone (a dead worker, a lost batch): every place it held, kept or waited for is free."""
        for o, n in [k for k in self.waiting if k[0] == owner] + [k for k in self.grants if k[0] == owner]:
            self.abandon(o, n)
        for o, key in [k for k in self.kept if k[0] == owner]:
            self.give_back(o, key, self.kept[(o, key)])
            del self.kept[(o, key)]
            self.revoked.discard((o, key))

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
    keeps: bool  # the coordinator can reach this worker unasked (so it may keep places)
    windows: dict[Key, SharedWindow]  # this worker's windows, for the coordinator's `revoke`

    async def ask(self, method: str, *args: Any) -> Any: ...

    def tell(self, method: str, *args: Any) -> None: ...


class SharedWindow(Window):
    """A worker's view of a window the coordinator keeps: `enter` and `leave` go to it, but for the
    places this worker keeps between its requests (see the module's text)."""

    def __init__(self, channel: Channel, key: Key, ceiling: int, start: int = SLOW_START):
        super().__init__(ceiling, key[2], start)
        self.start = start
        self.channel = channel
        self.key = key
        self.shared_paced = False
        self.free = 0  # places kept and not in use
        self.may_keep = False  # what the coordinator said last
        channel.windows[key] = self

    async def enter(self, model: str | None, tokens: float) -> Grant:
        self.in_flight += 1  # this worker's share, for its load balancing between servers
        if self.free and self.may_keep:  # on a kept place: nobody needs to hear of it
            self.free -= 1
            return Grant(time.monotonic(), model, None, KEPT)
        number = next(_numbers)
        try:
            self.size, self.rate_limited, self.shared_paced, self.may_keep = await self.channel.ask(
                "enter", self.channel.owner, number, self.key, self.ceiling, model, tokens, self.start)
        except BaseException:
            self.in_flight -= 1
            self.channel.tell("abandon", self.channel.owner, number)
            raise
        if not self.may_keep and self.free:  # kept by another case meanwhile, and not to be kept now
            self.revoke()
        return Grant(0.0, model, None, number)

    def paced(self) -> bool:
        return self.shared_paced

    def leave(self, grant: Grant, outcome: str, retry_after: float | None = None,
              limits: dict[str, Limit] | None = None) -> None:
        self.in_flight -= 1
        keep = self.channel.keeps and self.may_keep and outcome == "ok" and not limits
        if keep:  # before telling: a revoke may come back at once, and must find the place
            self.free += 1
        if grant.id != KEPT:
            self.channel.tell("leave", self.channel.owner, grant.id, outcome, retry_after, limits or None, keep)
        elif not keep or (self.adaptive and self.size < self.ceiling):  # else the window has nothing to learn
            self.channel.tell("leave_kept", self.channel.owner, self.key, grant.sent_at, outcome, retry_after,
                              limits or None, keep)

    def revoke(self) -> None:
        """The coordinator wants its places back: the unused ones now, and keep none until it says so."""
        self.may_keep = False
        if self.free:
            self.channel.tell("give_back", self.channel.owner, self.key, self.free)
            self.free = 0


_numbers = itertools.count(1)
KEPT = 0  # the number of a request sent on a kept place (asked ones count from 1)


def use_channel(channel: Channel) -> None:
    """Every window made from now on in the running loop is shared through `channel`."""
    from randori.agents.models.limits import share_windows

    share_windows(lambda key, ceiling, start: SharedWindow(channel, key, ceiling, start))
