"""The coordinator of a limit shared by worker processes: places held by a worker that dies, or by a
request that was abandoned while it waited, come back; nothing is handed out twice."""

import asyncio

from randori.agents.models.shared_limits import Coordinator, SharedWindow

KEY = ("openai", "http://x/v1", False)  # a fixed window of `ceiling` places


def test_a_dead_worker_gives_back_every_place_it_held_or_waited_for():
    async def go():
        c = Coordinator()
        await c.enter("w1", 1, KEY, 2, None, 0)
        await c.enter("w1", 2, KEY, 2, None, 0)
        waiting = asyncio.create_task(c.enter("w1", 3, KEY, 2, None, 0))
        other = asyncio.create_task(c.enter("w2", 1, KEY, 2, None, 0))
        await asyncio.sleep(0.01)
        assert not other.done() and c.windows[KEY].in_flight == 2
        c.forget("w1")  # its two places, and its place in the queue
        await asyncio.wait_for(other, 1)
        assert waiting.cancelled() and c.windows[KEY].in_flight == 1 and not c.grants.keys() - {("w2", 1)}
        c.leave("w2", 1, "ok", None, None)
        assert c.windows[KEY].in_flight == 0

    asyncio.run(go())


class Direct:
    """A worker's channel to a coordinator in the same loop (as over a socket: in order)."""

    keeps = False

    def __init__(self, c, owner="w9", keeps=False):
        self.c, self.owner, self.keeps = c, owner, keeps
        self.windows = {}
        self.asked = self.told = 0

    async def ask(self, method, *args):
        self.asked += 1
        return await getattr(self.c, method)(*args)

    def tell(self, method, *args):
        self.told += 1
        getattr(self.c, method)(*args)


def test_a_worker_request_cancelled_while_it_waits_leaves_no_place_behind():
    async def go():
        c = Coordinator()
        window = SharedWindow(Direct(c), KEY, 1)
        first = await window.enter(None, 0)
        blocked = asyncio.create_task(window.enter(None, 0))
        await asyncio.sleep(0.01)
        blocked.cancel()
        await asyncio.gather(blocked, return_exceptions=True)
        window.leave(first, "ok")
        assert c.windows[KEY].in_flight == 0 and not c.grants and not c.waiting and window.in_flight == 0
        again = await asyncio.wait_for(window.enter(None, 0), 1)  # the place is free for the next one
        window.leave(again, "ok")

    asyncio.run(go())


def workers(n, ceiling):
    channels = {}

    def notify(owner, message):
        assert message[0] == "revoke"
        channels[owner].windows[message[1]].revoke()

    c = Coordinator(notify=notify)
    for i in range(n):
        channels[f"w{i}"] = Direct(c, f"w{i}", keeps=True)
    return c, [SharedWindow(ch, KEY, ceiling) for ch in channels.values()]


def test_a_kept_place_saves_the_question_and_goes_back_when_another_worker_waits():
    async def go():
        c, (a, b) = workers(2, 2)
        window = c.windows.get(KEY)
        g = await a.enter(None, 0)
        a.leave(g, "ok")  # nobody waits: a keeps its place
        window = c.windows[KEY]
        assert a.free == 1 and window.in_flight == 1 and a.channel.asked == 1
        g1 = await a.enter(None, 0)  # on the kept place, without asking
        assert a.channel.asked == 1 and a.free == 0 and window.in_flight == 1
        g2 = await b.enter(None, 0)
        assert window.in_flight == 2
        blocked = asyncio.create_task(b.enter(None, 0))
        await asyncio.sleep(0.01)
        assert not blocked.done()  # the limit holds: a's request is in flight, b's second waits
        a.leave(g1, "ok")  # a would keep its place, but b waits: it is asked back and goes to b
        g3 = await asyncio.wait_for(blocked, 1)
        assert a.free == 0 and not a.may_keep and window.in_flight == 2
        g4 = asyncio.create_task(a.enter(None, 0))  # a asks again now, and waits its turn
        await asyncio.sleep(0.01)
        assert not g4.done() and a.channel.asked == 2
        b.leave(g2, "ok")
        a.leave(await asyncio.wait_for(g4, 1), "ok")
        b.leave(g3, "ok")
        c.forget("w0")
        c.forget("w1")
        assert window.in_flight == 0 and not c.grants and not +c.kept

    asyncio.run(go())


