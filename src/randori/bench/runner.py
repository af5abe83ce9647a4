"""Plan cases from a selection and run them with bounded concurrency, resuming by case key."""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from randori.agents.agent import BUILTIN, AgentSpec
from randori.agents.defenses import Defense, get_defense
from randori.agents.messages import Message, Trace, Usage
from randori.agents.models.base import CaseContext, ChatModel
from randori.attacks import Attack, AttackContext, get_attack, model_display_name
from randori.bench.cases import Case
from randori.bench.store import CaseResult, Store
from randori.errors import AgentFailure, FatalModelError, ModelError, UserError
from randori.registry import describe_exception
from randori.tasks.environment import settled, state_diff
from randori.tasks.suite import TaskSuite

if TYPE_CHECKING:
    from randori.attacks.adaptive import Attacker


@dataclass
class Selection:
    suites: Sequence[TaskSuite[Any]]
    # The built-in agent's model; for an external agent, the model defenses ask before it starts (or None).
    model: ChatModel | None
    attacks: Sequence[str] = ("important_instructions",)
    defenses: Sequence[str] = ("none",)
    user_tasks: Sequence[str] = ()
    injection_tasks: Sequence[str] = ()
    benign: bool = True
    injection_only: bool = True
    repeats: int = 1
    # Parameters for attacks that accept them and whose spec leaves them out (adaptive: attacker,
    # budget, trace). The attacker defaults to scripted/attacker for scripted agents, else the agent.
    attack_defaults: Mapping[str, Any] = field(default_factory=dict)
    attacker_base_url: str | None = None  # an OpenAI-compatible server for the attacker model
    agent: AgentSpec = BUILTIN


def resolve_attacks(sel: Selection) -> list[Attack]:
    from randori.attacks.adaptive import SCRIPTED_ATTACKER

    defaults = dict(sel.attack_defaults)
    if not defaults.get("attacker") and sel.agent.external:
        defaults["attacker"] = None  # an external agent's model is unknown: the spec or --attacker-model names one
    elif not defaults.get("attacker") and sel.model is not None:
        defaults["attacker"] = SCRIPTED_ATTACKER if sel.model.provider == "scripted" else sel.model.name
    attacks: dict[str, Attack] = {}
    for spec in sel.attacks:
        attack = get_attack(spec, defaults)
        attacks.setdefault(attack.label, attack)
    for attack in attacks.values():
        attacker = attack.params.get("attacker") if attack.kind == "adaptive" else None
        if attack.kind == "adaptive" and not attacker:
            raise UserError(f"attack {attack.label} against the external agent {sel.agent.name} needs an attacker "
                            "model: give --attacker-model (e.g. scripted/attacker or openai/gpt-4o-mini)")
        if attacker and attacker != SCRIPTED_ATTACKER:
            from randori.agents.models import get_model

            # An unknown provider or a missing key fails now, in one line, not in every case.
            if sel.attacker_base_url:
                get_model(attacker, base_url=sel.attacker_base_url)
            else:
                get_model(attacker)
    return list(attacks.values())


# More cases than this in one run is a typo (--repeats 100000000), not a benchmark: refused before
# any is built, since planning them would take minutes and exhaust memory.
MAX_CASES = 1_000_000


def count_cases(sel: Selection, attacks: Sequence[Attack], defenses: int) -> int:
    """How many cases `plan` would make, without making them."""
    n = 0
    for suite in sel.suites:
        uts = len(_pick(suite, "user task", suite.user_tasks, sel.user_tasks))
        its = len(_pick(suite, "injection task", suite.injection_tasks, sel.injection_tasks))
        per_defense = uts * sel.benign + its * sel.injection_only
        per_defense += sum(uts if a.kind == "dos" else uts * its for a in attacks)
        n += per_defense
    return n * defenses * sel.repeats


