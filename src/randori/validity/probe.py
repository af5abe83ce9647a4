"""What every validity rule shares: the report of a suite's check (`SuiteCheck`, `Problem`) and the
probe that replays variants of a task's ground truth and asks its check about each (`_Probe`), with
the value mutations the rules try. `validate.py` runs the rules; `validate_claims.py` and
`validate_goals.py` hold the answer and goal rules."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from randori.registry import describe_failure, raised_at
from randori.tasks.environment import settled
from randori.tasks.suite import TaskSuite
from randori.validity.variants import ValuePool
from randori.vocabulary import Message, ToolCall, ToolResult, Trace

Judge = Callable[[str, Any, Any, Trace], bool]


@dataclass(frozen=True)
class Problem:
    task: str
    rule: str
    message: str
    suite: str = ""

    def __str__(self) -> str:
        where = f"{self.suite}/{self.task}" if self.suite else self.task
        return f"{where}: [{self.rule}] {self.message}"


@dataclass
class SuiteCheck:
    """Problems found, and per rule how many variants were tried and how many the checks got right."""
    suite: str
    version: str
    problems: list[Problem] = field(default_factory=list)
    tried: Counter[str] = field(default_factory=Counter)
    held: Counter[str] = field(default_factory=Counter)
    raised: set[tuple[str, str, type, str | None]] = field(default_factory=set)  # checks that raised, and where

    def verdict(self, rule: str, task: str, check: Judge, output: str, pre: Any, post: Any,
                trace: Trace) -> bool | None:
        """What `check` says, or None when it raised: a crashing check is a broken check."""
        try:
            return bool(check(output, pre, post, trace))
        except Exception as e:
            # One problem per check and place it raises at, however many rules' variants meet it.
            name, where = getattr(check, "__name__", "check"), raised_at(e)
            if (task, name, type(e), where) in self.raised:
                self.tried[rule] += 1
            else:
                self.raised.add((task, name, type(e), where))
                self.count(rule, False, task, f"check {name} raised {describe_failure(e)}")
            return None

    def count(self, rule: str, ok: bool, task: str = "", message: str = "") -> bool:
        self.tried[rule] += 1
        if ok:
            self.held[rule] += 1
        else:
            self.problems.append(Problem(task, rule, message, self.suite))
        return ok


def _replay_trace(calls: list[ToolCall], results: list[Any], output: str) -> Trace:
    msgs: list[Message] = []
    for c, r in zip(calls, results, strict=True):
        msgs.append(Message.assistant(tool_calls=[c]))
        msgs.append(Message.tool(r))
    msgs.append(Message.assistant(output))
    return Trace(messages=msgs)


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?$")
_TIME = re.compile(r"^\d{2}:\d{2}$")


def mutate(value: Any) -> Any:
    """One sentinel wrong value of the same type and size, or None when there is none."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return round(value + 1.0, 2)
    if isinstance(value, str):
        if _DATE.match(value):
            return (dt.date.fromisoformat(value) + dt.timedelta(days=1)).isoformat()
        if _DATETIME.match(value):
            d = dt.datetime.fromisoformat(value.replace(" ", "T")) + dt.timedelta(hours=1)
            sep = " " if " " in value else "T"
            return d.isoformat(sep=sep, timespec="minutes" if value.count(":") == 1 else "seconds")
        if _TIME.match(value):
            h, m = map(int, value.split(":"))
            return f"{(h + 1) % 24:02d}:{m:02d}"
        if "@" in value and " " not in value:
            return "x" + value
        # Replace rather than append: a check that tests "contains the invoice number" must still
        # notice a reference that lacks it.
        return "changed" if value != "changed" else "altered"
    if isinstance(value, list) and value:
        wrong = mutate(value[-1])
        return None if wrong is None else [*value[:-1], wrong]
    return None


