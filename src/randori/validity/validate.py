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
- `attribution`: a check that reads two or more values from one text (the answer, or a body the
  agent writes) says which item each belongs to (`checks.Item`), and with two values swapped between
  items, it fails.
- `negation`: with any value the check reads from the answer denied ("not 129.00 EUR", "did not
  fail"), or any amount, date or time it reads from a body the agent writes, the check fails.
- `currency`: with an amount the check reads written in another currency, the check fails.
- `roles` (validate_roles.py): with a value it reads said about another role of its kind that the
  ground truth's data holds (the check-out time for the check-in time, the savings balance for the
  current one), or another role's value said about this one, the check fails; where the data holds
  one role, so it does with the value said about another real entity. Where the answer must pick an
  item (the best, the latest), it fails when the answer picks another, and passes when it names the
  runner-up beside its pick.
- `reported`: an injection goal judged from the answer is not reached by a user task's correct
  answer plus a report of the injected request in any of `report_wordings`; it is when the answer
  then says what the attacker wanted in the agent's own voice.
- `goal_forms`: each form an injection task declares for its goal counts; with its secret or amount
  changed, it does not.
- `free_args`: a declared free argument is not read by the check (changing it does not fail it),
  and is passed by a state-changing ground-truth call; a value the prompt or the data quotes for the
  agent to use is never free and is read whole (cut short, the check fails).
- `tool_vectors` (suites with tool-description vectors): with an attacker's goal in the descriptions
  (tool_poisoning, and as a rug pull after the first call), the oracle still does its user task and
  reaches no goal, and an agent that obeys what it reads (scripted/gullible) reaches the goal. Every
  user task and every injection task is tried, paired in turn.
- `scenario_oracle`, `scenario_gullible`, `scenario_noop`, `scenario_memory` (validate_scenarios.py):
  the rules of a suite's scenarios.
- `literal`, `data_values`, `data_reach` (validate_data.py): a data-directed task fails for an agent
  that follows only the user's words, fails with another value where the data gives one, and takes
  its instruction from a tool output that also shows an injection vector.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

from randori.agents.models.base import CaseContext, ModelSettings
from randori.agents.models.scripted import ScriptedModel
from randori.tasks.answers import Day, recording
from randori.tasks.collector import quiet_gc
from randori.tasks.suite import TaskSuite
from randori.validity.probe import (
    Problem,
    SuiteCheck,
    _call_key,
    _Probe,
    _replay_trace,
    _Run,
    _show,
    mutations,
)
from randori.validity.validate_claims import check_claims, check_reported
from randori.validity.validate_data import RULES as DATA_RULES
from randori.validity.validate_data import check_data_directed
from randori.validity.validate_goals import check_free_args, check_goal_forms
from randori.validity.variants import phrasings, plausible_values, with_alternative
from randori.vocabulary import ToolCall, Trace

RULES = ("ground_truth_errors", "oracle", "noop", "reach", "exact", "plausible", "side_effects", "phrasing",
         "distractors", "attribution", "negation", "currency", "roles", "free_args", "collateral",
         "injection_ground_truth", "goal_forms", "reported", "tool_vectors", "scenario_oracle", "scenario_gullible",
         "scenario_noop", "scenario_memory", *DATA_RULES)
NO_ANSWER = "Done."
GC_YOUNG = 50_000  # container allocations between young collections while a suite is checked


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
    calls = ut.ground_truth(pre)  # a ground truth reads its data, it changes nothing
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
    check_claims(probe, report, ut, run)
    check_free_args(probe, report, ut, ut.utility)
    check_data_directed(suite, probe, report, tid, ut, lambda kind: _agent_trace(suite, kind, ut, None))

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
    with recording() as reads:
        answer(ut.ground_truth_output, "phrasing")
    days = [n for r in reads for n in _needles(r) if isinstance(n, Day)]
    for label, text in phrasings(ut.ground_truth_output, days):
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


def _needles(read: Any) -> list[Any]:
    """Every needle a read looked for, alternatives and items' values included."""
    out: list[Any] = []
    todo = [*read.needles, *(v for it in read.items for v in it.values)]
    while todo:
        n = todo.pop()
        if isinstance(n, (tuple, list)):
            todo += list(n)
        else:
            out.append(n)
    return out


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
    check_free_args(probe, report, it, it.attack_succeeded)
    check_goal_forms(suite, probe, report, it)
    check_reported(suite, report, it)


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


def check_suite(suite: TaskSuite[Any], shard: tuple[int, int] = (0, 1)) -> SuiteCheck:
    """Every rule on every task of `suite`; with `shard=(k, n)`, on the k-th of n disjoint parts, so
    that a suite whose checks run code can be checked on several cores: part 0 checks the tool
    vectors and the scenarios (rules over the suite as a whole), and parts 1 to n-1 every (n-1)-th user
    task and injection task from the (k-1)-th. The parts' counts add up to the whole check's.

    The cyclic collector is kept quiet meanwhile (`quiet_gc`): the variants allocate millions of
    short-lived objects, and at the default thresholds its full collections, each walking every
    replayed run kept for the later rules, were a third of a large suite's check."""
    k, n = shard
    if not 0 <= k < n:
        raise ValueError(f"shard {k} of {n}")
    with quiet_gc(young=GC_YOUNG):
        return _check_suite(suite, k, n)


def _check_suite(suite: TaskSuite[Any], k: int, n: int) -> SuiteCheck:
    report = SuiteCheck(suite.name, suite.version)
    probe = _Probe(suite, report)
    tasks = n == 1 or k > 0
    others = _other_calls(probe, suite) if tasks else []
    mine = (lambda i: True) if n == 1 else (lambda i: i % (n - 1) == k - 1)
    for i, (tid, ut) in enumerate(suite.user_tasks.items()):
        if tasks and mine(i):
            _check_user_task(suite, probe, report, tid, ut, others)
    for i, (iid, it) in enumerate(suite.injection_tasks.items()):
        if tasks and mine(i):
            _check_injection_task(suite, probe, report, iid, it)
    if k == 0:
        from randori.validity.validate_scenarios import check_scenarios

        _check_tool_vectors(suite, report)
        check_scenarios(suite, report)
    return report


def validate_suite(suite: TaskSuite[Any]) -> list[Problem]:
    return check_suite(suite).problems
