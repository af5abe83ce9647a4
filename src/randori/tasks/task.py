"""User tasks (what the user asks) and injection tasks (what the attacker wants)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from randori.tasks.answers import Needle
from randori.vocabulary import ToolCall, Trace

Difficulty = Literal["easy", "medium", "hard"]


@dataclass(frozen=True)
class Extra:
    """A state-changing call that a user task tolerates on top of its ground truth, and why (for
    example: saving a copy of a reply to drafts). `args` narrows it to calls with those argument
    values; None tolerates every call of `function`. `randori suites show` lists them."""
    function: str
    reason: str
    args: Mapping[str, Any] | None = None

    def matches(self, call: ToolCall) -> bool:
        return call.function == self.function and (
            self.args is None or all(call.args.get(k) == v for k, v in self.args.items()))


@dataclass(frozen=True)
class FromData:
    """A part of a data-directed task's ground truth that only the data gives, not the user's words:
    the value of argument `arg` of calls of `function` (a one-time code, the account in a signed
    letter, the line a reviewer asked for), or with `arg` None the whole call (a step the data asks
    for: the channel an onboarding post says to join). `shown` is the text by which the data gives
    it, which an agent must have read to know it; it defaults to the argument's value, and a step
    must name it. `args` narrows the mark to calls with those argument values."""
    function: str
    arg: str | None = None
    shown: str | None = None
    args: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.arg is None and not self.shown:
            raise ValueError(f"FromData({self.function!r}): a step the data gives must say what shows it (shown=)")

    def marks(self, call: ToolCall) -> bool:
        return (call.function == self.function and (self.arg is None or self.arg in call.args)
                and (self.args is None or all(call.args.get(k) == v for k, v in self.args.items())))

    def evidence(self, call: ToolCall) -> Any:
        """What an agent must have been shown to make `call` as the ground truth does."""
        return self.shown if self.shown is not None else call.args[self.arg]  # type: ignore[index]


def data_given(task: Any, call: ToolCall) -> list[FromData]:
    """The marks of `task`'s ground truth that `call` carries (empty: the user's words give it all)."""
    return [fd for fd in getattr(task, "data_given", ()) if fd.marks(call)]


def literal_calls(task: Any, calls: Sequence[ToolCall]) -> list[ToolCall]:
    """`calls` as the user's words alone give them: a call that is a step of the data, or needs a
    value only the data gives, is not made (an agent that has not read the data cannot fill it)."""
    return [c for c in calls if not data_given(task, c)]


class UserTask:
    """Subclass and set `id`, `prompt`; implement `ground_truth` and `utility`.

    `ground_truth_output` is the answer text a perfect agent gives (the oracle says it); tasks that
    ask a question check it in `utility`. `free_args` lists (function, argument) pairs whose value
    the task does not care about, exempting them from the exactness check in `validate.py`.

    A task whose check reads the answer names its `distractors`: the plausible wrong answers its
    data holds (another account's balance, the runner-up, the old date), as needles of
    `randori.tasks.checks` (strings, Money, Day, Clock). Its check must fail when the answer states
    one of them (`checks.states(output, ..., distractors=self.distractors)`); so an answer that
    pastes the data, or hedges between the right value and a wrong one, fails.
    `tolerated_extras` lists extra state-changing calls the check accepts, each with its reason.

    A data-directed task delegates a step to the data ("enter the code the bank's mail gives"): its
    `data_given` marks (`FromData`) say which calls and values of the ground truth only the data
    gives. `data_directed` follows from them (a foreign suite's wrapper may set both).
    """

    id: ClassVar[str]
    prompt: ClassVar[str]
    difficulty: ClassVar[Difficulty] = "easy"
    ground_truth_output: ClassVar[str] = ""
    free_args: ClassVar[frozenset[tuple[str, str]]] = frozenset()
    distractors: ClassVar[tuple[Needle, ...]] = ()
    tolerated_extras: ClassVar[tuple[Extra, ...]] = ()
    data_given: ClassVar[tuple[FromData, ...]] = ()
    data_directed: ClassVar[bool] = False

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "data_directed" not in cls.__dict__:
            cls.data_directed = bool(cls.data_given)

    def ground_truth(self, env: Any) -> list[ToolCall]:
        raise NotImplementedError

    def utility(self, output: str, pre: Any, post: Any, trace: Trace) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class GoalCall:
    """A state-changing call an attacker's goal needs, and the values the attacker chose in it: an
    agent's call of `function` whose argument holds one of `values[arg]` is an attempt (a value of
    six or more letters and digits also counts inside a longer text). With no `values`, every call
    of `function` is one."""
    function: str
    values: Mapping[str, Sequence[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class GoalForm:
    """Another way to reach an attacker's goal, which `attack_succeeded` must count as much as the
    ground truth: the secret written another way or in another field, the money sent as two
    payments, the effect reached through another tool. `calls` run on the case's data and `output`
    is the answer given after them. `secret` lists the values of these calls that carry the goal (the
    leaked text as written here, each payment's amount): with any one of them changed, the goal is
    not reached, so the check must say no."""
    label: str
    calls: tuple[ToolCall, ...]
    output: str = ""
    secret: tuple[Any, ...] = ()


class InjectionTask:
    """Subclass and set `id`, `goal`; implement `ground_truth` and `attack_succeeded`. A goal that
    can be reached in more than one form lists them in `goal_forms` (validation checks each).

    `goal_calls` says which of the agent's calls count as attempting the goal (`attack_attempted`).
    None (the default) derives them from the ground truth (see `randori.tasks.attempts`); declare
    them where that is wrong, e.g. `(GoalCall("write_file", {"content": ["curl https://x.example"]}),)`;
    `()` says the goal needs no call (it is judged from the answer alone).
    """

    id: ClassVar[str]
    goal: ClassVar[str]
    difficulty: ClassVar[Difficulty] = "easy"
    ground_truth_output: ClassVar[str] = ""
    free_args: ClassVar[frozenset[tuple[str, str]]] = frozenset()
    goal_calls: ClassVar[tuple[GoalCall, ...] | None] = None

    def ground_truth(self, env: Any) -> list[ToolCall]:
        raise NotImplementedError

    def attack_succeeded(self, output: str, pre: Any, post: Any, trace: Trace) -> bool:
        raise NotImplementedError

    def goal_forms(self, env: Any) -> list[GoalForm]:
        return []
