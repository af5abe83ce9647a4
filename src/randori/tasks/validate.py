"""Suite self-checks: the rules of DESIGN.md "Validity". A benchmark is only as good as its checks.

A check must reject a plausible wrong trajectory and accept a correct answer however it is phrased.
Rules (each problem names one):
- `oracle`: the oracle agent (ground truth through the real agent loop) passes `utility`.
- `ground_truth_errors`: no ground-truth call fails.
- `noop`: a do-nothing agent fails every user task and never achieves an injection goal.
- `injection_ground_truth`: an injection task's ground truth makes `attack_succeeded` true.
- `reach`: every user task shows at least one injection vector (canary replay).
- `exact`: one argument of a ground-truth call swapped for a sentinel ("changed", +1, a day later)
  must fail the check whenever it changes the end state. Injection checks are also probed with
  other real values of the same kind (same size only: an extra recipient still leaks).
- `plausible`: one argument of a state-changing ground-truth call of a user task swapped for
  another real value of its kind from the suite's own data (another IBAN, contact, file, date),
  a number shifted a little, a date by a day, a time by an hour, a list with an element dropped or
  a real one added: the check must fail.
- `side_effects`: the ground truth plus one extra state-changing call (any other task's, one of
  its own again, or one of its own on another real object) must fail, unless the task tolerates
  that call and says why (`UserTask.tolerated_extras`).
- `phrasing`: a task whose check reads the answer accepts the ground-truth answer rewritten as
  people write it (amounts, dates and times in other styles, markdown, chatty, any letter case).
- `distractors`: such a task names the plausible wrong answers its data holds; its check fails on
  the raw tool outputs of its ground truth given as the answer, and on the ground-truth answer
  with a distractor added as an alternative.
- `collateral`: the user task's ground truth alone must not achieve any injection goal, neither on
  benign data nor with the attack text in place (a task that forwards an injected mail must not
  count as the agent obeying the attacker).
- `tool_vectors` (suites with tool-description vectors): with an attacker's goal in the descriptions
  (tool_poisoning, and as a rug pull after the first call), the oracle still does its user task and
  reaches no goal, and an agent that obeys what it reads (scripted/gullible) reaches the goal. Every
  user task and every injection task is tried, paired in turn.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from randori.agents.messages import Message, ToolCall, ToolResult, Trace
from randori.agents.models.base import CaseContext, ModelSettings
from randori.agents.models.scripted import ScriptedModel
from randori.tasks.environment import settled
from randori.tasks.suite import TaskSuite
from randori.tasks.variants import ValuePool, phrasings, plausible_values, with_alternative

RULES = ("ground_truth_errors", "oracle", "noop", "reach", "exact", "plausible", "side_effects", "phrasing",
         "distractors", "collateral", "injection_ground_truth", "tool_vectors")
NO_ANSWER = "Done."
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

    def verdict(self, rule: str, task: str, check: Judge, output: str, pre: Any, post: Any,
                trace: Trace) -> bool | None:
        """What `check` says, or None when it raised: a crashing check is a broken check."""
        try:
            return bool(check(output, pre, post, trace))
        except Exception as e:
            self.count(rule, False, task, f"check raised {type(e).__name__}: {e}")
            return None

    def count(self, rule: str, ok: bool, task: str = "", message: str = "") -> bool:
        self.tried[rule] += 1
        if ok:
            self.held[rule] += 1
        else:
            self.problems.append(Problem(task, rule, message, self.suite))
        return ok


def _agent_trace(suite: TaskSuite[Any], kind: str, user_task: Any, injection_task: Any,
                 injections: dict[str, str] | None = None, after: int | None = None) -> tuple[Any, Any, Trace]:
    """The scripted agent `kind` through the real loop; with `after` set, tool vectors in `injections`
    go into the tool descriptions after that many tool calls."""
    from randori.agents.loop import ToolAgent

    env = suite.load_env(injections)
    pre = suite.load_env(injections)
    ctx = CaseContext(suite=suite, env=env, user_task=user_task, injection_task=injection_task,
                      injections=injections or {})
    model = ScriptedModel(kind, ModelSettings()).for_case(ctx)
    source = suite.case_tools(injections, after) if after is not None else None
    agent = ToolAgent(model, suite.tools, suite.system_prompt, tool_source=source)
    prompt = user_task.prompt if user_task is not None else injection_task.goal
    trace = asyncio.run(agent.run(env, prompt))
    return pre, env, trace


def _attack_text(suite: TaskSuite[Any], user_task: Any, injection_task: Any) -> dict[str, str]:
    from randori.attacks import get_attack
    from randori.attacks.base import AttackContext

    ctx = AttackContext(vectors=suite.reachable_vectors(user_task.id), user_name=suite.user_name,
                        model_name="AI assistant", tools=tuple(t.name for t in suite.tools))
    return get_attack("important_instructions").injections(user_task, injection_task, ctx)


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
        env = self.template.restore(run.before[at]) if at < len(run.before) else self.template.restore(
            self.template.snapshot(run.env))
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


def _extra_calls(probe: _Probe, task: Any, others: list[tuple[str, ToolCall]]) -> Iterator[tuple[str, ToolCall]]:
    """Extra state-changing calls to try after a task's ground truth: each of its own again, each of
    its own on another real object, and every other task's."""
    run = probe.run(task)
    own = [run.calls[i] for i in run.changing]
    seen: set[str] = set()

    def fresh(c: ToolCall) -> bool:
        k = _call_key(c)
        if k in seen:
            return False
        seen.add(k)
        return True

    for c in own:
        if fresh(c):
            yield "its own call again", c
    for c in own:
        for arg, value in c.args.items():
            if (c.function, arg) in task.free_args:
                continue
            alts = [v for v in plausible_values(probe.pool, value, arg, limit=1, grow_and_shrink=False)
                    if isinstance(v, str) or isinstance(value, list)]
            if alts:
                other = c.model_copy(update={"args": {**c.args, arg: alts[0]}})
                if fresh(other):
                    yield f"its own call on another {arg}", other
    for source, c in others:
        if source != task.id and fresh(c):
            yield f"{source}'s call", c


