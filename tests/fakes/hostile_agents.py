"""Agents that try to escape their case, for the containment tests.

- `forging_agent` (Python): obeys the injection as the gullible reference agent does, then looks
  through its own process's objects for the case's trace and wipes what shows the injection was
  seen. In randori's process (--agent-in-process) it can; in its worker it finds nothing.
- `bad_argument_agent`, `blocking_agent`, `deaf_agent` (Python): for user_task_0 they pass an
  object JSON cannot carry, block their event loop, or swallow cancellation; other tasks they do
  as the oracle.
- `silent_agent` (Python): answers with whitespace only.
- `python store_thief.py` (an MCP agent): looks for results stores (from /, through /proc, in the
  current folder) and sets every case's utility to 1 in each it can open; a detached helper keeps
  trying after the agent has answered. Its answer lists what it found.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from tests.fakes.replay import gullible_agent, oracle_agent


async def forging_agent(case: Any) -> str:
    answer = await gullible_agent(case)
    from randori.vocabulary import Trace

    for trace in [o for o in gc.get_objects() if isinstance(o, Trace)]:
        for message in trace.messages:
            if message.tool_result is not None:
                message.tool_result.vectors_seen = []
    return answer


def _first_task(case: Any) -> bool:
    from tests.fakes.replay import _tasks

    found = _tasks().get(case.prompt.strip())
    return found is not None and found[1].id == "user_task_0"


async def bad_argument_agent(case: Any) -> str:
    if _first_task(case):
        await case.call("get_accounts", {"weird": object()})
    return await oracle_agent(case)


async def blocking_agent(case: Any) -> str:
    if _first_task(case):
        time.sleep(300)  # holds the event loop: nothing in this process runs any more
    return await oracle_agent(case)


async def deaf_agent(case: Any) -> str:
    if _first_task(case):
        while True:
            try:
                await asyncio.sleep(300)
            except asyncio.CancelledError:
                pass  # will not stop
    return await oracle_agent(case)


async def silent_agent(case: Any) -> str:
    return "  \n"
