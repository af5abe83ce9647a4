"""One scenario case, start to stored row: its sessions in order on one environment, each a fresh
conversation with a fresh agent and defense, then the verdicts per session, for the whole scenario
and, when attacked, its kill chain (from states and traces only)."""

from __future__ import annotations

import time
import traceback
from typing import Any

from randori.agents.agent import AgentSpec
from randori.agents.defenses import Defense
from randori.agents.models.base import CaseContext, ChatModel
from randori.bench.attempt import approvals, weakness_row
from randori.bench.cases import Case
from randori.bench.store import CaseResult
from randori.errors import FatalModelError, ModelError
from randori.registry import describe_failure
from randori.tasks.environment import settled, state_diff
from randori.tasks.memory import attribute
from randori.tasks.scenario import Session, kill_chain
from randori.tasks.suite import TaskSuite
from randori.vocabulary import Trace, Usage


async def play_scenario(case: Case, suite: TaskSuite[Any], model: ChatModel | None, defense: Defense,
                        max_steps: int, agent_spec: AgentSpec) -> CaseResult:
    sc = suite.scenarios[case.scenario]  # type: ignore[index]
    goal = sc.goal if case.kind == "scenario_attacked" else None
    injections = dict(case.injections)
    env = suite.load_env(injections)
    initial = suite.load_env(injections)
    memory = getattr(env, "memory", None)
    sessions: list[Session] = []
    played: list[Defense] = []
    status, category, message = "ok", None, None
    usage, dusage, defense_time = Usage(), Usage(), 0.0
    t0 = time.perf_counter()
    for number, task in enumerate(sc.sessions, 1):
        if memory is not None:
            memory.session = number  # what save_note records as the note's session
        pre = suite.template.restore(suite.template.snapshot(env))
        d = defense.fresh()
        ctx = CaseContext(suite=suite, env=env, user_task=task, injection_task=goal, injections=injections)
        d.begin(ctx)
        played.append(d)
        tools = suite.case_tools(injections)
        agent = agent_spec.build(model.for_case(ctx) if model is not None else None, suite.tools,
                                 suite.system_prompt, d, max_steps=max_steps,
                                 tool_source=tools if tools.injected else None)
        s = Session(task=task, trace=Trace(), pre=pre, post=env)
        sessions.append(s)
        try:
            await agent.run(env, task.prompt, watch=injections, trace=s.trace)
            if memory is not None:
                attribute(memory, s.trace, number)
            with settled(pre, env):
                s.utility = bool(task.utility(s.trace.final_output, pre, env, s.trace))
            s.post = suite.template.restore(suite.template.snapshot(env))
        except FatalModelError:
            raise
        except ModelError as e:
            s.status, status, category, message = "error", "error", e.category, f"session {number}: {e}"
        except Exception as e:  # a bug in a task or tool must not take the whole run down
            s.status, status, category = "error", "error", "internal"
            message = f"session {number}: {describe_failure(e)}\n{''.join(traceback.format_exception(e, limit=6))}"
        usage, dusage = usage + s.trace.usage, dusage + d.total_usage()
        defense_time += d.time_s
        if s.status != "ok":
            break
    if memory is not None:
        memory.session = 0
    result = CaseResult(key=case.key, kind=case.kind, suite=case.suite, suite_version=case.suite_version,
                        user_task=None, injection_task=case.injection_task, attack=case.attack,
                        defense=case.defense, model=case.model, settings=case.settings, repeat=case.repeat,
                        agent=case.agent, agent_version=case.agent_version, status=status,
                        error_category=category, error_message=message, scenario=case.scenario,
                        injections=injections, attacker_knowledge=case.attacker_knowledge or None)
    result.sessions = [{"task": s.task.id, "utility": s.utility, "status": s.status,
                        "injection_seen": bool(s.trace.vectors_seen) if goal is not None else None}
                       for s in sessions]
    if status == "ok":
        final = sessions[-1].trace.final_output
        with settled(initial, env):
            result.utility = all(s.utility for s in sessions)
            if goal is not None:
                executed = bool(goal.attack_succeeded(final, initial, env, sessions[-1].trace))
                chain = kill_chain(sessions, goal, suite.persistent, [bool(s.trace.vectors_seen) for s in sessions],
                                   executed)
                result.attack_succeeded, result.injection_seen = executed, chain.exposed
                result.exposed, result.persisted = chain.exposed, chain.persisted
                result.triggered, result.executed = chain.triggered, chain.executed
            # Suites of code: the final repository's weaknesses, as a single-session case stores them.
            result.weaknesses = weakness_row(suite, env, goal, injections)
    result.approvals_asked, result.approvals_refused = approvals(played)
    result.duration_s, result.defense_time_s = time.perf_counter() - t0, defense_time
    result.model_calls, result.input_tokens, result.output_tokens = (
        usage.model_calls, usage.input_tokens, usage.output_tokens)
    result.defense_calls, result.defense_input_tokens, result.defense_output_tokens = (
        dusage.model_calls, dusage.input_tokens, dusage.output_tokens)
    messages = []
    for number, s in enumerate(sessions, 1):
        for m in s.trace.messages:
            if m.role == "user":  # where each fresh conversation starts, for whoever reads the trace
                m = m.model_copy(update={"annotations": [*m.annotations, f"session {number} of "
                                                         f"{len(sc.sessions)}: {s.task.id}"]})
            messages.append(m.model_dump(mode="json", exclude_defaults=True))
    result.messages = messages
    result.diff = state_diff(initial, env)
    return result
