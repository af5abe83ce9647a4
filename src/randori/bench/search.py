"""Runs a `search` attack on one case: generations of proposed texts, each one run of the agent,
scored by the graded signal, until the goal is reached or the budget of runs is spent.

Every try is kept in the stored trace (`attempts`: text, strategy, parent try, score, signal, the
agent's answer); the row is the last try, with cost summed over all of them (as for `adaptive`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from randori.agents.agent import BUILTIN, AgentSpec
from randori.agents.defenses import Defense
from randori.attacks.adaptive import observable_trace
from randori.attacks.score import score_try
from randori.attacks.search import Candidate, Proposer, Search, _key
from randori.bench.attempt import attack_context, attempt, case_result
from randori.bench.cases import Case
from randori.bench.store import CaseResult
from randori.errors import FatalModelError, ModelError
from randori.tasks.suite import TaskSuite
from randori.vocabulary import Usage

if TYPE_CHECKING:
    from randori.agents.models.base import ChatModel


async def run_search(case: Case, suite: TaskSuite[Any], model: ChatModel | None, attack: Search, proposer: Proposer,
                     defense: Defense, max_steps: int, agent: AgentSpec = BUILTIN) -> CaseResult:
    it = suite.injection_tasks[case.injection_task]  # type: ignore[index]
    goal_calls = it.ground_truth(suite.load_env())
    ut = suite.user_tasks[case.user_task]  # type: ignore[index]
    user_calls = ut.ground_truth(suite.load_env())
    context = attack_context(case)
    outcomes: list[Any] = []
    tries: list[Candidate] = []
    tried: set[str] = set()

    async def run(strategy: str, parent: int | None, injections: dict[str, str], usage: Usage) -> Any:
        out = await attempt(case, suite, model, injections, defense.fresh(), max_steps, agent)
        outcomes.append(out)
        tried.add(_key(injections))
        score = score_try(out.trace, attack_succeeded=out.attack_succeeded, injection_seen=out.injection_seen,
                          goal=it.goal, goal_calls=goal_calls, user_calls=user_calls)
        tries.append(Candidate(
            number=len(tries) + 1, injections=injections, strategy=strategy, parent=parent, score=score.value,
            signal=score.signal, final_output=out.trace.final_output, attack_succeeded=out.attack_succeeded,
            utility=out.utility, injection_seen=out.injection_seen,
            observed_trace=observable_trace(out.trace) if attack.sees_trace else "", attacker_usage=usage))
        return out

    out = await run("template", None, dict(case.injections), Usage())
    while out.status == "ok" and not out.attack_succeeded and len(tries) < attack.budget:
        parents = sorted(tries, key=lambda c: (-c.score, c.number))[:attack.beam]
        try:
            proposals, usage = await proposer.propose(it.goal, parents, attack.k, context, tried)
        except FatalModelError:
            raise
        except ModelError as e:
            out.status, out.error_category, out.error_message = "error", e.category, f"attacker: {e}"
            break
        if not proposals:  # the attacker has nothing new to offer: the search is over
            break
        for strategy, parent, injections in proposals:
            out = await run(strategy, parent, injections, usage)
            usage = Usage()  # a generation's attacker cost is booked on its first try
            if out.status != "ok" or out.attack_succeeded or len(tries) >= attack.budget:
                break
    return case_result(case, outcomes, [c.as_dict() for c in tries])
