"""The program `capabilities`' planner writes: its steps (each argument a literal or a reference to an
earlier step's output), how a planner's answer is read into them, and the reference program of a task
whose solution is known (what the scripted models answer, and what coverage reasons about)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from randori.agents.defenses.sensitivity import argument_kind
from randori.vocabulary import ToolCall

if TYPE_CHECKING:
    from randori.tasks.suite import TaskSuite


@dataclass(frozen=True)
class Ref:
    step: int
    question: str


@dataclass
class Step:
    number: int
    function: str
    literals: dict[str, Any] = field(default_factory=dict)
    refs: dict[str, Ref] = field(default_factory=dict)
    user_named: bool = False

    def describe(self) -> str:
        args = [f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in self.literals.items()]
        args += [f"{k}=<step {r.step}>" for k, r in self.refs.items()]
        named = " [named by the user]" if self.user_named else ""
        return f"{self.number}. {self.function}({', '.join(args)}){named}"


def describe_call(call: ToolCall) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)[:60]}" for k, v in call.args.items())
    return f"{call.function}({args})"


def parse_steps(raw: Any, known: set[str], note: Callable[[str], None]) -> list[Step]:
    """The planner's steps; a step calling an unknown tool is dropped, a reference to no earlier step
    leaves its step unable to run (both noted). Steps keep the numbers the planner gave them."""
    steps: list[Step] = []
    for number, entry in enumerate(raw if isinstance(raw, list) else [], 1):
        if not isinstance(entry, dict) or entry.get("function") not in known:
            note(f"dropped program step {number}: not a call of an available tool")
            continue
        literals = entry["args"] if isinstance(entry.get("args"), dict) else {}
        refs: dict[str, Ref] = {}
        for arg, ref in (entry["refs"] if isinstance(entry.get("refs"), dict) else {}).items():
            source = ref.get("from_step") if isinstance(ref, dict) else None
            if not isinstance(source, int) or isinstance(source, bool) or not 1 <= source < number:
                note(f"program step {number}: {arg} refers to no earlier step; the step cannot run")
                refs[arg] = Ref(0, "")
                continue
            refs[arg] = Ref(source, str(ref.get("question") or f"the value of {arg}"))
        steps.append(Step(number, entry["function"], {k: v for k, v in literals.items() if k not in refs}, refs,
                          entry.get("user_named") is True))
    return steps


@dataclass
class ReferenceProgram:
    """The program an ideal planner writes for a task whose solution is known (its ground truth): what
    the scripted models answer the planner, and what `outside_design` reasons about."""
    steps: list[dict[str, Any]]
    answers: dict[str, tuple[str, str, Any]]  # reader question -> (tool, argument, the ground truth's value)
    # (function, argument, sensitive kind or None): the values read from data the user pointed to
    delegated: list[tuple[str, str, str | None]]


def reference_program(suite: TaskSuite[Any], env: Any, request: str, calls: list[ToolCall]) -> ReferenceProgram:
    """Each argument of `calls` the request states (or a flag, or any argument of the first call) is a
    literal; any other is read from the latest earlier step whose output holds it (the step just
    before when none does: a computed value). A step is `user_named` when the request names what it
    reads (states one of its text arguments: a URL, a channel, a search's words) or when a sensitive
    value of the task comes through it: the ideal planner points to the objects the user's task
    needs such values from. `env` is replayed on (pass a copy); calls that run code are not replayed
    (their output holds no value a later call needs)."""
    from randori.agents.defenses.structured import value_in_text

    outputs: list[str] = []
    for c in calls:
        tool = suite.tool_map.get(c.function)
        outputs.append("" if tool is None or tool.runs_code else suite.replay(env, [c])[0].content)
    steps: list[dict[str, Any]] = []
    answers: dict[str, tuple[str, str, Any]] = {}
    through: list[dict[str, set[int]]] = []  # per step, per argument read from data: the steps it came through
    for i, c in enumerate(calls):
        literals: dict[str, Any] = {}
        refs: dict[str, dict[str, Any]] = {}
        came: dict[str, set[int]] = {}
        for arg, value in c.args.items():
            if i == 0 or value is None or isinstance(value, bool) or value_in_text(value, request):
                literals[arg] = value
                continue
            j = next((j for j in range(i - 1, -1, -1) if value_in_text(value, outputs[j])), i - 1)
            question = f"the {arg} to use in step {i + 1} ({c.function})"
            refs[arg] = {"from_step": j + 1, "question": question}
            answers[question] = (c.function, arg, value)
            came[arg] = {j}.union(*through[j].values())
        through.append(came)
        steps.append({"function": c.function, "args": literals, "refs": refs})
    named = {i for i, c in enumerate(calls)
             if any(isinstance(v, str) and value_in_text(v, request) for v in c.args.values())}
    for i, c in enumerate(calls):
        tool = suite.tool_map.get(c.function)
        for arg, sources in through[i].items():
            if argument_kind(tool, c.function, arg, c.args[arg]) is not None:
                named |= sources
    delegated = [(c.function, arg, argument_kind(suite.tool_map.get(c.function), c.function, arg, c.args[arg]))
                 for i, c in enumerate(calls) for arg, sources in through[i].items() if sources & named]
    for i, step in enumerate(steps):
        step["user_named"] = i in named
    return ReferenceProgram(steps, answers, delegated)
