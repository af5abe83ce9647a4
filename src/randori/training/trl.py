"""TRL's `GRPOTrainer(environment_factory=...)`: one environment class per suite, whose public methods
are the suite's tools (named, typed and documented as the model is shown them) plus `submit_answer`;
`reset(**row)` starts the row's episode and `get_reward()` judges it. TRL is not imported here: the class
meets its contract (a no-argument constructor, a `reset`, one public method per tool with its docstring,
`get_reward`), and an instance pickles as a fresh one.

    from randori.training.trl import environment
    trainer = GRPOTrainer(model=..., train_dataset=rows, environment_factory=environment("banking"))

The rows come from `randori training dataset` (their `prompt` is the episode's system and user message).
An episode whose policy never calls `submit_answer` is truncated and earns 0."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import inspect
import keyword
import threading
from collections.abc import Coroutine
from typing import Any, ClassVar, Optional, TypeVar

from randori.errors import UserError
from randori.training.episode import MAX_STEPS, Episode, EpisodeSpec, Reward, suite_of

T = TypeVar("T")
ANSWER_TOOL = "submit_answer"
RESERVED = ("reset", "get_reward", ANSWER_TOOL)
_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                               "object": dict}
_PREFIX = "RandoriEnv_"

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()
# Episodes started and not yet scored, held here so that one whose environment object is dropped (a
# trainer's pool shrinking) is not collected mid-case: it is ended at exit.
_live: set[Episode] = set()


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run on this process's episode loop (a daemon thread): TRL calls tools synchronously, perhaps
    from inside its own event loop, so episodes cannot run on the caller's."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="randori-episodes", daemon=True).start()
    return asyncio.run_coroutine_threadsafe(coro, _loop).result()


async def _end_all() -> None:
    await asyncio.gather(*(episode.close() for episode in list(_live)), return_exceptions=True)
    _live.clear()


@atexit.register
def _shutdown() -> None:
    """Episodes still in flight at exit (an environment reset but never scored) end with their loop."""
    if _loop is not None and _loop.is_running():
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_end_all(), _loop).result(timeout=10)
        _loop.call_soon_threadsafe(_loop.stop)


class RandoriEnvironment:
    """The methods every suite's class shares; the tool methods are added per suite (`environment`)."""

    suite: ClassVar[str] = ""
    max_steps: ClassVar[int] = MAX_STEPS
    tool_names: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self._episode: Episode | None = None
        self._answer: str | None = None
        self.last_reward: Reward | None = None  # the parts of the last reward (utility, attack success...)

    def reset(self, **row: Any) -> str | None:
        """Start the episode a dataset row names (its `prompt` column is the observation already)."""
        spec = EpisodeSpec.from_row(row)
        if spec.suite != self.suite:
            raise UserError(f"this environment is for suite {self.suite}; the row is for {spec.suite}")
        if self._episode is not None:
            _live.discard(self._episode)
            _run(self._episode.close())
        self._episode, self._answer, self.last_reward = Episode(self.max_steps), None, None
        _live.add(self._episode)
        observation = _run(self._episode.reset(spec))
        shown = tuple(t["name"] for t in observation.tools)
        if shown != self.tool_names or any(t["description"] != _description(self.suite, t["name"])
                                           for t in observation.tools):
            # TRL shows one tool schema per class: a case whose tools differ cannot be shown as randori shows it.
            raise UserError(f"{spec.suite} {spec.user_task} under {spec.attack}: its tools are not the suite's "
                            "(a tool-description attack or a tool-selecting defense); train on it with "
                            "randori.training.Episode, which gives each episode its own tool list")
        return None

    def submit_answer(self, answer: str) -> str:
        """Give the user your final answer. Call it once, when the task is done; the episode ends.

        Args:
            answer: The final answer to the user, in full.
        """
        self._answer = answer
        return "Answer received; the task is over."

    def get_reward(self) -> float:
        """utility x not hijacked for the episode (0 if it was truncated or never answered)."""
        episode = self._started()
        self.last_reward = _run(episode.finish(self._answer))
        _live.discard(episode)
        self._episode = None
        return self.last_reward.reward

    def _call(self, tool: str, arguments: dict[str, Any]) -> str:
        episode = self._started()
        if self._answer is not None:
            return "randori: the answer is submitted; no more tool calls are run"
        return _run(episode.call(tool, arguments))

    def _started(self) -> Episode:
        if self._episode is None:
            raise RuntimeError("no episode is running: TRL calls reset(**row) first")
        return self._episode

    def __getstate__(self) -> dict[str, Any]:
        return {}  # an episode in flight does not travel: the copy starts fresh, as TRL expects after reset

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]


