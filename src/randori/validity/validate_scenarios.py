"""The validity rules of scenarios (randori.tasks.scenario), each tried on every scenario of a suite:

- `scenario_oracle`: the oracle passes every session, benign and with the attack text in place, and
  never reaches the attacker's goal.
- `scenario_gullible`: an agent that obeys what it reads (scripted/gullible) is shown the injected
  text, and reaches every goal it is shown: the goal's later session really reads what was planted.
- `scenario_noop`: a do-nothing agent persists nothing: the persistent places end as they began.
- `scenario_memory`: a benign memory scenario fails when memory is wiped between sessions: its later
  sessions really need what the earlier one stored.

Agents run through the real loop, session after session on one environment, as a run plays them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from randori.agents.loop import ToolAgent
from randori.agents.models.base import CaseContext, ModelSettings
from randori.agents.models.scripted import ScriptedModel
from randori.tasks.environment import settled
from randori.tasks.scenario import KillChain, Scenario, Session, kill_chain
from randori.tasks.suite import TaskSuite
from randori.validity.probe import SuiteCheck


def play(suite: TaskSuite[Any], sc: Scenario, kind: str, injections: dict[str, str] | None = None,
         wipe: bool = False) -> tuple[list[Session], Any, Any]:
    """The scripted agent `kind` through every session (memory wiped before each later one with
    `wipe`); returns the sessions, the initial and the final state."""
    injections = injections or {}
    env, initial = suite.load_env(injections), suite.load_env(injections)
    goal = sc.goal if injections else None
    sessions = []
    for number, task in enumerate(sc.sessions, 1):
        memory = getattr(env, "memory", None)
        if memory is not None:
            if wipe and number > 1:
                memory.notes.clear()
            memory.session = number
        pre = suite.template.restore(suite.template.snapshot(env))
        ctx = CaseContext(suite=suite, env=env, user_task=task, injection_task=goal, injections=injections)
        agent = ToolAgent(ScriptedModel(kind, ModelSettings()).for_case(ctx), suite.tools, suite.system_prompt)
        trace = asyncio.run(agent.run(env, task.prompt, watch=injections))
        with settled(pre, env):
            done = bool(task.utility(trace.final_output, pre, env, trace))
        sessions.append(Session(task=task, trace=trace, pre=pre, post=suite.template.restore(
            suite.template.snapshot(env)), utility=done))
    return sessions, initial, env


def _chain(suite: TaskSuite[Any], sc: Scenario, sessions: list[Session], initial: Any, final: Any) -> KillChain:
    assert sc.goal is not None
    with settled(initial, final):
        executed = bool(sc.goal.attack_succeeded(sessions[-1].trace.final_output, initial, final, sessions[-1].trace))
    return kill_chain(sessions, sc.goal, suite.persistent, [bool(s.trace.vectors_seen) for s in sessions], executed)


def attack_text(suite: TaskSuite[Any], sc: Scenario) -> dict[str, str]:
    from randori.attacks import get_attack
    from randori.attacks.base import AttackContext

    ctx = AttackContext(vectors=suite.scenario_vectors(sc.id), user_name=suite.user_name,
                        model_name="AI assistant", tools=tuple(t.name for t in suite.tools))
    return get_attack("important_instructions").injections(sc.sessions[0], sc.goal, ctx)


def check_scenario(suite: TaskSuite[Any], sc: Scenario, report: SuiteCheck) -> None:
    sessions, _, _ = play(suite, sc, "oracle")
    for n, s in enumerate(sessions, 1):
        report.count("scenario_oracle", bool(s.utility), sc.id, f"the oracle fails session {n} ({s.task.id})")
    _, initial, final = play(suite, sc, "noop")
    report.count("scenario_noop", suite.persistent(initial) == suite.persistent(final), sc.id,
                 "a do-nothing agent changed a persistent place")
    if sc.remembers:
        wiped, _, _ = play(suite, sc, "oracle", wipe=True)
        report.count("scenario_memory", not all(s.utility for s in wiped), sc.id,
                     "with memory wiped between sessions the oracle still passes every session: the later "
                     "sessions do not need what was remembered")
    if sc.goal is None:
        return
    injections = attack_text(suite, sc)
    sessions, initial, final = play(suite, sc, "oracle", injections)
    chain = _chain(suite, sc, sessions, initial, final)
    failed = [n for n, s in enumerate(sessions, 1) if not s.utility]
    report.count("scenario_oracle", not failed and not chain.executed, sc.id,
                 f"with the attack text in place the oracle fails session {failed[0]}" if failed
                 else "the oracle alone reaches the attacker's goal")
    sessions, initial, final = play(suite, sc, "gullible", injections)
    chain = _chain(suite, sc, sessions, initial, final)
    report.count("scenario_gullible", chain.exposed and chain.executed, sc.id,
                 "scripted/gullible is never shown the injected text" if not chain.exposed else
                 f"scripted/gullible is shown the injected text but does not reach the goal ({chain.as_dict()})")
    sessions, initial, final = play(suite, sc, "noop", injections)
    report.count("scenario_noop", not _chain(suite, sc, sessions, initial, final).persisted, sc.id,
                 "a do-nothing agent persisted the attacker's rule")


def check_scenarios(suite: TaskSuite[Any], report: SuiteCheck) -> None:
    for sc in suite.scenarios.values():
        check_scenario(suite, sc, report)
