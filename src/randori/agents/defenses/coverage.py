"""Which attacker goals a defense is designed to stop: every injection task has a goal kind, every
defense may declare the kinds it covers (`Defense.covers`), and `covered` answers for a defense and
an injection task (or one user task's case of it) whether the goal is inside the design.

Kinds, from the goal's calls (`randori.tasks.attempts.goal_calls`):
- `answer`: the goal needs no call; it is judged from the answer (`goal_calls == ()`);
- `sensitive`: a call whose sensitive argument (see `sensitivity`) holds a value the attacker chose;
- `call`: any other state-changing call (the object acted on, an amount, a code change).

A defense that declares nothing (`covers = None`) is "not declared", never "covered": the report can
then show a goal outside a defense's design as such rather than hide it in an average."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from randori.agents.defenses.sensitivity import argument_kind

if TYPE_CHECKING:
    from randori.agents.defenses.base import Defense
    from randori.tasks.suite import TaskSuite
    from randori.tasks.task import InjectionTask, UserTask

ANSWER = "answer"
SENSITIVE = "sensitive"
CALL = "call"
GOAL_KINDS: dict[str, str] = {
    SENSITIVE: "calls with a data-chosen sensitive argument (recipient, account, address, URL, command, "
               "person, credential, shared file)",
    CALL: "other state-changing calls the data alone causes (what is acted on, amounts, code)",
    ANSWER: "answer-only goals (judged from the answer; no call)",
}


def goal_kind(suite: TaskSuite[Any], injection_task: InjectionTask) -> str:
    """The kind of the attacker's goal (see the module's text)."""
    from randori.tasks.attempts import goal_calls

    calls = goal_calls(suite, injection_task, None)
    if not calls:
        return ANSWER
    for g in calls:
        tool = suite.tool_map.get(g.function)
        if any(argument_kind(tool, g.function, arg, v) for arg, values in g.values.items() for v in values):
            return SENSITIVE
    return CALL


def members(defense: Defense) -> list[Defense]:
    from randori.agents.defenses.stack import Stack

    return list(defense.members) if isinstance(defense, Stack) else [defense]


def declared(defense: Defense) -> frozenset[str] | None:
    """The goal kinds `defense` (or any member of a stack) is designed to stop; None when none of
    them declares any. `none` covers nothing."""
    from randori.agents.defenses.base import Defense as Base

    found = [type(m).covers if type(m) is not Base else frozenset() for m in members(defense)]
    known = [f for f in found if f is not None]
    return frozenset().union(*known) if known else None


def covered(defense: Defense, suite: TaskSuite[Any], injection_task: InjectionTask,
            user_task: UserTask | None = None) -> bool | None:
    """Whether the injection task's goal is inside `defense`'s design (None: the defense declares no
    coverage). With `user_task`, for that case: a defense may exclude pairs its design leaves open
    (`Defense.outside_design`), such as a user task that itself hands the data the choice."""
    if declared(defense) is None:
        return None
    kind = goal_kind(suite, injection_task)
    for m in members(defense):
        kinds = type(m).covers
        if kinds is None or kind not in kinds:
            continue
        if user_task is None or m.outside_design(suite, user_task, injection_task) is None:
            return True
    return False
