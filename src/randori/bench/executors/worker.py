"""The worker side of `--executor processes` and `ray`: a `WorkerSetup` names what a run's cases
need (suites, model, agent, settings), and a `Worker` builds it once per worker process, in the
event loop it keeps for its whole life (a model's client is bound to the loop it first ran in).

Secrets never travel in a setup: the model's keys come from the worker's environment, as in the
driver. A secret the driver knows only as a value (a key given as an option, a password in a URL, a
key typed into an MCP agent's command line) is replaced in the setup by a placeholder, and its
value goes to the worker's environment as RANDORI_SECRET_<n>; the worker puts it back and, like
every variable with SECRET in its name, scrubs it from whatever it sends back."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from randori.agents.agent import AgentSpec
from randori.agents.models.spec import ModelSpec, spec_of
from randori.bench.cases import Case
from randori.bench.store import CaseResult
from randori.errors import UserError, scrub_secrets, secret_values

if TYPE_CHECKING:
    from randori.agents.models.shared_limits import Channel
    from randori.bench.executors.base import CaseRunner, RunSpec

SECRET_VAR = "RANDORI_SECRET_"
_PLACEHOLDER = re.compile(r"\x00RANDORI_SECRET_(\d+)\x00")


@dataclass(frozen=True)
class WorkerSetup:
    suites: tuple[str, ...]
    model: ModelSpec | None
    agent: tuple[str, str | None, float | None] | None  # an external agent's --agent text, version, limit
    max_steps: int
    attacker_base_url: str | None
    concurrency: int  # cases in flight in one worker
    max_tool_calls: int | None = None  # the built-in agent's cap per reply (None: its default)

    @classmethod
    def of(cls, run: RunSpec, workers: int) -> tuple[WorkerSetup, dict[str, str]]:
        """The setup of each of `workers` workers, and the environment they need (sealed secrets)."""
        seal = _Sealer()
        model = None
        if run.model is not None:
            spec = spec_of(run.model)
            model = replace(spec, options=seal(spec.options))
        setup = cls(suites=tuple(run.suites), model=model, agent=seal(agent_ref(run.agent)),
                    max_steps=run.max_steps, attacker_base_url=seal(run.attacker_base_url),
                    concurrency=max(1, -(-run.concurrency // workers)), max_tool_calls=run.agent.max_tool_calls)
        return setup, seal.env

    def build(self) -> RunSpec:
        """In the worker: the suites, model and agent of the setup (placeholders filled in)."""
        from randori.agents.external import get_agent
        from randori.bench.executors.base import RunSpec
        from randori.suites import ready_suite

        model = None
        if self.model is not None:
            model = replace(self.model, options=unseal(self.model.options)).build()
        agent = AgentSpec.capped(self.max_tool_calls)
        if self.agent is not None:
            spec, version, limit, options = unseal(self.agent)
            agent = get_agent(spec, version, limit, **options)
        suites = {n: ready_suite(n, reach=False) for n in self.suites}  # cases come planned: no vectors needed
        return RunSpec(suites=suites, model=model, max_steps=self.max_steps,
                       attacker_base_url=unseal(self.attacker_base_url), agent=agent, concurrency=self.concurrency)


def agent_ref(agent: AgentSpec) -> tuple[str, str | None, float, dict[str, Any]] | None:
    """How a worker builds the agent under test again with `get_agent` (None: the built-in one):
    the arguments `get_agent` was given, container options included."""
    if not agent.external:
        return None
    made_with = getattr(agent, "made_with", None)
    if made_with is None:
        raise UserError(f"the agent {agent.name} runs in this process only: use --executor inprocess")
    return made_with


class _Sealer:
    """Replaces every secret value in strings by a placeholder, collecting the values."""

    def __init__(self) -> None:
        self.secrets = secret_values()
        self.env: dict[str, str] = {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self.secrets:
                if secret in value:
                    n = self.secrets.index(secret)
                    self.env[f"{SECRET_VAR}{n}"] = secret
                    value = value.replace(secret, f"\x00{SECRET_VAR}{n}\x00")
            return value
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self(v) for v in value)
        return value


def unseal(value: Any) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: os.environ.get(f"{SECRET_VAR}{m.group(1)}", ""), value)
    if isinstance(value, dict):
        return {k: unseal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(unseal(v) for v in value)
    return value


class Worker:
    """One worker process's share of a run: built once, then runs the cases of every batch it gets,
    up to `concurrency` at once."""

    def __init__(self, setup: WorkerSetup):
        self.setup = setup
        self.runner: CaseRunner | None = None

    async def start(self, channel: Channel | None) -> None:
        import asyncio

        from randori.bench.casework import quiet_gc
        from randori.bench.executors.base import CaseRunner

        if channel is not None:
            from randori.agents.models.shared_limits import use_channel

            use_channel(channel)
        run = self.setup.build()
        self.model = run.model
        self.runner = CaseRunner(run)
        self.slots = asyncio.Semaphore(self.setup.concurrency)
        # The collector settings of a run, applied once for the worker's life: it does nothing else.
        # The context manager must stay referenced: a dropped one is finalized at once, and its
        # generator's `finally` put the default thresholds back (workers then collected 7 times as
        # often as a run in process).
        self.gc = quiet_gc()
        self.gc.__enter__()

    async def run(self, case: Case) -> CaseResult:
        assert self.runner is not None
        async with self.slots:
            return scrub_result(await self.runner.run(case))

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.aclose()
        if self.model is not None:
            await self.model.aclose()
        if self.runner is not None:
            self.gc.__exit__(None, None, None)


def scrub_result(result: CaseResult) -> CaseResult:
    """The row with every secret this worker knows masked: the driver may not know them all (a worker
    on another machine holds keys of its own)."""
    secrets = secret_values()
    if not secrets:
        return result
    if result.error_message:
        result.error_message = scrub_secrets(result.error_message, secrets)
    for name in ("messages", "diff", "injections", "attempts"):
        value = getattr(result, name)
        if value:
            text = json.dumps(value)
            clean = scrub_secrets(text, secrets, fragments=False)
            if clean != text:
                setattr(result, name, json.loads(clean))
    return result
