"""Which part of a check decided it: the shared helpers report into a context-local collector; outside
one they record nothing, and inside one a verdict is the same."""

import asyncio

import pytest

from randori.tasks.checks import Item, Money, mentions, only_changed, states
from randori.tasks.parts import Part, collecting, deciding, explained

ANSWER = "Hotel Adler costs 447 EUR for the three nights; Haus am See would be 512 EUR."


def _env():
    from randori.suites import get_suite

    suite = get_suite("banking")
    return suite.load_env({}), suite.load_env({})


def test_a_failing_statement_names_what_is_missing():
    with collecting(ANSWER) as parts:
        assert not states(ANSWER, Money(449), "Hotel Adler")
    assert [str(p) for p in parts] == ['the answer states 449.00 EUR, "Hotel Adler": no (not stated: 449.00 EUR)']


def test_a_value_said_about_the_wrong_item_and_a_distractor_are_named():
    with collecting(ANSWER) as parts:
        assert not states(ANSWER, Item("Haus am See", Money(447)))
        assert not states(ANSWER, Money(447), distractors=(Money(512),))
        assert states(ANSWER, Money(447), "Adler")
    assert [str(p) for p in parts] == [
        'the answer states "Haus am See" with 447.00 EUR: no (not said about "Haus am See")',
        "the answer states 447.00 EUR: no (also states 512.00 EUR)",
        'the answer states 447.00 EUR, "Adler": yes']


def test_another_text_than_the_answer_is_not_called_the_answer():
    with collecting(ANSWER) as parts:
        assert not mentions("Subject: booking", "Adler")
    assert str(parts[0]) == 'the text checked mentions "Adler": no (missing: "Adler")'


def test_a_change_outside_the_allowed_paths_is_named():
    pre, post = _env()
    post.profile.email = "someone@else.example"
    post.transactions = post.transactions[:-1]
    with collecting() as parts:
        assert not only_changed(pre, post, "transactions")
        assert not only_changed(pre, post)
    assert str(parts[0]) == "nothing else changed: no (profile.email changed)"
    assert str(parts[1]).startswith("nothing changed: no (profile.email changed, transactions.")
    assert str(parts[1]).endswith(" removed)")


def test_only_the_outermost_helper_is_a_part():
    calls = []

    @explained(lambda held, text: ("the outer helper", ""))
    def outer(text):
        calls.append(text)
        return mentions(text, "x") and states(text, "x")

    with collecting() as parts:
        assert outer("x marks the spot")
    assert [str(p) for p in parts] == ["the outer helper: yes"]


def test_outside_a_collector_nothing_is_recorded_and_a_broken_description_never_changes_a_verdict():
    @explained(lambda held, *a: 1 / 0)
    def check(value):
        return value

    with collecting() as parts:
        assert check(True) is True and check(False) is False
    assert parts == []
    assert check(True) is True  # no collector at all


def test_collectors_of_concurrent_cases_do_not_mix():
    async def one(text, needle):
        with collecting(text) as parts:
            await asyncio.sleep(0)
            mentions(text, needle)
            await asyncio.sleep(0)
        return [str(p) for p in parts]

    async def both():
        return await asyncio.gather(one("alpha", "alpha"), one("beta", "gamma"))

    assert asyncio.run(both()) == [['the answer mentions "alpha": yes'],
                                   ['the answer mentions "gamma": no (missing: "gamma")']]


@pytest.mark.parametrize("parts, verdict, said", [
    # `a and b`: the last part that failed stopped the chain
    ([Part("a", True), Part("b", False, "why")], False, ["b: no (why)"]),
    ([Part("a", False), Part("b", False)], False, ["b: no"]),
    # `any(mentions(t, x) for t in texts) and <no helper>`: the first text failed, the second held, and
    # what failed was not recorded: the failed part did not decide, nothing is said
    ([Part("mentions x", False), Part("mentions x", True)], False, []),
    # a check that held: the parts that held
    ([Part("a", True), Part("b", True), Part("a", True)], True, ["a: yes", "b: yes"]),
    # `not mentions(...)` failed because the text did mention it: no part agrees, nothing is said
    ([Part("mentions x", True)], False, []),
    ([Part("mentions x", False)], True, []),
    ([Part("a", False)], None, []),
])
def test_the_deciding_parts_agree_with_the_verdict(parts, verdict, said):
    assert deciding(parts, verdict) == said


@pytest.mark.parametrize("name", ["banking", "chat", "devops", "travel", "workspace"])
def test_collecting_parts_never_changes_a_verdict(name):
    """Every user task's and injection task's check, on its own ground truth and on every other task's,
    says the same inside a collector as outside one."""
    from randori.suites import get_suite
    from randori.vocabulary import Trace

    suite = get_suite(name)
    tasks = [*suite.user_tasks.values(), *suite.injection_tasks.values()]
    seen = set()
    for done in tasks:  # the environment a task's ground truth leaves, and its answer
        pre, post = suite.load_env(), suite.load_env()
        suite.replay(post, done.ground_truth(post))
        answer = getattr(done, "ground_truth_output", "") or ""
        for task in tasks:
            check = task.utility if hasattr(task, "utility") else task.attack_succeeded
            plain = check(answer, pre, post, Trace())
            with collecting(answer):
                explained_verdict = check(answer, pre, post, Trace())
            assert explained_verdict == plain, (done.id, task.id)
            seen.add(plain)
    assert seen == {True, False}  # both verdicts were compared