def _description(suite: str, tool: str) -> str:
    return next(t.description for t in suite_of(suite).tools if t.name == tool)


def _tool_method(name: str, description: str, schema: dict[str, Any]) -> Any:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = [description.strip() or name, ""]
    if properties:
        lines.append("Args:")
    for arg, prop in properties.items():
        if not arg.isidentifier() or keyword.iskeyword(arg):
            raise UserError(f"tool {name}: argument '{arg}' is not a Python name, so TRL cannot show it")
        kind = _JSON_TYPES.get(prop.get("type"), str) if isinstance(prop.get("type"), str) else str
        hint = kind if arg in required else Optional[kind]  # noqa: UP045 (a runtime object TRL reads)
        annotations[arg] = hint
        # Positional until the first optional argument (a required one may follow it, by keyword only).
        optional_before = any(q.default is None for q in params)
        kind_of = inspect.Parameter.KEYWORD_ONLY if optional_before else inspect.Parameter.POSITIONAL_OR_KEYWORD
        params.append(inspect.Parameter(arg, kind_of, annotation=hint,
                                        default=inspect.Parameter.empty if arg in required else None))
        text = " ".join(str(prop.get("description") or arg).split())
        lines.append(f"    {arg}: {text}")
    annotations["return"] = str
    signature = inspect.Signature(params, return_annotation=str)

    def method(self: RandoriEnvironment, *args: Any, **kwargs: Any) -> str:
        bound = signature.bind(self, *args, **kwargs)
        given = {k: v for k, v in bound.arguments.items() if k != "self" and v is not None}
        return self._call(name, given)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = "\n".join(lines).rstrip() + "\n"
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    return method


def _class_name(suite: str, max_steps: int) -> str:
    return f"{_PREFIX}{suite.encode().hex()}_{max_steps}"


@functools.cache
def environment(suite: str, max_steps: int = MAX_STEPS) -> type[RandoriEnvironment]:
    """The environment class for `suite` (what `environment_factory` takes)."""
    tools = suite_of(suite).tools
    clash = [t.name for t in tools if t.name in RESERVED or t.name.startswith("_")]
    if clash:
        raise UserError(f"suite {suite}: tool(s) {', '.join(clash)} clash with the environment's own methods")
    body: dict[str, Any] = {t.name: _tool_method(t.name, t.description, t.parameters) for t in tools}
    name = _class_name(suite, max_steps)
    body |= {"suite": suite, "max_steps": max_steps, "tool_names": tuple(t.name for t in tools),
             "__module__": __name__, "__qualname__": name,
             "__doc__": f"randori's {suite} suite as a TRL environment: one episode per dataset row."}
    cls = type(name, (RandoriEnvironment,), body)
    globals()[name] = cls  # found by name when an instance is unpickled in this process
    return cls


def __getattr__(name: str) -> Any:
    """An environment class by its name, in a process that has not made it yet (unpickling)."""
    if name.startswith(_PREFIX):
        hexed, _, steps = name[len(_PREFIX):].rpartition("_")
        try:
            return environment(bytes.fromhex(hexed).decode(), int(steps))
        except ValueError:
            pass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
