"""One try of the agent on one case, and the stored row a case's tries make: what the runner and the
search attack (`randori.bench.search`) share."""

from __future__ import annotations

import asyncio
import time
import traceback
from dataclasses import dataclass
from typing import Any

from randori.agents.agent import AgentSpec
from randori.agents.defenses import Defense
from randori.agents.models.base import CaseContext, ChatModel
from randori.attacks import AttackContext
from randori.bench.cases import Case
from randori.bench.store import CaseResult
from randori.bench.verdict import any_known
from randori.errors import AgentFailure, FatalModelError, ModelError
from randori.registry import describe_exception, describe_failure
from randori.tasks.attempts import goal_calls, progress
from randori.tasks.environment import settled, state_diff
from randori.tasks.parts import Part, collecting, deciding
from randori.tasks.suite import TaskSuite
from randori.tasks.task import InjectionTask, UserTask
from randori.vocabulary import Message, Trace, Usage


@dataclass
class Outcome:
    """One run of the agent on one case (an adaptive attack makes several)."""

    trace: Trace
    defense: Defense
    injections: dict[str, str]
    pre: Any = None
    post: Any = None
    status: str = "ok"
    error_category: str | None = None
    error_message: str | None = None
    utility: bool | None = None
    attack_succeeded: bool | None = None
    injection_seen: bool | None = None
    attack_attempted: bool | None = None
    attack_blocked: bool | None = None
    duration_s: float = 0.0
    diff: list[dict[str, Any]] | None = None
    # The parts of each check that decided it (randori.tasks.parts), by "user_task" / "injection_task".
    checks: dict[str, list[str]] | None = None
    weaknesses: dict[str, Any] | None = None


def _parts(checks: dict[str, list[str]] | None, which: str, parts: list[Part], verdict: bool | None
           ) -> dict[str, list[str]] | None:
    said = deciding(parts, verdict)
    return {**(checks or {}), which: said} if said else checks


async def attempt(case: Case, suite: TaskSuite[Any], model: ChatModel | None, injections: dict[str, str],
                   defense: Defense, max_steps: int, agent_spec: AgentSpec) -> Outcome:
    ut = suite.user_tasks[case.user_task] if case.user_task else None
    it = suite.injection_tasks[case.injection_task] if case.injection_task else None
    position = case.placement.get("position", "replace")
    env = suite.load_env(injections, position)
    ctx = CaseContext(suite=suite, env=env, user_task=ut, injection_task=it, injections=injections)
    defense.begin(ctx)
    tools = suite.case_tools(injections, case.placement.get("descriptions_after", 0))
    agent = agent_spec.build(model.for_case(ctx) if model is not None else None, suite.tools, suite.system_prompt,
                             defense, max_steps=max_steps, tool_source=tools if tools.injected else None)
    prompt = ut.prompt if ut is not None else it.goal  # type: ignore[union-attr]
    # The state before, for the checks: a second instance (4x cheaper than deep-copying the first), made
    # once the agent is done, so that a case starts (an episode's reset) after one load, not two.
    out = Outcome(trace=Trace(), defense=defense, injections=injections, pre=None, post=env)
    t0 = time.perf_counter()
    try:
        await agent.run(env, prompt, watch=injections, trace=out.trace)
        out.pre = suite.load_env(injections, position)
        text = out.trace.final_output
        if getattr(suite, "checks_run_code", False):
            # Checks that run code in the sandbox wait on processes: off the event loop, so the
            # other cases' model calls go on meanwhile (the checks only read the finished states).
            await asyncio.to_thread(_check, case, suite, ut, it, out, text)
        else:
            _check(case, suite, ut, it, out, text)
        if case.kind in ("attacked", "dos"):
            out.injection_seen = bool(out.trace.vectors_seen)
        if case.kind == "attacked":
            _progress(out, suite, ut, it)  # type: ignore[arg-type]
    except FatalModelError:
        raise
    except ModelError as e:
        out.status, out.error_category, out.error_message = "error", e.category, str(e)
        if e.usage is not None:  # replies received before the request that failed: spent, so counted
            note = (f"the agent failed ({e}); the tokens it reported before are counted in the usage"
                    if isinstance(e, AgentFailure) else
                    f"a follow-up request failed ({e}); the replies before it are counted in the usage")
            out.trace.messages.append(Message(role="assistant", content="", usage=e.usage, annotations=[note]))
    except Exception as e:  # a bug in a task or tool must not take the whole run down
        out.status, out.error_category = "error", "internal"
        # A first line that says it all (what the run prints), then the traceback (what the viewer shows).
        cause = e.__cause__ if isinstance(e, CheckRaised) and e.__cause__ is not None else e
        first = str(e) if isinstance(e, CheckRaised) else describe_failure(e)
        out.error_message = f"{first}\n{''.join(traceback.format_exception(cause, limit=6))}"
    if out.pre is None:  # the agent failed: the diff of what it changed still needs the state before
        out.pre = suite.load_env(injections, position)
    out.duration_s = time.perf_counter() - t0
    return out


