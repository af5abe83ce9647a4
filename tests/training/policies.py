"""Scripted policies for episode tests: they play a case from its ground truths, as the scripted agents do."""

from randori.training.episode import suite_of


def oracle_calls(suite_name, user_task):
    suite = suite_of(suite_name)
    return [(c.function, dict(c.args)) for c in suite.user_tasks[user_task].ground_truth(suite.load_env())]


def hijacked_calls(suite_name, injection_task):
    suite = suite_of(suite_name)
    return [(c.function, dict(c.args)) for c in suite.injection_tasks[injection_task].ground_truth(suite.load_env())]


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
