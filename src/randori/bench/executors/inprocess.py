"""The default executor: every case in the driver's own event loop, up to `concurrency` at once,
one case per batch (so each is admitted and claimed just before it starts)."""

from __future__ import annotations

import asyncio

from randori.bench.cases import Case
from randori.bench.executors.base import CaseRunner, Executor, RunSpec, Sink


class InProcess(Executor):
    name = "inprocess"

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()
        self.limit = 1
        self.busy = 0  # cases started and not yet reported (a task leaves `tasks` only after that)

    async def start(self, run: RunSpec, sink: Sink) -> None:
        self.runner = CaseRunner(run)
        self.sink = sink
        self.limit = max(1, run.concurrency)

    def capacity(self) -> int:
        return 1 if self.busy < self.limit else 0

    def submit(self, batch: list[Case]) -> None:
        for case in batch:
            self.busy += 1
            task = asyncio.create_task(self._one(case))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _one(self, case: Case) -> None:
        try:
            result = await self.runner.run(case)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # FatalModelError, or a bug outside the case's own guard
            self.busy -= 1
            self.sink.fail(e)
            return
        self.busy -= 1
        self.sink.row(result)

    async def close(self) -> None:
        for t in list(self.tasks):
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.runner.aclose()
