"""The executor seam. The driver (this process) plans, claims each case in the store, admits it under
the spend cap and is the store's only writer, so resume, keys and reports do not depend on where a
case ran. An `Executor` runs batches of cases the driver hands it and gives back one `CaseResult` per
case, as each finishes. The unit of work is `casework.run_case(case, suite, model, ...)`; a worker
process builds what it needs for it (suites, model, agent, attacks, defenses) once, from names and
settings (`worker.WorkerSetup`), never from the driver's objects.

A worker that dies loses only the cases of its batches that had not finished: they go back to the
front of the queue (already claimed and admitted) and run again elsewhere. A case that takes its
worker down `MAX_LOSSES` times is stored as an error instead (it would take down every worker)."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from randori.agents.agent import BUILTIN, AgentSpec
from randori.bench.cases import Case
from randori.bench.casework import AdmitFn, ProgressFn
from randori.bench.store import CaseResult, Store
from randori.errors import AuthError, FatalModelError, UserError

if TYPE_CHECKING:
    from randori.agents.defenses import Defense
    from randori.agents.models.base import ChatModel
    from randori.attacks import Attack
    from randori.tasks.suite import TaskSuite

MAX_LOSSES = 3


@dataclass
class RunSpec:
    """What every case of one `run_cases` call shares."""

    suites: dict[str, TaskSuite[Any]]
    model: ChatModel | None
    max_steps: int = 20
    attacker_base_url: str | None = None
    agent: AgentSpec = BUILTIN
    concurrency: int = 8  # cases in flight at once, over all workers


class Sink(ABC):
    """What an executor tells the driver. Called in the driver's event loop."""

    @abstractmethod
    def row(self, result: CaseResult) -> None: ...

    @abstractmethod
    def lost(self, keys: Sequence[str], why: str) -> None:
        """These cases were handed out but will not finish (their worker died)."""

    @abstractmethod
    def fail(self, error: BaseException) -> None:
        """The run must stop: a fatal provider error, a bug, every worker gone."""

    @abstractmethod
    def poke(self) -> None:
        """The executor has room again (a worker started)."""


class Executor(ABC):
    name = "executor"

    def warm(self, suites: Sequence[str] = (), models: Sequence[str] = ()) -> None:
        """Start what takes long to start (workers) now, before the run is planned; `suites` names the
        suites the run will likely need, and `models` its models (provider/model), for the workers to
        load them and their providers' libraries meanwhile. Optional: `start` does it otherwise. An
        executor warmed and never started leaves nothing behind when this process exits."""
        return None

    def discard(self) -> None:
        """This executor will not be started after all: stop at once whatever `warm` started."""
        return None

    @abstractmethod
    async def start(self, run: RunSpec, sink: Sink) -> None: ...

    @abstractmethod
    def capacity(self) -> int:
        """How many cases the next batch may hold now (0: none until something finishes)."""

    @abstractmethod
    def submit(self, batch: list[Case]) -> None: ...

    @abstractmethod
    async def close(self) -> None:
        """Stop every worker (also on Ctrl-C and errors): nothing of this run keeps running."""

    def status(self) -> str:
        """For the progress line: the workers alive."""
        return ""


class CaseRunner:
    """Runs cases against one set of suites, model and agent; defenses and attacks are resolved from
    the case's names once, and an adaptive attack's attacker is made once per run."""

    def __init__(self, run: RunSpec):
        self.run_spec = run
        self.defenses: dict[str, Defense] = {}
        self.attacks: dict[str, Attack] = {}
        self.attackers: dict[str, Any] = {}

    async def run(self, case: Case) -> CaseResult:
        from randori.agents.defenses import get_defense
        from randori.attacks import get_attack
        from randori.bench.casework import run_case

        r = self.run_spec
        if case.defense not in self.defenses:
            self.defenses[case.defense] = get_defense(case.defense)
        attack = attacker = None
        if case.kind == "attacked" and case.attack:
            if case.attack not in self.attacks:
                self.attacks[case.attack] = get_attack(case.attack)
                if self.attacks[case.attack].kind == "adaptive":
                    self.attackers[case.attack] = self.attacks[case.attack].make_attacker(  # type: ignore[attr-defined]
                        r.attacker_base_url)
            attack, attacker = self.attacks[case.attack], self.attackers.get(case.attack)
        return await run_case(case, r.suites[case.suite], r.model, max_steps=r.max_steps,
                              defense=self.defenses[case.defense], attack=attack, attacker=attacker, agent=r.agent)

    async def aclose(self) -> None:
        for a in self.attackers.values():
            await a.aclose()
        await self.run_spec.agent.aclose()  # an external agent's idle worker processes


