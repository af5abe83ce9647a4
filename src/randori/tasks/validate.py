"""Suite self-checks: the rules of DESIGN.md "Validity". A benchmark is only as good as its checks.

Rules (each problem names one):
- `oracle`: the oracle agent (ground truth through the real agent loop) passes `utility`.
- `ground_truth_errors`: no ground-truth call fails.
- `noop`: a do-nothing agent fails every user task and never achieves an injection goal.
- `injection_ground_truth`: an injection task's ground truth makes `attack_succeeded` true.
- `reach`: every user task shows at least one injection vector (canary replay).
- `exact`: changing one argument of a ground-truth call in a way that changes the final state must
  make the check fail (catches checks that ignore the amount, recipient, date, id...).
- `collateral`: the user task's ground truth alone must not achieve any injection goal, neither on
  benign data nor with the attack text in place (a task that forwards an injected mail must not
  count as the agent obeying the attacker).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from randori.agents.messages import Message, ToolCall, Trace
from randori.agents.models.base import CaseContext, ModelSettings
from randori.agents.models.scripted import ScriptedModel
from randori.tasks.suite import TaskSuite


@dataclass(frozen=True)
class Problem:
    task: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.task}: [{self.rule}] {self.message}"


def _agent_trace(suite: TaskSuite[Any], kind: str, user_task: Any, injection_task: Any,
                 injections: dict[str, str] | None = None) -> tuple[Any, Any, Trace]:
    from randori.agents.loop import ToolAgent

    env = suite.load_env(injections)
    pre = suite.load_env(injections)
    ctx = CaseContext(suite=suite, env=env, user_task=user_task, injection_task=injection_task,
                      injections=injections or {})
    model = ScriptedModel(kind, ModelSettings()).for_case(ctx)
    agent = ToolAgent(model, suite.tools, suite.system_prompt)
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
    """One plausible wrong value of the same type and size, or None when there is none."""
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
    """Wrong values to try. Lists also lose or gain an element when `grow_and_shrink`: a user task
    must notice a missing or an extra recipient, but an attacker's goal is still met when the
    agent adds someone (so injection checks are probed with same-size replacements only)."""
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


def _check_exact(suite: TaskSuite[Any], task: Any, judge: Any, label: str, *,
                 grow_and_shrink: bool) -> list[Problem]:
    problems: list[Problem] = []
    env0 = suite.load_env()
    calls = task.ground_truth(env0)
    base_env = suite.load_env()
    suite.replay(base_env, calls)
    base_state = _state(base_env)
    for i, call in enumerate(calls):
        for arg, value in call.args.items():
            if (call.function, arg) in task.free_args:
                continue
            for wrong in mutations(value, grow_and_shrink=grow_and_shrink):
                mutated = [c if j != i else c.model_copy(update={"args": {**c.args, arg: wrong}})
                           for j, c in enumerate(calls)]
                pre = suite.load_env()
                env = suite.load_env()
                results = suite.replay(env, mutated)
                if _state(env) == base_state:
                    continue  # the argument does not change the outcome (a search query, a filter)
                trace = _replay_trace(mutated, results, task.ground_truth_output)
                try:
                    passed = judge(task.ground_truth_output, pre, env, trace)
                except Exception as e:  # a crashing check is a broken check
                    problems.append(Problem(task.id, "exact", f"check raised {type(e).__name__}: {e}"))
                    continue
                if passed:
                    problems.append(Problem(
                        task.id, "exact",
                        f"{label} still true when {call.function}.{arg} is {wrong!r} instead of {value!r}"))
    return problems


def validate_suite(suite: TaskSuite[Any]) -> list[Problem]:
    problems: list[Problem] = []
    for tid, ut in suite.user_tasks.items():
        env = suite.load_env()
        results = suite.replay(env, ut.ground_truth(suite.load_env()))
        for r in results:
            if r.error:
                problems.append(Problem(tid, "ground_truth_errors", f"{r.function}: {r.error}"))
        oracle = pre, post, trace = _agent_trace(suite, "oracle", ut, None)
        if not ut.utility(trace.final_output, pre, post, trace):
            problems.append(Problem(tid, "oracle", "the oracle's ground truth fails utility"))
        pre, post, trace = _agent_trace(suite, "noop", ut, None)
        if ut.utility(trace.final_output, pre, post, trace):
            problems.append(Problem(tid, "noop", "a do-nothing agent passes utility"))
        if not suite.reachable_vectors(tid):
            problems.append(Problem(tid, "reach", "the ground truth shows no injection vector"))
        problems += _check_exact(suite, ut, ut.utility, "utility", grow_and_shrink=True)
        # The user's own task must not fulfil an attacker's goal, or attack success is meaningless.
        pre, post, trace = oracle
        for iid, it in suite.injection_tasks.items():
            if it.attack_succeeded(trace.final_output, pre, post, trace):
                problems.append(Problem(tid, "collateral", f"its ground truth achieves {iid}'s goal"))
                continue
            injections = _attack_text(suite, ut, it)
            if not injections:
                continue
            apre, apost, atrace = _agent_trace(suite, "oracle", ut, None, injections)
            if it.attack_succeeded(atrace.final_output, apre, apost, atrace):
                problems.append(Problem(tid, "collateral", f"with {iid}'s attack text in place, its ground "
                                        "truth achieves the goal without obeying it"))
    for iid, it in suite.injection_tasks.items():
        env = suite.load_env()
        calls = it.ground_truth(suite.load_env())
        if not calls and not it.ground_truth_output:
            problems.append(Problem(iid, "injection_ground_truth", "empty ground truth"))
        for r in suite.replay(env, calls):
            if r.error:
                problems.append(Problem(iid, "ground_truth_errors", f"{r.function}: {r.error}"))
        pre, post, trace = _agent_trace(suite, "oracle", None, it)
        if not it.attack_succeeded(trace.final_output, pre, post, trace):
            problems.append(Problem(iid, "injection_ground_truth", "ground truth does not achieve the goal"))
        pre, post, trace = _agent_trace(suite, "noop", None, it)
        if it.attack_succeeded(trace.final_output, pre, post, trace):
            problems.append(Problem(iid, "noop", "a do-nothing agent achieves the goal"))
        problems += _check_exact(suite, it, it.attack_succeeded, "attack_succeeded", grow_and_shrink=False)
    return problems