def test_kept_places_never_take_a_shared_window_past_its_limit():
    import random

    async def go(cases_per_worker):
        rng = random.Random(7)
        c, windows = workers(3, 4)
        most = 0

        async def case(w):
            nonlocal most
            for _ in range(12):
                g = await w.enter(None, 0)
                most = max(most, c.windows[KEY].in_flight - sum(c.kept.values()))
                assert c.windows[KEY].in_flight <= 4
                await asyncio.sleep(rng.random() / 200)
                w.leave(g, rng.choice(["ok", "ok", "ok", "failed"]))
                await asyncio.sleep(rng.random() / 500)

        await asyncio.gather(*(case(w) for w in windows for _ in range(cases_per_worker)))
        asked = sum(w.channel.asked for w in windows)
        for i in range(3):
            c.forget(f"w{i}")
        assert c.windows[KEY].in_flight == 0 and not c.grants
        return most, asked

    # Three requests at most at once under a limit of 4: nobody waits, so most go on kept places
    # (a failed request gives its place back, and the next one asks).
    most, asked = asyncio.run(go(1))
    assert most <= 3 and asked < 3 * 12 / 2
    # Nine at once: the limit is reached and never passed, whatever is kept and given back.
    most, asked = asyncio.run(go(3))
    assert most == 4


def test_a_rate_limited_request_takes_every_kept_place_back():
    async def go():
        c, (a, b) = workers(2, 8)
        ga, gb = await a.enter(None, 0), await b.enter(None, 0)
        a.leave(ga, "ok")
        assert a.free == 1
        b.leave(gb, "congested", 5.0)  # the server asks for a pause: a must not send on its kept place
        assert a.free == 0 and not a.may_keep and c.windows[KEY].in_flight == 0

    asyncio.run(go())


def test_a_worker_that_fills_the_window_may_keep_its_places_while_nobody_waits():
    # As many cases as the provider's limit (a run with --concurrency equal to --provider-concurrency):
    # the window is full all the time, yet nobody waits, so no request needs to ask.
    async def go():
        c, (a,) = workers(1, 2)
        g1, g2 = await a.enter(None, 0), await a.enter(None, 0)
        assert a.may_keep and c.windows[KEY].in_flight == 2
        a.leave(g1, "ok")
        a.leave(g2, "ok")
        told = a.channel.told
        for _ in range(5):
            g1, g2 = await a.enter(None, 0), await a.enter(None, 0)
            a.leave(g1, "ok")
            a.leave(g2, "ok")
        assert a.channel.asked == 2 and c.windows[KEY].in_flight == 2 and a.free == 2
        assert a.channel.told == told  # a fixed window has nothing to learn: no message at all

    asyncio.run(go())


def test_requests_on_kept_places_still_grow_an_adaptive_window():
    async def go():
        key = ("openai", "http://x/v1", True)  # adaptive: starts small, grows with each success
        channels = {}
        c = Coordinator(notify=lambda owner, m: channels[owner].windows[m[1]].revoke())
        channels["w0"] = Direct(c, "w0", keeps=True)
        a = SharedWindow(channels["w0"], key, 32)
        g = await a.enter(None, 0)
        start = c.windows[key].limit
        a.leave(g, "ok")
        for _ in range(20):  # one case, one request at a time, always on its kept place
            a.leave(await a.enter(None, 0), "ok")
        assert a.channel.asked == 1 and c.windows[key].limit >= start + 20
        a.leave(await a.enter(None, 0), "failed")  # a failure gives the kept place back
        assert a.free == 0 and c.windows[key].in_flight == 0 and not +c.kept

    asyncio.run(go())


def test_a_shared_window_starts_where_the_workers_model_says_and_doubles_from_there():
    """The coordinator makes the window at a worker's first request: with the start the worker's
    model gives (its provider's own concurrency), not SLOW_START."""
    key = ("openai", "http://x/v1", True)

    async def go():
        c = Coordinator()
        window = SharedWindow(Direct(c), key, 128, 16)
        grants = [await window.enter(None, 0) for _ in range(16)]
        assert c.windows[key].limit == 16 and window.size == 16
        late = asyncio.create_task(window.enter(None, 0))
        await asyncio.sleep(0.01)
        assert not late.done()  # the 17th waits for the first round
        for g in grants:
            window.leave(g, "ok")
        window.leave(await asyncio.wait_for(late, 1), "ok")
        assert c.windows[key].limit == 33  # slow start: one more per success

    asyncio.run(go())
