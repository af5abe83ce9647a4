"""User tasks (what the user asks) and injection tasks (what the attacker wants)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from randori.agents.messages import ToolCall, Trace

Difficulty = Literal["easy", "medium", "hard"]


class UserTask:
    """Subclass and set `id`, `prompt`; implement `ground_truth` and `utility`.

    `ground_truth_output` is the answer text a perfect agent gives (the oracle says it); tasks that
    ask a question check it in `utility`. `free_args` lists (function, argument) pairs whose value
    the task does not care about, exempting them from the exactness check in `validate.py`.
    """

    id: ClassVar[str]
    prompt: ClassVar[str]
    difficulty: ClassVar[Difficulty] = "easy"
    ground_truth_output: ClassVar[str] = ""
    free_args: ClassVar[frozenset[tuple[str, str]]] = frozenset()

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
