"""Plan cases from a selection and run them with bounded concurrency, resuming by case key."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from randori.agents.agent import BUILTIN, AgentSpec
from randori.agents.defenses import get_defense
from randori.agents.models.base import ChatModel
from randori.attacks import Attack, AttackContext, get_attack, model_display_name
from randori.bench.cases import Case
from randori.bench.casework import AdmitFn as AdmitFn
from randori.bench.casework import ProgressFn as ProgressFn
from randori.bench.casework import quiet_gc as quiet_gc
from randori.bench.casework import run_case as run_case
from randori.bench.store import Store
from randori.errors import UserError
from randori.registry import describe_exception
from randori.tasks.splits import DEFAULT_SEED, suite_splits
from randori.tasks.suite import TaskSuite

if TYPE_CHECKING:
    from randori.bench.executors.base import Executor


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
    # Only the cases of this split (randori.tasks.splits), cut with `split_seed`; None: every case.
    split: str | None = None
    split_seed: str = DEFAULT_SEED
    # Only the user tasks that need their data (UserTask.data_directed).
    data_directed: bool = False

    def tasks(self, suite: TaskSuite[Any]) -> tuple[list[str], list[str]]:
        """The user and injection tasks of `suite` this selection takes: those asked for (all by
        default), only those that need their data when asked, within the split when there is one."""
        uts = _pick(suite, "user task", suite.user_tasks, self.user_tasks)
        its = _pick(suite, "injection task", suite.injection_tasks, self.injection_tasks)
        if self.data_directed:
            uts = [u for u in uts if _needs_data(suite, u)]
        if self.split is None:
            return uts, its
        splits = suite_splits(suite, self.split_seed)
        return ([u for u in uts if u in splits.user[self.split]],
                [i for i in its if i in splits.injection[self.split]])

    @property
    def split_label(self) -> dict[str, str] | None:
        """What a case of this selection records of its split (None without one)."""
        return {"name": self.split, "seed": self.split_seed} if self.split is not None else None
    # Run the suites' scenarios (randori.tasks.scenario) instead of their single-session cases:
    # each benign, and each attacked scenario under each attack; `scenario_ids` narrows them.
    scenarios: bool = False
    scenario_ids: Sequence[str] = ()


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
        if sel.scenarios:
            picked = [suite.scenarios[s] for s in _pick(suite, "scenario", suite.scenarios, sel.scenario_ids)]
            n += sum(sel.benign + (sum(_scenario_attack(a) for a in attacks) if sc.goal else 0) for sc in picked)
            continue
        uts, its = map(len, sel.tasks(suite))
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
        uts, its = sel.tasks(suite)
        subject = sel.agent.label if sel.agent.external or sel.model is None else sel.model.name
        # An external agent is known to the attacker by its declared name (--agent-version), never by its
        # command line: where it is installed must not change the attack.
        known_as = (sel.agent.version or "") if sel.agent.external else subject
        knowledge: dict[str, Any] = {"user_name": suite.user_name, "model_name": model_display_name(known_as),
                     "tools": tuple(t.name for t in suite.tools)}
        initial = suite.load_env() if attacks else None
        for defense in defenses:
            common: dict[str, Any] = {"suite": suite.name, "suite_version": suite.version, "model": subject,
                                      "settings": settings[defense], "split": sel.split_label}
            if sel.agent.external:
                common |= {"agent": sel.agent.name, "agent_version": sel.agent.version}
            if sel.scenarios:
                cases += _scenario_cases(sel, suite, attacks, defense, common, knowledge, initial)
                continue
            for rep in range(sel.repeats):
                if sel.benign:
                    cases += [Case("benign", user_task=u, injection_task=None, attack=None, defense=defense,
                                   repeat=rep, data_directed=_needs_data(suite, u), **common) for u in uts]
                if sel.injection_only:
                    cases += [Case("injection_only", user_task=None, injection_task=i, attack=None,
                                   defense=defense, repeat=rep, **common) for i in its]
                for attack in attacks:
                    for u in uts:
                        ctx = _attack_call(attack, suite, u, attack.context, AttackContext(
                            vectors=suite.reachable_vectors(u), environment=initial,
                            tool_vectors=tuple(suite.tool_vectors),
                            defense=known_defense(defense) if attack.knows_defense else None, **knowledge))
                        if attack.kind == "dos":  # no attacker goal: once per user task
                            cases.append(Case("dos", user_task=u, injection_task=None, attack=attack.label,
                                              defense=defense, repeat=rep,
                                              injections=_attack_call(attack, suite, u, attack.injections,
                                                                      suite.user_tasks[u], None, ctx),
                                              attacker_knowledge=ctx.as_dict(),
                                              data_directed=_needs_data(suite, u), **common))
                            continue
                        for i in its:
                            inj = _attack_call(attack, suite, u, attack.injections, suite.user_tasks[u],
                                               suite.injection_tasks[i], ctx)
                            cases.append(Case("attacked", user_task=u, injection_task=i,
                                              attack=attack.label, defense=defense, repeat=rep,
                                              injections=inj, attacker_knowledge=ctx.as_dict(),
                                              placement=attack.placement,
                                              data_directed=_needs_data(suite, u), **common))
    return cases


def _needs_data(suite: TaskSuite[Any], user_task: str) -> bool:
    return bool(getattr(suite.user_tasks[user_task], "data_directed", False))


def _scenario_attack(attack: Attack) -> bool:
    """Attacks that write one fixed text per case pursue a scenario's goal; denial of service and
    adaptive attacks (which rewrite between tries of one conversation) do not apply."""
    return attack.kind not in ("dos", "adaptive")


def _scenario_cases(sel: Selection, suite: TaskSuite[Any], attacks: Sequence[Attack], defense: str,
                    common: dict[str, Any], knowledge: dict[str, Any], initial: Any) -> list[Case]:
    cases: list[Case] = []
    for rep in range(sel.repeats):
        for sid in _pick(suite, "scenario", suite.scenarios, sel.scenario_ids):
            sc = suite.scenarios[sid]
            base: dict[str, Any] = {"scenario": sid, "sessions": sc.session_ids, "defense": defense, "repeat": rep,
                                    "user_task": None, **common}
            if sel.benign:
                cases.append(Case("scenario", injection_task=None, attack=None, **base))
            if sc.goal is None:
                continue
            for attack in (a for a in attacks if _scenario_attack(a)):
                ctx = _attack_call(attack, suite, sid, attack.context, AttackContext(
                    vectors=suite.scenario_vectors(sid), environment=initial,
                    tool_vectors=tuple(suite.tool_vectors), **knowledge))
                inj = _attack_call(attack, suite, sid, attack.injections, sc.sessions[0], sc.goal, ctx)
                cases.append(Case("scenario_attacked", injection_task=sc.goal.id, attack=attack.label,
                                  injections=inj, attacker_knowledge=ctx.as_dict(), placement=attack.placement,
                                  **base))
    return cases


def known_defense(spec: str) -> str:
    """A defense as an attacker who read its paper knows it: its name and public description (each
    member's, for a stack)."""
    d = get_defense(spec)
    members = getattr(d, "members", None) or [d]
    return "; ".join(f"{m.name}: {' '.join(type(m).description.split())}" for m in members)


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
    if sel.scenarios and not any(s.scenarios for s in sel.suites):
        raise UserError(f"suite(s) {', '.join(s.name for s in sel.suites)} declare no scenarios "
                        "(see `randori suites show SUITE`)")
    for what, wanted, attr in (("user task", sel.user_tasks, "user_tasks"),
                               ("injection task", sel.injection_tasks, "injection_tasks"),
                               ("scenario", sel.scenario_ids, "scenarios")):
        known = {tid for s in sel.suites for tid in getattr(s, attr)}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            names = ", ".join(s.name for s in sel.suites)
            raise UserError(f"no {what} {', '.join(unknown)} in suite(s) {names} "
                            "(see `randori suites show SUITE`)")


def _pick(suite: TaskSuite[Any], what: str, table: dict[str, Any], wanted: Sequence[str]) -> list[str]:
    return [w for w in wanted if w in table] if wanted else list(table)


async def run_cases(cases: Sequence[Case], suites: dict[str, TaskSuite[Any]], model: ChatModel | None,
                    store: Store, run_id: int, *, concurrency: int = 8, max_steps: int = 20,
                    on_result: ProgressFn | None = None, attacker_base_url: str | None = None,
                    agent: AgentSpec = BUILTIN, admit: AdmitFn | None = None,
                    executor: Executor | None = None) -> None:
    """Run `cases` (already filtered for resume) and store each as soon as it finishes. Each case is
    claimed in the store first, so a case another live run on the same store has taken is skipped.
    `admit`, when given, is asked before each case starts; once it refuses, no further case starts.
    `executor` runs the cases (default: in this process; see bench/executors); this process stays
    the store's only writer."""
    from randori.bench.executors.base import Driver, RunSpec
    from randori.bench.executors.inprocess import InProcess

    run = RunSpec(suites, model, max_steps, attacker_base_url, agent, concurrency)
    if admit is None:
        cases = longest_first(cases, suites)
    store.heartbeat(run_id)
    beat = asyncio.create_task(_heartbeat(store, run_id))
    try:
        with quiet_gc():
            await Driver(cases, executor or InProcess(), store, run_id, on_result, admit).run(run)
    finally:
        beat.cancel()


def longest_first(cases: Sequence[Case], suites: Mapping[str, TaskSuite[Any]]) -> list[Case]:
    """The order cases start in: those whose tasks' reference solutions make the most tool calls
    first (plan order among equals). Started last, the longest cases would run on alone at the end
    of a run with many cases in flight (a 15-call case takes 3 s of 200 ms replies); started first,
    they end while shorter ones still fill the run. Only the order of starting changes: what runs,
    the keys and what is stored do not. Under a spend cap (`admit`) the plan order is kept, so the
    cases a capped run gets to are not chosen by their length."""
    def weight(case: Case) -> int:
        suite = suites.get(case.suite)
        if suite is None:
            return 0
        return suite.ground_truth_calls("user", case.user_task) + suite.ground_truth_calls("injection",
                                                                                        case.injection_task)

    return sorted(cases, key=weight, reverse=True)


async def _heartbeat(store: Store, run_id: int) -> None:
    from randori.bench.store import HEARTBEAT_EVERY

    while True:
        await asyncio.sleep(HEARTBEAT_EVERY)
        store.heartbeat(run_id)
