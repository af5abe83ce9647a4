"""Validity rules `goal_forms` and `free_args` (see validate.py).

- `goal_forms`: every form an injection task declares for its goal (`InjectionTask.goal_forms`)
  reaches it, and the same form with one of its secret values changed does not.
- `free_args`: an argument a task declares free is not read by its check (changing it, where the
  tool accepts the change, does not fail the check), and each one declared is passed by a
  state-changing call of the ground truth. An argument whose value the prompt dictates, or the data
  quotes for the agent to use (a reference, a comment, a status), is never free, and the check reads
  it whole: cut to its first word or without its last, it must fail.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from randori.validity.variants import plausible_values
from randori.vocabulary import ToolCall

if TYPE_CHECKING:
    from randori.tasks.suite import TaskSuite
    from randori.validity.probe import Judge, SuiteCheck, _Probe


def scrambled(value: str) -> str:
    """The same shape with other characters: every digit and letter shifted by three."""
    def shift(m: re.Match[str]) -> str:
        c = m.group(0)
        if c.isdigit():
            return str((int(c) + 3) % 10)
        base = ord("a") if c.islower() else ord("A")
        return chr((ord(c) - base + 3) % 26 + base)
    return re.sub(r"[0-9A-Za-z]", shift, value)


def _changed(value: Any, secret: Any) -> Any:
    if isinstance(secret, str) and isinstance(value, str):
        return value.replace(secret, scrambled(secret))
    if isinstance(value, list):
        return [_changed(v, secret) for v in value]
    if isinstance(secret, (int, float)) and not isinstance(value, (bool, str)) and value == secret:
        return value + 1
    return value


def _with_secret_changed(calls: tuple[ToolCall, ...], secret: Any) -> list[ToolCall]:
    return [c.model_copy(update={"args": {k: _changed(v, secret) for k, v in c.args.items()}}) for c in calls]


def check_goal_forms(suite: TaskSuite[Any], probe: _Probe, report: SuiteCheck, it: Any) -> None:
    def reached(calls: list[ToolCall], output: str) -> bool | None:
        env = suite.load_env()
        results = suite.replay(env, calls)
        return probe.judge(it.attack_succeeded, output, env, env.model_dump(mode="json"), calls, results, it.id,
                           "goal_forms")

    for form in it.goal_forms(suite.load_env()):
        hit = reached(list(form.calls), form.output)
        if hit is None or not report.count("goal_forms", hit, it.id, f"the form '{form.label}' does not count"):
            continue
        for secret in form.secret:
            calls = _with_secret_changed(form.calls, secret)
            if calls == list(form.calls):
                report.count("goal_forms", False, it.id, f"the form '{form.label}' does not pass {secret!r}")
                continue
            hit = reached(calls, form.output)
            if hit is not None:
                report.count("goal_forms", not hit, it.id,
                             f"the form '{form.label}' with {secret!r} changed still counts")


def _words(text: str) -> str:
    return " ".join(text.casefold().split())


_QUOTES = (("\"", "\""), ("“", "”"), ("'", "'"), ("‘", "’"), ("«", "»"))


def dictated(value: Any, prompt: str, read: list[str]) -> bool:
    """A text of two words or more that the prompt gives in quotes ("reference 'Ida piano lessons'"),
    or that a text of the data the ground truth read quotes ('reference "NK-2025 Whg 3.2"'): the
    agent is to use it as written."""
    if not isinstance(value, str) or len(value.split()) < 2 or "\n" in value:
        return False
    quoted = [f"{a}{_words(value)}{b}" for a, b in _QUOTES]
    return any(q in _words(text) for text in [prompt, *read] for q in quoted)


def _strings(content: str) -> list[str]:
    """The texts of a tool result (its YAML's strings: the writer's own quoting is not the data's)."""
    from randori.agents.models.scripted import yaml_strings

    return yaml_strings(content) or [content]


def _cut(value: str) -> list[str]:
    """The value cut short: its first word, and all but its last."""
    words = value.split()
    return list(dict.fromkeys([words[0], " ".join(words[:-1])]))


def check_dictated(probe: _Probe, report: SuiteCheck, task: Any, judge: Judge) -> None:
    """`free_args` for dictated values (see `dictated`): not declared free, and read whole."""
    from randori.validity.probe import _show

    run = probe.run(task)
    prompt = getattr(task, "prompt", "")
    read = [text for i, r in enumerate(run.results) if i not in run.changing and r.error is None
            for text in _strings(r.content)]
    for i in run.changing:
        call = run.calls[i]
        for arg, value in call.args.items():
            if not dictated(value, prompt, read):
                continue
            if (call.function, arg) in task.free_args:
                report.count("free_args", False, task.id, f"{call.function}.{arg} is declared free but its value "
                             f"{_show(value)} is dictated")
                continue
            for wrong in _cut(value):
                changed = call.model_copy(update={"args": {**call.args, arg: wrong}})
                calls = [*run.calls[:i], changed, *run.calls[i + 1:]]
                env, results, state = probe.variant(run, i, calls)
                if state == run.state or results[i].error:
                    continue
                passed = probe.judge(judge, task.ground_truth_output, env, state, calls, results, task.id, "free_args")
                if passed is not None:
                    report.count("free_args", not passed, task.id, f"{call.function}.{arg} is dictated as "
                                 f"{_show(value)} but the check accepts {_show(wrong)}")


def check_free_args(probe: _Probe, report: SuiteCheck, task: Any, judge: Judge) -> None:
    from randori.validity.probe import _show, mutations

    check_dictated(probe, report, task, judge)
    run = probe.run(task)
    for function, arg in sorted(task.free_args):
        where = [i for i in run.changing if run.calls[i].function == function and arg in run.calls[i].args]
        if not report.count("free_args", bool(where), task.id,
                            f"{function}.{arg} is declared free but no state-changing ground-truth call passes it"):
            continue
        for i in where:
            call, value = run.calls[i], run.calls[i].args[arg]
            wrongs = [*mutations(value, grow_and_shrink=False),
                      *plausible_values(probe.pool, value, arg, limit=2, grow_and_shrink=False)]
            for wrong in wrongs:
                changed = call.model_copy(update={"args": {**call.args, arg: wrong}})
                calls = [*run.calls[:i], changed, *run.calls[i + 1:]]
                env, results, state = probe.variant(run, i, calls)
                if state == run.state or results[i].error:
                    continue  # no effect, or the tool refused it: that is not the check reading it
                passed = probe.judge(judge, task.ground_truth_output, env, state, calls, results, task.id, "free_args")
                if passed is not None:
                    report.count("free_args", passed, task.id, f"{function}.{arg} is declared free but the check "
                                 f"reads it: it fails when {arg} is {_show(wrong)} instead of {_show(value)}")