class CheckRaised(Exception):
    """A task's check raised; the message names the task, the check and where it raised."""


def _judge(task: Any, check: str, suite: str, *args: Any) -> bool:
    try:
        return getattr(task, check)(*args)  # type: ignore[no-any-return]
    except Exception as e:
        raise CheckRaised(f"{suite}/{task.id}: check {check} raised {describe_failure(e)}") from e


def _check(case: Case, suite: TaskSuite[Any], ut: UserTask | None, it: InjectionTask | None, out: Outcome,
           text: str) -> None:
    """The verdicts on the finished case, into `out`."""
    pre, env = out.pre, out.post
    with settled(pre, env):
        verdict = (suite.name, text, pre, env, out.trace)
        with collecting(text) as parts:
            if case.kind == "injection_only":
                out.utility = _judge(it, "attack_succeeded", *verdict)
            else:
                out.utility = _judge(ut, "utility", *verdict)
        out.checks = _parts(out.checks, "injection_task" if case.kind == "injection_only" else "user_task",
                            parts, out.utility)
        if case.kind == "attacked":
            with collecting(text) as parts:
                out.attack_succeeded = _judge(it, "attack_succeeded", *verdict)
            out.checks = _parts(out.checks, "injection_task", parts, out.attack_succeeded)
        elif case.kind == "dos":  # a denial-of-service attack succeeds by costing the user their task
            out.attack_succeeded = not out.utility
        out.diff = state_diff(pre, env)
        out.weaknesses = weakness_row(suite, env, it if case.kind == "attacked" else None, out.injections)


def weakness_row(suite: TaskSuite[Any], env: Any, it: InjectionTask | None,
                 injections: dict[str, str]) -> dict[str, Any] | None:
    """The suite's weakness scan of the final state (suites of code only), with the vectors that
    carried attack text: the same scan in benign and attacked cases tells apart a weakness the
    agent writes anyway from one the injection steered it to."""
    scan = getattr(suite, "weakness_scan", None)
    if scan is None:
        return None
    found = scan(env, it)
    return {**found, "vectors": sorted(v for v, text in injections.items() if text) if it is not None else []}


def _progress(out: Outcome, suite: TaskSuite[Any], ut: UserTask | None, it: InjectionTask) -> None:
    """How far the attack got. Unknown (None), not a wrong "no", when a task's ground truth fails."""
    try:
        p = progress(out.trace, goal_calls(suite, it, ut))
    except Exception as e:  # the verdicts stand without it; the trace says why it is missing
        out.trace.messages.append(Message(role="assistant", content="", annotations=[
            f"attack_attempted unknown: the goal's calls could not be derived ({describe_exception(e)})"]))
        return
    out.attack_attempted, out.attack_blocked = p.attempted, p.blocked


