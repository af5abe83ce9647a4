"""The unit of work of a run: one case, start to stored row (`run_case`), and what every executor
shares around it (the progress and admission callbacks, `quiet_gc`). The runner (`bench/runner.py`)
plans and drives; executors (`bench/executors/`) run this."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from randori.agents.agent import BUILTIN, AgentSpec
from randori.agents.defenses import Defense, get_defense
from randori.agents.models.base import ChatModel
from randori.attacks import Attack, get_attack
from randori.bench.attempt import Outcome, attack_context, attempt, case_result
from randori.bench.cases import Case
from randori.bench.store import CaseResult
from randori.errors import FatalModelError, ModelError
from randori.tasks.collector import quiet_gc as quiet_gc
from randori.tasks.suite import TaskSuite
from randori.vocabulary import Usage

if TYPE_CHECKING:
    from randori.attacks.adaptive import Attacker


async def run_case(case: Case, suite: TaskSuite[Any], model: ChatModel | None, *, max_steps: int = 20,
                   defense: Defense | None = None, attack: Attack | None = None,
                   attacker: Attacker | None = None, agent: AgentSpec = BUILTIN) -> CaseResult:
    """Run one case. `defense` and `attack` are prototypes resolved from the case when not given (a
    run passes them to avoid resolving names per case); `attacker` serves an adaptive attack."""
    proto = defense if defense is not None else get_defense(case.defense)
    if case.scenario is not None:
        from randori.bench.scenario_play import play_scenario

        return await play_scenario(case, suite, model, proto, max_steps, agent)
    if attack is None and case.kind == "attacked" and case.attack:
        attack = get_attack(case.attack)
    if attack is None or attack.kind != "adaptive":
        return case_result(case, [await attempt(case, suite, model, dict(case.injections), proto.fresh(), max_steps,
                                             agent)])
    if getattr(attack, "searches", False):
        return await _search(case, suite, model, attack, attacker, proto, max_steps, agent)
    from randori.attacks.adaptive import Attempt, observable_trace

    own_attacker = None
    if attacker is None:
        attacker = own_attacker = attack.make_attacker()  # type: ignore[attr-defined]
    goal = suite.injection_tasks[case.injection_task].goal  # type: ignore[index]
    outcomes: list[Outcome] = []
    history: list[Attempt] = []
    injections, used = dict(case.injections), Usage()
    try:
        for number in range(1, attack.budget + 1):  # type: ignore[attr-defined]
            out = await attempt(case, suite, model, injections, proto.fresh(), max_steps, agent)
            outcomes.append(out)
            history.append(Attempt(
                number=number, text=next(iter(injections.values()), ""), final_output=out.trace.final_output,
                attack_succeeded=out.attack_succeeded, utility=out.utility, injection_seen=out.injection_seen,
                observed_trace=observable_trace(out.trace) if attack.sees_trace else "",  # type: ignore[attr-defined]
                attacker_usage=used))
            if out.status != "ok" or out.attack_succeeded or number == attack.budget:  # type: ignore[attr-defined]
                break
            try:
                text, used = await attacker.rewrite(goal, history, attack_context(case))
            except FatalModelError:
                raise
            except ModelError as e:
                out.status, out.error_category, out.error_message = "error", e.category, f"attacker: {e}"
                break
            injections = {v: text for v in case.injections}
    finally:
        if own_attacker is not None:
            await own_attacker.aclose()
    return case_result(case, outcomes, [a.as_dict() for a in history])


async def _search(case: Case, suite: TaskSuite[Any], model: ChatModel | None, attack: Attack, attacker: Any,
                  defense: Defense, max_steps: int, agent: AgentSpec) -> CaseResult:
    from randori.bench.search import run_search

    own = attacker is None
    proposer = attack.make_attacker() if own else attacker  # type: ignore[attr-defined]
    try:
        return await run_search(case, suite, model, attack, proposer, defense, max_steps,  # type: ignore[arg-type]
                                agent)
    finally:
        if own:
            await proposer.aclose()


# Called with each stored result, or with None for a case left to another run on the same store.
ProgressFn = Callable[[CaseResult | None], None]
# Awaited before each case starts (it may wait); False ends the run there (a spend cap), leaving the rest unrun.
AdmitFn = Callable[[Case], Awaitable[bool]]


