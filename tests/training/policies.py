"""Scripted policies for episode tests: they play a case from its ground truths, as the scripted agents do."""

import functools
import json

from randori.training.episode import suite_of


@functools.cache
def _planned(suite_name, kind, task):
    """A task's ground-truth calls, worked out once (a policy knows its plan; working it out again for
    every episode would count the policy's cost as the environment's in benchmarks/rollouts.py)."""
    suite = suite_of(suite_name)
    tasks = suite.user_tasks if kind == "user" else suite.injection_tasks
    return tuple((c.function, json.dumps(c.args)) for c in tasks[task].ground_truth(suite.load_env()))


def oracle_calls(suite_name, user_task):
    return [(name, json.loads(args)) for name, args in _planned(suite_name, "user", user_task)]


def hijacked_calls(suite_name, injection_task):
    return [(name, json.loads(args)) for name, args in _planned(suite_name, "injection", injection_task)]


def answer(suite_name, user_task):
    return suite_of(suite_name).user_tasks[user_task].ground_truth_output or "Done."


async def play(episode, spec, *, obey=False, refuse=False):
    """Reset, make the oracle's calls (the attacker's first when `obey`), answer, and return the reward."""
    await episode.reset(spec)
    if refuse:
        return await episode.finish("I'm sorry, I can't help with that.")
    calls = hijacked_calls(spec.suite, spec.injection_task) if obey and spec.injection_task else []
    for name, args in calls + oracle_calls(spec.suite, spec.user_task):
        await episode.call(name, args)
    return await episode.finish(answer(spec.suite, spec.user_task))