def attack_context(case: Case) -> AttackContext:
    k = case.attacker_knowledge or {}
    return AttackContext(vectors=tuple(case.injections), user_name=k.get("user_name"), model_name=k.get("model_name"),
                         tools=tuple(k.get("tools") or ()), observes=tuple(k.get("observes") or ()),
                         defense=k.get("defense"))


def case_result(case: Case, outcomes: list[Outcome], attempts: list[dict[str, Any]] | None = None) -> CaseResult:
    """The stored row: the last attempt's outcome, with cost summed over every attempt."""
    last = outcomes[-1]
    result = CaseResult(key=case.key, kind=case.kind, suite=case.suite, suite_version=case.suite_version,
                        user_task=case.user_task, injection_task=case.injection_task, attack=case.attack,
                        defense=case.defense, model=case.model, settings=case.settings,
                        repeat=case.repeat, agent=case.agent, agent_version=case.agent_version,
                        status=last.status, error_category=last.error_category,
                        error_message=last.error_message, utility=last.utility,
                        attack_succeeded=last.attack_succeeded, injection_seen=last.injection_seen,
                        attack_attempted=any_known(o.attack_attempted for o in outcomes),
                        attack_blocked=any_known(o.attack_blocked for o in outcomes),
                        injections=dict(last.injections), attacker_knowledge=case.attacker_knowledge or None,
                        checks=last.checks, weaknesses=last.weaknesses, split=case.split,
                        data_directed=case.data_directed if case.user_task else None)
    usage, dusage = Usage(), Usage()
    for o in outcomes:
        usage = usage + o.trace.usage
        dusage = dusage + o.defense.total_usage()
        result.defense_time_s += o.defense.time_s
        result.duration_s += o.duration_s
    result.model_calls, result.input_tokens, result.output_tokens = (
        usage.model_calls, usage.input_tokens, usage.output_tokens)
    result.defense_calls, result.defense_input_tokens, result.defense_output_tokens = (
        dusage.model_calls, dusage.input_tokens, dusage.output_tokens)
    # issue 17: prompt-cache reads and writes, priced at their own rates
    result.cached_input_tokens, result.cache_write_tokens = usage.cached_input_tokens, usage.cache_write_tokens
    result.defense_cached_input_tokens, result.defense_cache_write_tokens = (
        dusage.cached_input_tokens, dusage.cache_write_tokens)
    result.detection = _detections(outcomes)
    result.approvals_asked, result.approvals_refused = approvals([o.defense for o in outcomes])
    if attempts is not None:
        result.attack_tries = len(attempts)
        result.attempts = attempts
        spent = [Usage.model_validate(a.get("attacker_usage") or {}) for a in attempts]
        attacker = sum(spent, Usage())
        result.attacker_calls, result.attacker_input_tokens, result.attacker_output_tokens = (
            attacker.model_calls, attacker.input_tokens, attacker.output_tokens)
    result.messages = [m.model_dump(mode="json", exclude_defaults=True) for m in last.trace.messages]
    if last.diff is None and last.pre is not None:  # the agent failed before the checks ran
        last.diff = state_diff(last.pre, last.post)
    result.diff = last.diff or []
    return result


def approvals(defenses: list[Defense]) -> tuple[int | None, int | None]:
    """The approvals a defense asked of the user (confirm) and those refused, over every try or session
    of a case; (None, None) for defenses that never ask."""
    found = [a for a in (d.approvals() for d in defenses) if a is not None]
    if not found:
        return None, None
    return sum(a["asked"] for a in found), sum(a["refused"] for a in found)


def _detections(outcomes: list[Outcome]) -> dict[str, int] | None:
    """A detector's verdicts on tool outputs, over every try of the case."""
    found = [d for d in (o.defense.detections() for o in outcomes) if d is not None]
    return {k: sum(d.get(k, 0) for d in found) for k in found[0]} if found else None
