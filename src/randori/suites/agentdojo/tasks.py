"""AgentDojo's user and injection tasks behind randori's task interface. Ground truths, prompts and
checks are the package's own objects; only the call format is translated."""

from __future__ import annotations

from typing import Any

from randori.suites.agentdojo.marks import Marks
from randori.tasks.task import Difficulty, InjectionTask, UserTask
from randori.vocabulary import ToolCall, Trace


def tool_calls(calls: list[Any]) -> list[ToolCall]:
    """AgentDojo `FunctionCall`s -> randori `ToolCall`s (ground truths use plain arguments only)."""
    return [ToolCall(function=c.function, args=dict(c.args), id=c.id or "") for c in calls]


def function_calls(trace: Trace) -> list[Any]:
    """The calls of a randori trace in AgentDojo's format (its trace-based checks read them)."""
    from agentdojo.functions_runtime import FunctionCall

    return [FunctionCall(function=c.function, args=dict(c.args), id=c.id or None) for c in trace.tool_calls]


def _difficulty(task: Any) -> Difficulty:
    name = str(getattr(getattr(task, "DIFFICULTY", None), "name", "easy")).lower()
    return name if name in ("easy", "medium", "hard") else "easy"  # type: ignore[return-value]


class AgentDojoUserTask(UserTask):
    """One AgentDojo user task. `utility` is AgentDojo's verdict, computed as its benchmark computes it:
    the trace-based check when the task has one, else the state-based one. `source` is the AgentDojo
    suite it belongs to (AgentDojo's attacks are made for a suite). `marks` are randori's reading of
    what only the task's data gives (`randori.suites.agentdojo.marks`)."""

    def __init__(self, task: Any, source: Any, marks: Marks | None = None):
        self.task = task
        self.source = source
        self.id = task.ID  # type: ignore[misc]
        self.prompt = task.PROMPT  # type: ignore[misc]
        self.difficulty = _difficulty(task)  # type: ignore[misc]
        self.ground_truth_output = task.GROUND_TRUTH_OUTPUT  # type: ignore[misc]
        self.reads = marks.reads if marks else ()
        self.data_given = marks.given if marks else ()  # type: ignore[misc]
        self.data_directed = bool(self.data_given)  # type: ignore[misc]

    def ground_truth(self, env: Any) -> list[ToolCall]:
        return [*(c.model_copy() for c in self.reads), *tool_calls(self.task.ground_truth(env))]

    def utility(self, output: str, pre: Any, post: Any, trace: Trace) -> bool:
        verdict = self.task.utility_from_traces(output, pre, post, function_calls(trace))
        if verdict is None:
            verdict = self.task.utility(output, pre, post)
        return bool(verdict)


class AgentDojoInjectionTask(InjectionTask):
    """One AgentDojo injection task. `attack_succeeded` is AgentDojo's `security` (which is True when
    the attacker succeeded), trace-based when the task has such a check."""

    def __init__(self, task: Any):
        self.task = task
        self.id = task.ID  # type: ignore[misc]
        self.goal = task.GOAL  # type: ignore[misc]
        self.difficulty = _difficulty(task)  # type: ignore[misc]
        self.ground_truth_output = getattr(task, "GROUND_TRUTH_OUTPUT", "")  # type: ignore[misc]

    def ground_truth(self, env: Any) -> list[ToolCall]:
        return tool_calls(self.task.ground_truth(env))

    def attack_succeeded(self, output: str, pre: Any, post: Any, trace: Trace) -> bool:
        verdict = self.task.security_from_traces(output, pre, post, function_calls(trace))
        if verdict is None:
            verdict = self.task.security(output, pre, post)
        return bool(verdict)
