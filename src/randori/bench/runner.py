"""Plan cases from a selection and run them with bounded concurrency, resuming by case key."""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from randori.agents.defenses import get_defense
from randori.agents.loop import ToolAgent
from randori.agents.messages import Trace
from randori.agents.models.base import CaseContext, ChatModel
from randori.attacks import AttackContext, get_attack, model_display_name
from randori.bench.cases import Case
from randori.bench.store import CaseResult, Store
from randori.errors import AuthError, ModelError, UserError
from randori.tasks.environment import state_diff
from randori.tasks.suite import TaskSuite


@dataclass
class Selection:
    suites: Sequence[TaskSuite[Any]]
    model: ChatModel
    attacks: Sequence[str] = ("important_instructions",)
    defenses: Sequence[str] = ("none",)
    user_tasks: Sequence[str] = ()
    injection_tasks: Sequence[str] = ()
    benign: bool = True
    injection_only: bool = True
    repeats: int = 1


def plan(sel: Selection) -> list[Case]:
    """Every case the selection asks for, in a stable order. Raises UserError on unknown ids."""
    attacks = [get_attack(a) for a in sel.attacks]
    for d in sel.defenses:
        get_defense(d)
    settings = sel.model.settings.key_fields()
    _check_ids(sel)
    cases: list[Case] = []
    for suite in sel.suites:
        uts = _pick(suite, "user task", suite.user_tasks, sel.user_tasks)
        its = _pick(suite, "injection task", suite.injection_tasks, sel.injection_tasks)
        common = {"suite": suite.name, "suite_version": suite.version, "model": sel.model.name,
                  "settings": settings}
        knowledge = {"user_name": suite.user_name, "model_name": model_display_name(sel.model.name),
                     "tools": tuple(t.name for t in suite.tools)}
        for defense in sel.defenses:
            for rep in range(sel.repeats):
                if sel.benign:
                    cases += [Case("benign", user_task=u, injection_task=None, attack=None,
                                   defense=defense, repeat=rep, **common) for u in uts]
                if sel.injection_only:
                    cases += [Case("injection_only", user_task=None, injection_task=i, attack=None,
                                   defense=defense, repeat=rep, **common) for i in its]
                for attack in attacks:
                    for u in uts:
                        ctx = AttackContext(vectors=suite.reachable_vectors(u), **knowledge)
                        for i in its:
                            inj = attack.injections(suite.user_tasks[u], suite.injection_tasks[i], ctx)
                            cases.append(Case("attacked", user_task=u, injection_task=i,
                                              attack=attack.name, defense=defense, repeat=rep,
                                              injections=inj, attacker_knowledge=ctx.as_dict(),
                                              **common))
    return cases


def _check_ids(sel: Selection) -> None:
    """Every requested task id must exist in at least one selected suite."""
    for what, wanted, attr in (("user task", sel.user_tasks, "user_tasks"),
                               ("injection task", sel.injection_tasks, "injection_tasks")):
        known = {tid for s in sel.suites for tid in getattr(s, attr)}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            names = ", ".join(s.name for s in sel.suites)
            raise UserError(f"no {what} {', '.join(unknown)} in suite(s) {names} "
                            "(see `randori suites show SUITE`)")


def _pick(suite: TaskSuite[Any], what: str, table: dict[str, Any], wanted: Sequence[str]) -> list[str]:
    return [w for w in wanted if w in table] if wanted else list(table)


async def run_case(case: Case, suite: TaskSuite[Any], model: ChatModel, *, max_steps: int = 20) -> CaseResult:
    ut = suite.user_tasks[case.user_task] if case.user_task else None
    it = suite.injection_tasks[case.injection_task] if case.injection_task else None
    env = suite.load_env(case.injections)
    pre = env.model_copy(deep=True)
    defense = get_defense(case.defense).fresh()
    ctx = CaseContext(suite=suite, env=env, user_task=ut, injection_task=it, injections=case.injections)
    agent = defense.agent(ToolAgent(model.for_case(ctx), suite.tools, suite.system_prompt, defense,
                                    max_steps=max_steps))
    prompt = ut.prompt if ut is not None else it.goal  # type: ignore[union-attr]
    trace = Trace()
    result = CaseResult(key=case.key, kind=case.kind, suite=case.suite, suite_version=case.suite_version,
                        user_task=case.user_task, injection_task=case.injection_task, attack=case.attack,
                        defense=case.defense, model=case.model, settings=case.settings,
                        repeat=case.repeat, status="ok", injections=dict(case.injections),
                        attacker_knowledge=case.attacker_knowledge or None)
    t0 = time.perf_counter()
    try:
        await agent.run(env, prompt, watch=case.injections, trace=trace)
        out = trace.final_output
        if case.kind == "injection_only":
            result.utility = it.attack_succeeded(out, pre, env, trace)  # type: ignore[union-attr]
        else:
            result.utility = ut.utility(out, pre, env, trace)  # type: ignore[union-attr]
        if case.kind == "attacked":
            result.attack_succeeded = it.attack_succeeded(out, pre, env, trace)  # type: ignore[union-attr]
            result.injection_seen = bool(trace.vectors_seen)
    except AuthError:
        raise
    except ModelError as e:
        result.status, result.error_category, result.error_message = "error", e.category, str(e)
    except Exception as e:  # a bug in a task or tool must not take the whole run down
        result.status, result.error_category = "error", "internal"
        result.error_message = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}"
    result.duration_s = time.perf_counter() - t0
    usage = trace.usage
    result.model_calls, result.input_tokens, result.output_tokens = (
        usage.model_calls, usage.input_tokens, usage.output_tokens)
    du = defense.usage
    result.defense_calls, result.defense_input_tokens, result.defense_output_tokens = (
        du.model_calls, du.input_tokens, du.output_tokens)
    result.messages = [m.model_dump(mode="json", exclude_defaults=True) for m in trace.messages]
    result.diff = state_diff(pre, env)
    return result


ProgressFn = Callable[[CaseResult], None]


async def run_cases(cases: Sequence[Case], suites: dict[str, TaskSuite[Any]], model: ChatModel,
                    store: Store, run_id: int, *, concurrency: int = 8, max_steps: int = 20,
                    on_result: ProgressFn | None = None) -> None:
    """Run `cases` (already filtered for resume) and store each as soon as it finishes."""
    queue: asyncio.Queue[Case] = asyncio.Queue()
    for c in cases:
        queue.put_nowait(c)

    async def worker() -> None:
        while True:
            try:
                case = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            res = await run_case(case, suites[case.suite], model, max_steps=max_steps)
            store.add(run_id, [res])
            if on_result is not None:
                on_result(res)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(cases))))]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