def plan(sel: Selection) -> list[Case]:
    """Every case the selection asks for, in a stable order. Raises UserError on unknown ids."""
    attacks = resolve_attacks(sel)
    defenses = list(dict.fromkeys(get_defense(d).name for d in sel.defenses))
    settings = {d: _settings(sel, d) for d in defenses}
    _check_ids(sel)
    total = count_cases(sel, attacks, len(defenses))
    if total > MAX_CASES:
        raise UserError(f"this selection makes {total:,} cases, more than the {MAX_CASES:,} one run may plan; "
                        "lower --repeats or select fewer suites, tasks, attacks or defenses")
    cases: list[Case] = []
    for suite in sel.suites:
        uts = _pick(suite, "user task", suite.user_tasks, sel.user_tasks)
        its = _pick(suite, "injection task", suite.injection_tasks, sel.injection_tasks)
        subject = sel.agent.label if sel.agent.external or sel.model is None else sel.model.name
        knowledge: dict[str, Any] = {"user_name": suite.user_name, "model_name": model_display_name(subject),
                     "tools": tuple(t.name for t in suite.tools)}
        initial = suite.load_env() if attacks else None
        for defense in defenses:
            common: dict[str, Any] = {"suite": suite.name, "suite_version": suite.version, "model": subject,
                                      "settings": settings[defense]}
            if sel.agent.external:
                common |= {"agent": sel.agent.name, "agent_version": sel.agent.version}
            for rep in range(sel.repeats):
                if sel.benign:
                    cases += [Case("benign", user_task=u, injection_task=None, attack=None,
                                   defense=defense, repeat=rep, **common) for u in uts]
                if sel.injection_only:
                    cases += [Case("injection_only", user_task=None, injection_task=i, attack=None,
                                   defense=defense, repeat=rep, **common) for i in its]
                for attack in attacks:
                    for u in uts:
                        ctx = _attack_call(attack, suite, u, attack.context, AttackContext(
                            vectors=suite.reachable_vectors(u), environment=initial,
                            tool_vectors=tuple(suite.tool_vectors), **knowledge))
                        if attack.kind == "dos":  # no attacker goal: once per user task
                            cases.append(Case("dos", user_task=u, injection_task=None, attack=attack.label,
                                              defense=defense, repeat=rep,
                                              injections=_attack_call(attack, suite, u, attack.injections,
                                                                      suite.user_tasks[u], None, ctx),
                                              attacker_knowledge=ctx.as_dict(), **common))
                            continue
                        for i in its:
                            inj = _attack_call(attack, suite, u, attack.injections, suite.user_tasks[u],
                                               suite.injection_tasks[i], ctx)
                            cases.append(Case("attacked", user_task=u, injection_task=i,
                                              attack=attack.label, defense=defense, repeat=rep,
                                              injections=inj, attacker_knowledge=ctx.as_dict(),
                                              placement=attack.placement, **common))
    return cases


def _settings(sel: Selection, defense: str) -> dict[str, Any]:
    """The model settings of a case's key. An external agent's cases carry those of the model its defense
    asks (none when the defense asks none); a refused defense is one line now, before any case runs."""
    if not sel.agent.external:
        assert sel.model is not None
        return sel.model.settings.key_fields()
    from randori.agents.external import asks_model, check_defense

    d = get_defense(defense)
    check_defense(d, sel.agent.name)
    if not asks_model(d):
        return {}
    if sel.model is None:
        raise UserError(f"defense {defense} asks a model before the agent starts (its allow-list): give --model "
                        "for it, e.g. --model openai/gpt-4o-mini")
    return {"defense_model": sel.model.name, **sel.model.settings.key_fields()}


def _attack_call(attack: Attack, suite: TaskSuite[Any], user_task: str, fn: Callable[..., Any], *args: Any) -> Any:
    """An attack's own code (perhaps a plugin's) failing while cases are planned is one line naming it."""
    try:
        return fn(*args)
    except UserError:
        raise
    except Exception as e:
        raise UserError(f"attack '{attack.label}' failed on {suite.name} {user_task}: "
                        f"{describe_exception(e)}") from None


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


@dataclass
class _Outcome:
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
    duration_s: float = 0.0
    diff: list[dict[str, Any]] | None = None


async def _attempt(case: Case, suite: TaskSuite[Any], model: ChatModel | None, injections: dict[str, str],
                   defense: Defense, max_steps: int, agent_spec: AgentSpec) -> _Outcome:
    ut = suite.user_tasks[case.user_task] if case.user_task else None
    it = suite.injection_tasks[case.injection_task] if case.injection_task else None
    position = case.placement.get("position", "replace")
    env = suite.load_env(injections, position)
    pre = suite.load_env(injections, position)  # a second instance: 4x cheaper than deep-copying the first
    ctx = CaseContext(suite=suite, env=env, user_task=ut, injection_task=it, injections=injections)
    tools = suite.case_tools(injections, case.placement.get("descriptions_after", 0))
    agent = agent_spec.build(model.for_case(ctx) if model is not None else None, suite.tools, suite.system_prompt,
                             defense, max_steps=max_steps, tool_source=tools if tools.injected else None)
    prompt = ut.prompt if ut is not None else it.goal  # type: ignore[union-attr]
    out = _Outcome(trace=Trace(), defense=defense, injections=injections, pre=pre, post=env)
    t0 = time.perf_counter()
    try:
        await agent.run(env, prompt, watch=injections, trace=out.trace)
        text = out.trace.final_output
        with settled(pre, env):
            if case.kind == "injection_only":
                out.utility = it.attack_succeeded(text, pre, env, out.trace)  # type: ignore[union-attr]
            else:
                out.utility = ut.utility(text, pre, env, out.trace)  # type: ignore[union-attr]
            if case.kind == "attacked":
                out.attack_succeeded = it.attack_succeeded(text, pre, env, out.trace)  # type: ignore[union-attr]
            elif case.kind == "dos":  # a denial-of-service attack succeeds by costing the user their task
                out.attack_succeeded = not out.utility
            out.diff = state_diff(pre, env)
        if case.kind in ("attacked", "dos"):
            out.injection_seen = bool(out.trace.vectors_seen)
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
        out.error_message = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}"
    out.duration_s = time.perf_counter() - t0
    return out