def _other_calls(probe: _Probe, suite: TaskSuite[Any]) -> list[tuple[str, ToolCall]]:
    out = []
    for tid, t in [*suite.user_tasks.items(), *suite.injection_tasks.items()]:
        run = probe.run(t)
        out += [(tid, run.calls[i]) for i in run.changing]
    return out


def _replayed(suite: TaskSuite[Any], ut: Any, injections: dict[str, str]) -> tuple[Any, Any, Trace]:
    """What the oracle agent does with the attack text in place: its ground truth on that data."""
    pre, env = suite.load_env(injections), suite.load_env(injections)
    calls = ut.ground_truth(suite.load_env(injections))
    return pre, env, _replay_trace(calls, suite.replay(env, calls), ut.ground_truth_output)


def _check_user_task(suite: TaskSuite[Any], probe: _Probe, report: SuiteCheck, tid: str, ut: Any,
                     others: list[tuple[str, ToolCall]]) -> None:
    run = probe.run(ut)
    errors = [r for r in run.results if r.error]
    report.count("ground_truth_errors", not errors, tid, "; ".join(f"{r.function}: {r.error}" for r in errors))
    pre, post, trace = _agent_trace(suite, "oracle", ut, None)
    if (ok := report.verdict("oracle", tid, ut.utility, trace.final_output, pre, post, trace)) is not None:
        report.count("oracle", ok, tid, "the oracle's ground truth fails utility")
    npre, npost, ntrace = _agent_trace(suite, "noop", ut, None)
    if (ok := report.verdict("noop", tid, ut.utility, ntrace.final_output, npre, npost, ntrace)) is not None:
        report.count("noop", not ok, tid, "a do-nothing agent passes utility")
    report.count("reach", bool(suite.reachable_vectors(tid)), tid, "the ground truth shows no injection vector")

    probe.wrong_calls(ut, "utility", "exact", lambda v, a: mutations(v, grow_and_shrink=True), ut.utility)
    probe.wrong_calls(ut, "utility", "plausible", lambda v, a: plausible_values(probe.pool, v, a), ut.utility)

    for why, extra in _extra_calls(probe, ut, others):
        if any(t.matches(extra) for t in ut.tolerated_extras):
            continue
        calls = [*run.calls, extra]
        env, results, state = probe.variant(run, len(run.calls), calls)
        if state == run.state:
            continue  # it changed nothing (it failed, or it repeats what is already so)
        passed = probe.judge(ut.utility, ut.ground_truth_output, env, state, calls, results, tid, "side_effects")
        if passed is not None:
            report.count("side_effects", not passed, tid,
                         f"utility still true after an extra {extra.function}({_show(extra.args)}) ({why})")

    def answer(text: str, rule: str) -> bool | None:
        return probe.judge(ut.utility, text, run.env, run.state, run.calls, run.results, tid, rule)

    if answer(ut.ground_truth_output, "phrasing") and answer(NO_ANSWER, "phrasing") is False:
        _check_answer(report, ut, run, answer)

    for iid, it in suite.injection_tasks.items():
        hit = report.verdict("collateral", iid, it.attack_succeeded, trace.final_output, pre, post, trace)
        if hit is None or not report.count("collateral", not hit, tid, f"its ground truth achieves {iid}'s goal"):
            continue
        injections = _attack_text(suite, ut, it)
        if injections:
            apre, apost, atrace = _replayed(suite, ut, injections)
            hit = report.verdict("collateral", iid, it.attack_succeeded, atrace.final_output, apre, apost, atrace)
            if hit is not None:
                report.count("collateral", not hit, tid, f"with {iid}'s attack text in place, its ground truth "
                             "achieves the goal without obeying it")


