"""User tasks (what the user asks) and injection tasks (what the attacker wants)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from randori.agents.messages import ToolCall, Trace
from randori.tasks.answers import Needle

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
    """

    id: ClassVar[str]
    prompt: ClassVar[str]
    difficulty: ClassVar[Difficulty] = "easy"
    ground_truth_output: ClassVar[str] = ""
    free_args: ClassVar[frozenset[tuple[str, str]]] = frozenset()
    distractors: ClassVar[tuple[Needle, ...]] = ()
    tolerated_extras: ClassVar[tuple[Extra, ...]] = ()

    def ground_truth(self, env: Any) -> list[ToolCall]:
        raise NotImplementedError

    def utility(self, output: str, pre: Any, post: Any, trace: Trace) -> bool:
        raise NotImplementedError


class InjectionTask:
    """Subclass and set `id`, `goal`; implement `ground_truth` and `attack_succeeded`."""

    id: ClassVar[str]
    goal: ClassVar[str]
    difficulty: ClassVar[Difficulty] = "easy"
    ground_truth_output: ClassVar[str] = ""
    free_args: ClassVar[frozenset[tuple[str, str]]] = frozenset()

    def ground_truth(self, env: Any) -> list[ToolCall]:
        raise NotImplementedError

    def attack_succeeded(self, output: str, pre: Any, post: Any, trace: Trace) -> bool:
        raise NotImplementedError