async def run_case(case: Case, suite: TaskSuite[Any], model: ChatModel | None, *, max_steps: int = 20,
                   defense: Defense | None = None, attack: Attack | None = None,
                   attacker: Attacker | None = None, agent: AgentSpec = BUILTIN) -> CaseResult:
    """Run one case. `defense` and `attack` are prototypes resolved from the case when not given (a
    run passes them to avoid resolving names per case); `attacker` serves an adaptive attack."""
    proto = defense if defense is not None else get_defense(case.defense)
    if attack is None and case.kind == "attacked" and case.attack:
        attack = get_attack(case.attack)
    if attack is None or attack.kind != "adaptive":
        return _result(case, [await _attempt(case, suite, model, dict(case.injections), proto.fresh(), max_steps,
                                             agent)])
    if getattr(attack, "searches", False):
        return await _search(case, suite, model, attack, attacker, proto, max_steps, agent)
    from randori.attacks.adaptive import Attempt, observable_trace

    own_attacker = None
    if attacker is None:
        attacker = own_attacker = attack.make_attacker()  # type: ignore[attr-defined]
    goal = suite.injection_tasks[case.injection_task].goal  # type: ignore[index]
    outcomes: list[_Outcome] = []
    history: list[Attempt] = []
    injections, used = dict(case.injections), Usage()
    try:
        for number in range(1, attack.budget + 1):  # type: ignore[attr-defined]
            out = await _attempt(case, suite, model, injections, proto.fresh(), max_steps, agent)
            outcomes.append(out)
            history.append(Attempt(
                number=number, text=next(iter(injections.values()), ""), final_output=out.trace.final_output,
                attack_succeeded=out.attack_succeeded, utility=out.utility, injection_seen=out.injection_seen,
                observed_trace=observable_trace(out.trace) if attack.sees_trace else "",  # type: ignore[attr-defined]
                attacker_usage=used))
            if out.status != "ok" or out.attack_succeeded or number == attack.budget:  # type: ignore[attr-defined]
                break
            try:
                text, used = await attacker.rewrite(goal, history, _context(case))
            except FatalModelError:
                raise
            except ModelError as e:
                out.status, out.error_category, out.error_message = "error", e.category, f"attacker: {e}"
                break
            injections = {v: text for v in case.injections}
    finally:
        if own_attacker is not None:
            await own_attacker.aclose()
    return _result(case, outcomes, [a.as_dict() for a in history])


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


def _context(case: Case) -> AttackContext:
    k = case.attacker_knowledge or {}
    return AttackContext(vectors=tuple(case.injections), user_name=k.get("user_name"), model_name=k.get("model_name"),
                         tools=tuple(k.get("tools") or ()), observes=tuple(k.get("observes") or ()))


def _result(case: Case, outcomes: list[_Outcome], attempts: list[dict[str, Any]] | None = None) -> CaseResult:
    """The stored row: the last attempt's outcome, with cost summed over every attempt."""
    last = outcomes[-1]
    result = CaseResult(key=case.key, kind=case.kind, suite=case.suite, suite_version=case.suite_version,
                        user_task=case.user_task, injection_task=case.injection_task, attack=case.attack,
                        defense=case.defense, model=case.model, settings=case.settings,
                        repeat=case.repeat, agent=case.agent, agent_version=case.agent_version,
                        status=last.status, error_category=last.error_category,
                        error_message=last.error_message, utility=last.utility,
                        attack_succeeded=last.attack_succeeded, injection_seen=last.injection_seen,
                        injections=dict(last.injections), attacker_knowledge=case.attacker_knowledge or None)
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
    if attempts is not None:
        result.attack_tries = len(attempts)
        result.attempts = attempts
    result.messages = [m.model_dump(mode="json", exclude_defaults=True) for m in last.trace.messages]
    if last.diff is None and last.pre is not None:  # the agent failed before the checks ran
        last.diff = state_diff(last.pre, last.post)
    result.diff = last.diff or []
    return result


