"""randori's prompt-injection cases as a `verifiers` environment (verifiers >= 0.4, `verifiers.v1`).

    vf-eval randori-injection -m MODEL --env.taskset.suite banking --env.taskset.split train

or, in Python, `load_environment(suite="banking", split="train")`, which returns the `vf.Env`.

One task per row of `randori.training.dataset` (the rows of one split: a held-out goal never reaches
`train`). Each rollout gets its own tool server (a task-scoped `vf.Toolset`, one process per rollout)
that plays the row's `randori.training.Episode`: the suite's tools as randori shows them for that case
(a tool-description attack's texts included), every call run through the episode (the same runtime,
injected texts and defense as a benchmark run), and `submit_answer`, which ends the episode and judges
it. The judged `Reward` travels to the host in the rollout's own `vf.State` (the state channel verifiers
keeps per rollout), where the task's `@vf.reward` reads it: utility x not hijacked, 0 when truncated
(no answer submitted, or more than `max_steps` tool calls). Its parts are the rollout's metrics.

The default seat runs verifiers' `null` harness (a chat loop with the MCP tools and nothing else: no
shell) in the `subprocess` runtime; `--env.agent.harness.id` and `--env.agent.runtime.type` choose
others.
"""

from __future__ import annotations

import inspect
import itertools
import keyword
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any

import verifiers.v1 as vf
from pydantic import WithJsonSchema
from verifiers.v1.harnesses.null import NullHarnessConfig

from randori.errors import UserError
from randori.tasks.splits import DEFAULT_SEED, check_split
from randori.training import dataset
from randori.training.episode import MAX_STEPS, Episode, EpisodeSpec, Observation, planned, suite_of
from randori.training.trl import ANSWER_TOOL

ENV_ID = "randori-injection"


class RandoriData(vf.TaskData):
    """One dataset row: the episode's spec (`prompt`/`system_prompt` hold what `reset` shows)."""

    suite: str
    user_task: str
    injection_task: str | None = None
    attack: str | None = None
    defense: str = "none"
    seed: int = 0
    split: str | None = None
    split_seed: str | None = None

    def spec(self) -> EpisodeSpec:
        return EpisodeSpec.from_row(self.model_dump())


class RandoriState(vf.State):
    """The rollout's judged reward, written by its tool server when the policy submits its answer.
    Until then the episode counts as truncated (reward 0)."""

    answered: bool = False
    reward: float = 0.0
    utility: bool | None = None
    attack_success: bool | None = None
    injection_seen: bool | None = None
    attempted: bool | None = None
    truncated: bool = True
    status: str = ""
    error: str | None = None


class RandoriToolsetConfig(vf.ToolsetConfig):
    max_steps: int = MAX_STEPS
    """Tool calls an episode may make; one more truncates it (reward 0)."""


class RandoriToolset(vf.Toolset[RandoriToolsetConfig, RandoriState]):
    """The tools of one rollout's episode. Task-scoped (`Task.toolsets`): verifiers starts one server
    process per rollout, so an episode is never shared by two rollouts."""

    TOOL_PREFIX = None  # the suite's tool names as they are, the names a benchmark run shows

    def __init__(self, config: RandoriToolsetConfig) -> None:
        super().__init__(config)
        self.episode: Episode | None = None
        self.observation: Observation | None = None
        self.answered = False  # this process serves one rollout: set once submit_answer judged its episode

    async def setup_task(self, task: RandoriData) -> None:
        self.episode = Episode(self.config.max_steps)
        self.observation = await self.episode.reset(task.spec())

    def register(self, mcp: Any) -> None:
        super().register(mcp)  # submit_answer
        if self.observation is None:
            raise UserError("randori's tool server got no task: it is task-scoped (Task.toolsets), not shared")
        for tool in self.observation.tools:
            if tool["name"] == ANSWER_TOOL:
                raise UserError(f"suite tool {ANSWER_TOOL} clashes with the environment's own")
            mcp.add_tool(self._tool(tool["name"], tool["parameters"]), name=tool["name"],
                         description=tool["description"], structured_output=False)

    def _tool(self, name: str, schema: dict[str, Any]) -> Any:
        """A function MCP can register for one suite tool: each argument advertised with the schema
        randori gives it, and passed to the episode as the model sent it (`Any`: no coercion)."""
        required = set(schema.get("required", ()))
        bad = [a for a in schema.get("properties", {}) if not a.isidentifier() or keyword.iskeyword(a) or a[0] == "_"]
        if bad:
            raise UserError(f"tool {name}: argument(s) {', '.join(bad)} cannot be MCP tool parameters here")
        params = [inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY,
                                    annotation=Annotated[Any, WithJsonSchema(prop)],
                                    default=inspect.Parameter.empty if arg in required else None)
                  for arg, prop in schema.get("properties", {}).items()]

        async def call(**arguments: Any) -> str:
            if self.answered:
                return "randori: the answer is submitted; no more tool calls are run"
            assert self.episode is not None
            return await self.episode.call(name, {k: v for k, v in arguments.items() if v is not None})

        call.__name__ = name
        call.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
        return call

    @vf.tool(name=ANSWER_TOOL)
    async def submit_answer(self, answer: str) -> str:
        """Give the user your final answer, in full. Call it once, when the task is done: the episode ends."""
        if self.answered:
            return "randori: the answer was already submitted"
        assert self.episode is not None
        reward = await self.episode.finish(answer)
        self.answered = True
        state = self.state
        state.answered, state.reward, state.truncated = True, reward.reward, reward.truncated
        state.utility, state.attack_success = reward.utility, reward.attack_success
        state.injection_seen, state.attempted = reward.injection_seen, reward.attempted
        state.status, state.error = reward.status, reward.error
        return "Answer received; the task is over."