def mutations(value: Any, *, grow_and_shrink: bool) -> list[Any]:
    """Sentinel wrong values to try. Lists also lose or gain an element when `grow_and_shrink`: a
    user task must notice a missing or an extra recipient, but an attacker's goal is still met when
    the agent adds someone (so injection checks are probed with same-size replacements only)."""
    out = [m for m in (mutate(value),) if m is not None]
    if grow_and_shrink and isinstance(value, list) and value:
        if len(value) >= 2:
            out.append(value[:-1])
        extra = mutate(value[-1])
        if extra is not None:
            out.append([*value, extra])
    return out


def _state(env: Any) -> Any:
    return env.model_dump(mode="json")


def _call_key(call: ToolCall) -> str:
    return call.function + json.dumps(call.args, sort_keys=True, default=str)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class _Run:
    """A task's ground truth replayed once: its results, the state before each call, the end state."""
    calls: list[ToolCall]
    results: list[ToolResult]
    before: list[Any]  # snapshot before each call
    env: Any
    state: Any  # the end state, dumped
    changing: list[int]  # positions of the calls that changed the state
    end: Any = None  # snapshot of the end state, taken when a variant first replays from there


class _Probe:
    """Replays variants of a ground truth and asks a check about each outcome."""

    def __init__(self, suite: TaskSuite[Any], report: SuiteCheck):
        self.suite = suite
        self.report = report
        self.template = suite.template
        self.pre = suite.load_env()  # checks only read the pre-state, so one serves every variant
        self.pre_state = _state(self.pre)
        self.pool = ValuePool(self.pre_state)
        self.runs: dict[str, _Run] = {}

    def run(self, task: Any) -> _Run:
        if task.id not in self.runs:
            calls = task.ground_truth(self.suite.load_env())
            env = self.suite.load_env()
            before, results, changing = [], [], []
            state = self.pre_state
            for i, c in enumerate(calls):
                before.append(self.template.snapshot(env))
                results += self.suite.replay(env, [c])
                after = _state(env)
                if after != state:
                    changing.append(i)
                state = after
            self.runs[task.id] = _Run(calls, results, before, env, state, changing)
        return self.runs[task.id]

    def variant(self, run: _Run, at: int, calls: list[ToolCall]) -> tuple[Any, list[ToolResult], Any]:
        """Replay `calls` (which share the ground truth's first `at` calls) from the state reached at
        `at`: the environment, all results, the end state."""
        if at >= len(run.before) and run.end is None:
            run.end = self.template.snapshot(run.env)  # thousands of extra calls start from here
        env = self.template.restore(run.before[at] if at < len(run.before) else run.end)
        results = run.results[:at] + self.suite.replay(env, calls[at:])
        return env, results, _state(env)

    def judge(self, judge: Judge, output: str, env: Any, state: Any, calls: list[ToolCall],
              results: list[ToolResult], task: str, rule: str) -> bool | None:
        """The check's verdict, or None when it raised (reported as a problem of `rule`)."""
        trace = _replay_trace(calls, results, output)
        with settled(dumps={id(self.pre): self.pre_state, id(env): state}):
            return self.report.verdict(rule, task, judge, output, self.pre, env, trace)

    def wrong_calls(self, task: Any, label: str, rule: str, values: Callable[[Any, str], list[Any]],
                    judge: Judge) -> None:
        """Each argument of each state-changing ground-truth call swapped for each of
        `values(value, arg)`: when the end state differs from the ground truth's, the check must say no."""
        run = self.run(task)
        for i in run.changing:
            call = run.calls[i]
            for arg, value in call.args.items():
                if (call.function, arg) in task.free_args:
                    continue
                for wrong in values(value, arg):
                    mutated = [*run.calls[:i], call.model_copy(update={"args": {**call.args, arg: wrong}}),
                               *run.calls[i + 1:]]
                    env, results, state = self.variant(run, i, mutated)
                    if state == run.state:
                        continue  # the argument does not change the outcome (a search query, a filter)
                    passed = self.judge(judge, task.ground_truth_output, env, state, mutated, results, task.id, rule)
                    if passed is not None:
                        self.report.count(rule, not passed, task.id,
                                          f"{label} still true when {call.function}.{arg} is {_show(wrong)} "
                                          f"instead of {_show(value)}")