def _detections(outcomes: list[_Outcome]) -> dict[str, int] | None:
    """A detector's verdicts on tool outputs, over every try of the case."""
    found = [d for d in (o.defense.detections() for o in outcomes) if d is not None]
    return {k: sum(d.get(k, 0) for d in found) for k in found[0]} if found else None


# Called with each stored result, or with None for a case left to another run on the same store.
ProgressFn = Callable[[CaseResult | None], None]
# Awaited before each case starts (it may wait); False ends the run there (a spend cap), leaving the rest unrun.
AdmitFn = Callable[[Case], Awaitable[bool]]


@contextlib.contextmanager
def quiet_gc(young: int = 20_000) -> Iterator[None]:
    """Keep the cyclic garbage collector out of a run's way, then restore it.

    Everything alive at the start (parsed suites, environment templates, tool schemas) is frozen,
    so full collections stop rescanning it (a quarter of a scripted case's time otherwise). The
    young-generation threshold rises from 700 to `young` container allocations: a case allocates
    tens of thousands of short-lived objects that reference counting frees anyway, and at the
    default the collector ran about 5,000 times per 1,900 cases, about a tenth of the client's CPU
    and the main source of stalls that delay every call in flight. Cyclic garbage is still
    collected, only in larger, rarer batches."""
    import gc

    old = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(max(young, old[0]), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


async def run_cases(cases: Sequence[Case], suites: dict[str, TaskSuite[Any]], model: ChatModel | None,
                    store: Store, run_id: int, *, concurrency: int = 8, max_steps: int = 20,
                    on_result: ProgressFn | None = None, attacker_base_url: str | None = None,
                    agent: AgentSpec = BUILTIN, admit: AdmitFn | None = None) -> None:
    """Run `cases` (already filtered for resume) and store each as soon as it finishes. Each case is
    claimed in the store first, so a case another live run on the same store has taken is skipped.
    `admit`, when given, is asked before each case starts; once it refuses, no further case starts."""
    queue: asyncio.Queue[Case] = asyncio.Queue()
    for c in cases:
        queue.put_nowait(c)
    defenses = {spec: get_defense(spec) for spec in {c.defense for c in cases}}
    attacks = {spec: get_attack(spec) for spec in {c.attack for c in cases if c.kind == "attacked" and c.attack}}
    store.heartbeat(run_id)
    beat = asyncio.create_task(_heartbeat(store, run_id))
    try:
        with quiet_gc():
            await _run_queue(queue, suites, model, store, run_id, defenses, attacks, concurrency=concurrency,
                             max_steps=max_steps, on_result=on_result, attacker_base_url=attacker_base_url,
                             agent=agent, admit=admit)
    finally:
        beat.cancel()


async def _heartbeat(store: Store, run_id: int) -> None:
    from randori.bench.store import HEARTBEAT_EVERY

    while True:
        await asyncio.sleep(HEARTBEAT_EVERY)
        store.heartbeat(run_id)


async def _run_queue(queue: asyncio.Queue[Case], suites: dict[str, TaskSuite[Any]], model: ChatModel | None,
                     store: Store, run_id: int, defenses: dict[str, Defense], attacks: dict[str, Attack], *,
                     concurrency: int, max_steps: int, on_result: ProgressFn | None,
                     attacker_base_url: str | None, agent: AgentSpec, admit: AdmitFn | None = None) -> None:
    attackers = {spec: a.make_attacker(attacker_base_url)  # type: ignore[attr-defined]
                 for spec, a in attacks.items() if a.kind == "adaptive"}

    async def worker() -> None:
        while True:
            try:
                case = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if admit is not None and not await admit(case):
                return
            if not store.claim(run_id, case.key):
                if on_result is not None:
                    on_result(None)
                continue
            res = await run_case(case, suites[case.suite], model, max_steps=max_steps,
                                 defense=defenses[case.defense],
                                 attack=attacks.get(case.attack) if case.attack else None,
                                 attacker=attackers.get(case.attack) if case.attack else None, agent=agent)
            store.add(run_id, [res])
            if on_result is not None:
                on_result(res)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, queue.qsize())))]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        for a in attackers.values():
            await a.aclose()