def lost_result(case: Case, message: str) -> CaseResult:
    return CaseResult(key=case.key, kind=case.kind, suite=case.suite, suite_version=case.suite_version,
                      user_task=case.user_task, injection_task=case.injection_task, attack=case.attack,
                      defense=case.defense, model=case.model, settings=case.settings, repeat=case.repeat,
                      agent=case.agent, agent_version=case.agent_version, status="error",
                      error_category="internal", error_message=message, injections=dict(case.injections),
                      attacker_knowledge=case.attacker_knowledge or None, split=case.split,
                      data_directed=case.data_directed if case.user_task else None)


def setup_failed(message: str) -> UserError:
    """A worker that could not build the run (a suite, agent or provider missing there): one line."""
    return UserError(f"a worker could not start the run: {message}")


def setup_message(e: BaseException) -> str:
    from randori.registry import describe_exception

    return str(e) if isinstance(e, UserError) else describe_exception(e)


def fatal(category: str, message: str) -> FatalModelError:
    """A worker's fatal provider error, raised again in the driver (exceptions do not cross processes)."""
    return AuthError(message) if category == "auth" else FatalModelError(category, message)


class Driver(Sink):
    """Hands the cases to an executor in batches and stores what comes back."""

    def __init__(self, cases: Sequence[Case], executor: Executor, store: Store, run_id: int,
                 on_result: ProgressFn | None, admit: AdmitFn | None):
        self.todo = deque(cases)
        self.again: deque[Case] = deque()  # claimed and admitted, lost with a worker: they go first
        self.running: dict[str, list[Case]] = {}
        self.losses: Counter[str] = Counter()
        self.executor, self.store, self.run_id = executor, store, run_id
        self.on_result, self.admit = on_result, admit
        self.refused = False
        self.error: BaseException | None = None
        self.wake = asyncio.Event()

    async def run(self, run: RunSpec) -> None:
        await self.executor.start(run, self)
        try:
            while True:
                self.wake.clear()
                await self._fill()
                if self.error is not None:
                    raise self.error
                if not self.running and not self.again and (self.refused or not self.todo):
                    return
                await self.wake.wait()
        finally:
            await self.executor.close()

    async def _fill(self) -> None:
        while self.error is None and (want := self.executor.capacity()) > 0:
            batch: list[Case] = []
            while len(batch) < want and self.error is None:
                if self.again:
                    batch.append(self.again.popleft())
                    continue
                if self.refused or not self.todo:
                    break
                case = self.todo.popleft()
                if self.admit is not None:
                    verdict = asyncio.ensure_future(self.admit(case))
                    await asyncio.sleep(0)  # a cap that decides at once does so now
                    if batch and not verdict.done():  # it waits for cases in flight: send those first
                        self._submit(batch)
                        batch = []
                    if not await verdict:
                        self.refused = True
                        break
                if not self.store.claim(self.run_id, case.key):
                    self._report(None)
                    continue
                batch.append(case)
            if not batch:
                return
            self._submit(batch)

    def _submit(self, batch: list[Case]) -> None:
        for c in batch:
            self.running.setdefault(c.key, []).append(c)
        self.executor.submit(batch)

    def _report(self, result: CaseResult | None) -> None:
        if self.on_result is not None:
            self.on_result(result)

    def row(self, result: CaseResult) -> None:
        cases = self.running.get(result.key)
        if not cases:
            return
        cases.pop()
        if not cases:
            del self.running[result.key]
        try:
            self.store.add(self.run_id, [result])
            self._report(result)
        except BaseException as e:  # the store refused: the run stops, as it would in process
            self.fail(e)
        self.wake.set()

    def lost(self, keys: Sequence[str], why: str) -> None:
        for key in keys:
            cases = self.running.get(key)
            if not cases:
                continue
            case = cases.pop()
            if not cases:
                del self.running[key]
            self.losses[key] += 1
            if self.losses[key] < MAX_LOSSES:
                self.again.append(case)
                continue
            self.running.setdefault(key, []).append(case)
            self.row(lost_result(case, f"{why}, {MAX_LOSSES} times while running this case"))
        self.wake.set()

    def fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        self.wake.set()

    def poke(self) -> None:
        self.wake.set()
