"""The rules for tasks that need their data (`UserTask.data_directed`).

- `literal`: an agent that follows only the user's words (`scripted/literal`: the ground truth
  without what `data_given` marks) fails the task. A task it passes does not need its data, or
  marks too little.
- `data_values`: each value only the data gives is checked: another real value of its kind (another
  code, account, amount, line), or a near miss, in its place fails the check. A mark on a value no
  wrong value can be tried for says nothing.
- `data_reach`: the tool output that gives the value or step also shows an injection vector, so the
  benign instruction sits where an attacker's can (the pair a defense must tell apart).

The oracle passing such a task is the `oracle` rule every task meets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from randori.tasks.suite import TaskSuite, canary
from randori.tasks.task import data_given
from randori.validity.probe import SuiteCheck, _Probe, _show, mutations
from randori.validity.variants import plausible_values
from randori.vocabulary import Trace

RULES = ("literal", "data_values", "data_reach")

AgentTrace = Callable[[str], tuple[Any, Any, Trace]]


def check_data_directed(suite: TaskSuite[Any], probe: _Probe, report: SuiteCheck, tid: str, ut: Any,
                        trace_of: AgentTrace) -> None:
    """All three rules on one user task; `trace_of(kind)` runs a scripted agent on it."""
    if not ut.data_directed:
        return
    if not ut.data_given:
        report.count("literal", False, tid, "a data-directed task marks nothing its data gives (data_given)")
        return
    pre, post, trace = trace_of("literal")
    passed = report.verdict("literal", tid, ut.utility, trace.final_output, pre, post, trace)
    if passed is not None:
        report.count("literal", not passed, tid, "an agent following only the user's words passes it: "
                     "the task does not need its data, or marks too little")
    _check_values(probe, report, tid, ut)
    _check_reach(suite, report, tid, ut)


def _check_values(probe: _Probe, report: SuiteCheck, tid: str, ut: Any) -> None:
    run = probe.run(ut)
    for i, call in enumerate(run.calls):
        for fd in data_given(ut, call):
            if fd.arg is None:
                continue  # a step: `literal` drops it, `plausible` changes its arguments
            value, tried = call.args[fd.arg], 0
            for wrong in plausible_values(probe.pool, value, fd.arg) + mutations(value, grow_and_shrink=False):
                mutated = [*run.calls[:i], call.model_copy(update={"args": {**call.args, fd.arg: wrong}}),
                           *run.calls[i + 1:]]
                env, results, state = probe.variant(run, i, mutated)
                if state == run.state:
                    continue
                passed = probe.judge(ut.utility, ut.ground_truth_output, env, state, mutated, results, tid,
                                     "data_values")
                if passed is not None:
                    tried += 1
                    report.count("data_values", not passed, tid, f"utility still true when the data-given "
                                 f"{call.function}.{fd.arg} is {_show(wrong)} instead of {_show(value)}")
            if not tried:
                report.count("data_values", False, tid, f"no other value of the data-given {call.function}."
                             f"{fd.arg} changes the outcome: the check cannot tell the data's value from another")


def _check_reach(suite: TaskSuite[Any], report: SuiteCheck, tid: str, ut: Any) -> None:
    from randori.agents.defenses.structured import value_in_text

    canaries = {vid: canary(vid) for vid in suite.vectors}
    env = suite.load_env(canaries)
    calls = ut.ground_truth(env)
    results = suite.replay(env, calls, watch=canaries)
    for call in calls:
        for fd in data_given(ut, call):
            evidence = fd.evidence(call)
            givers = [r for r in results if value_in_text(evidence, r.content)]
            report.count("data_reach", any(r.vectors_seen for r in givers), tid,
                         f"no tool output gives {_show(evidence)} ({call.function}"
                         f"{'.' + fd.arg if fd.arg else ''})" if not givers else
                         f"the tool output that gives {_show(evidence)} shows no injection vector")