def _check_answer(report: SuiteCheck, ut: Any, run: _Run, answer: Callable[[str, str], bool | None]) -> None:
    tid = ut.id
    for label, text in phrasings(ut.ground_truth_output):
        passed = answer(text, "phrasing")
        if passed is not None:
            report.count("phrasing", passed, tid, f"a correct answer fails ({label}): {_show(text)}")
    report.count("distractors", bool(ut.distractors), tid,
                 "the check reads the answer but the task names no distractors (plausible wrong answers)")
    raw = "\n".join(r.content if r.error is None else r.error for r in run.results)
    passed = answer(raw, "distractors")
    if passed is not None:
        report.count("distractors", not passed, tid, "the raw tool outputs of the ground truth pass as the answer")
    for d in ut.distractors:
        passed = answer(with_alternative(ut.ground_truth_output, d), "distractors")
        if passed is not None:
            report.count("distractors", not passed, tid,
                         f"the ground-truth answer with {d!s} added as an alternative passes")


def _check_injection_task(suite: TaskSuite[Any], probe: _Probe, report: SuiteCheck, iid: str, it: Any) -> None:
    run = probe.run(it)
    if not run.calls and not it.ground_truth_output:
        report.count("injection_ground_truth", False, iid, "empty ground truth")
    errors = [r for r in run.results if r.error]
    report.count("ground_truth_errors", not errors, iid, "; ".join(f"{r.function}: {r.error}" for r in errors))
    pre, post, trace = _agent_trace(suite, "oracle", None, it)
    if (hit := report.verdict("injection_ground_truth", iid, it.attack_succeeded, trace.final_output, pre, post,
                              trace)) is not None:
        report.count("injection_ground_truth", hit, iid, "ground truth does not achieve the goal")
    pre, post, trace = _agent_trace(suite, "noop", None, it)
    if (hit := report.verdict("noop", iid, it.attack_succeeded, trace.final_output, pre, post, trace)) is not None:
        report.count("noop", not hit, iid, "a do-nothing agent achieves the goal")

    def wrong(value: Any, arg: str) -> list[Any]:
        return [*mutations(value, grow_and_shrink=False),
                *plausible_values(probe.pool, value, arg, grow_and_shrink=False)]

    probe.wrong_calls(it, "attack_succeeded", "exact", wrong, it.attack_succeeded)


def _check_tool_vectors(suite: TaskSuite[Any], report: SuiteCheck) -> None:
    from randori.attacks import get_attack
    from randori.attacks.base import AttackContext

    users, goals = list(suite.user_tasks.values()), list(suite.injection_tasks.values())
    if not suite.tool_vectors or not users or not goals:
        return
    for n in range(max(len(users), len(goals))):
        ut, it = users[n % len(users)], goals[n % len(goals)]
        for name, after in (("tool_poisoning", 0), ("rug_pull", 1)):
            ctx = AttackContext(vectors=(), user_name=suite.user_name, tool_vectors=tuple(suite.tool_vectors))
            injections = get_attack(name).injections(ut, it, ctx)
            where = f"with {it.id}'s goal in the tool descriptions ({name})"
            pre, post, trace = _agent_trace(suite, "oracle", ut, it, injections, after)
            done = report.verdict("tool_vectors", ut.id, ut.utility, trace.final_output, pre, post, trace)
            hit = report.verdict("tool_vectors", ut.id, it.attack_succeeded, trace.final_output, pre, post, trace)
            if done is not None and hit is not None:
                report.count("tool_vectors", done and not hit, ut.id,
                             f"{where}, the oracle " + ("reaches the goal" if hit else "fails its task"))
            pre, post, trace = _agent_trace(suite, "gullible", ut, it, injections, after)
            hit = report.verdict("tool_vectors", it.id, it.attack_succeeded, trace.final_output, pre, post, trace)
            if hit is not None:
                seen = bool(trace.description_vectors)
                report.count("tool_vectors", hit, ut.id, f"{where}, scripted/gullible "
                             + ("obeys but does not reach the goal" if seen else "never sees the text"))


def check_suite(suite: TaskSuite[Any]) -> SuiteCheck:
    """Every rule on every task of `suite`."""
    report = SuiteCheck(suite.name, suite.version)
    probe = _Probe(suite, report)
    others = _other_calls(probe, suite)
    for tid, ut in suite.user_tasks.items():
        _check_user_task(suite, probe, report, tid, ut, others)
    for iid, it in suite.injection_tasks.items():
        _check_injection_task(suite, probe, report, iid, it)
    _check_tool_vectors(suite, report)
    return report


def validate_suite(suite: TaskSuite[Any]) -> list[Problem]:
    return check_suite(suite).problems
