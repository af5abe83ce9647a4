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


def test_a_worker_request_cancelled_while_it_waits_leaves_no_place_behind():
    class Direct:
        owner = "w9"

        def __init__(self, c):
            self.c = c

        async def ask(self, method, *args):
            return await getattr(self.c, method)(*args)

        def tell(self, method, *args):
            getattr(self.c, method)(*args)

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