class RandoriTaskConfig(vf.TaskConfig):
    tools: RandoriToolsetConfig = RandoriToolsetConfig()


class RandoriTask(vf.Task[RandoriData, RandoriState, RandoriTaskConfig]):
    @property
    def key(self) -> str:
        return self.data.id or self.hash

    @classmethod
    def toolsets(cls, config: RandoriTaskConfig) -> list[vf.Toolset]:
        return [RandoriToolset(config.tools)]

    @vf.stop
    async def answered(self, trace: vf.Trace) -> bool:
        """The episode is judged: no further model turn is needed."""
        return trace.state.answered

    @vf.reward
    async def reward(self, trace: vf.Trace) -> float:
        """randori's defender reward: utility x not hijacked (0 if truncated, failed or unanswered)."""
        return trace.state.reward

    @vf.metric
    async def parts(self, trace: vf.Trace) -> dict[str, float]:
        state = trace.state
        judged = {k: getattr(state, k) for k in ("utility", "attack_success", "injection_seen", "attempted")}
        return {"truncated": float(state.truncated), **{k: float(v) for k, v in judged.items() if v is not None}}


class RandoriTasksetConfig(vf.TasksetConfig):
    suite: str = "banking"
    split: str | None = "train"
    """train, val or test (None: every case of the suite)."""
    split_seed: str = DEFAULT_SEED
    attack: str = "important_instructions"
    defense: str = "none"
    benign: bool = True
    """Also the user tasks without an injection."""
    limit: int | None = None
    """At most this many rows, in the suite's order."""
    task: RandoriTaskConfig = RandoriTaskConfig()


class RandoriTaskset(vf.Taskset[RandoriTask, RandoriTasksetConfig]):
    def __init__(self, config: RandoriTasksetConfig) -> None:
        super().__init__(config)
        # An unknown suite, split, attack or defense is a UserError now, not in the middle of a run.
        specs = list(self._specs())
        if not specs:
            raise UserError(f"suite {config.suite} has no case in split {config.split} with these options")
        for attacked in (False, True):
            planned(next((s for s in specs if (s.injection_task is not None) == attacked), specs[0]))

    def _specs(self) -> Iterator[EpisodeSpec]:
        c = self.config
        suite_of(c.suite)
        if c.split is not None:
            check_split(c.split)
        if c.limit is not None and c.limit < 1:
            raise UserError(f"limit is a number of rows >= 1, not {c.limit}")
        specs = dataset.specs(c.suite, split=c.split, split_seed=c.split_seed, attacks=(c.attack,),
                              defense=c.defense, benign=c.benign)
        return itertools.islice(specs, c.limit)

    def load(self) -> Iterator[RandoriTask]:
        # A row's prompt comes from resetting its episode; verifiers iterates tasksets inside its event
        # loop, so the rows are made on a thread of their own.
        with ThreadPoolExecutor(1, thread_name_prefix="randori-rows") as pool:
            for spec in self._specs():
                [row] = pool.submit(dataset.rows, [spec]).result()
                system, user = row.pop("prompt")
                name = "/".join(str(row[k]) for k in ("suite", "user_task", "injection_task", "attack",
                                                      "defense", "seed"))
                data = RandoriData(id=name, name=name, system_prompt=system["content"], prompt=user["content"],
                                   **row)
                yield RandoriTask(data, self.config.task)


class RandoriEnvConfig(vf.SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(harness=NullHarnessConfig(id="null"), runtime=vf.SubprocessConfig())
    """The seat defaults to verifiers' tool-only chat loop on this machine (no shell for the model)."""


class RandoriEnv(vf.SingleAgentEnv, vf.Env[RandoriEnvConfig]):
    """verifiers' single-agent env with the seat's defaults above."""


def load_environment(suite: str = "banking", split: str | None = "train", attack: str = "important_instructions",
                     defense: str = "none", benign: bool = True, limit: int | None = None,
                     **kwargs: Any) -> vf.Env:
    """The environment over `suite`'s rows of `split`. `kwargs` set the taskset's other fields
    (`split_seed`, `task={"tools": {"max_steps": 10}}`) and the env's (`agent={"max_turns": 30}`...)."""
    fields = set(RandoriTasksetConfig.model_fields)
    taskset = {"id": ENV_ID, "suite": suite, "split": split, "attack": attack, "defense": defense,
               "benign": benign, "limit": limit, **{k: kwargs.pop(k) for k in list(kwargs) if k in fields}}
    return vf.load_environment(vf.resolve_env_config({"taskset": taskset, **kwargs}))


__all__ = ["RandoriEnv", "RandoriTaskset", "load_environment"]


if __name__ == "__main__":  # verifiers starts each rollout's tool server as `python -m randori_injection`
    RandoriToolset.run()
