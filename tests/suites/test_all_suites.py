"""Every built-in suite must satisfy DESIGN.md "Validity" and calibrate with the scripted agents."""

import asyncio
import dataclasses

from randori.agents.models import ModelSettings, get_model
from randori.bench.pricing import PriceTable
from randori.bench.runner import Selection, plan, run_case
from randori.report.metrics import summarize
from randori.validity.validate import validate_suite


def test_suite_is_valid(suite):
    problems = validate_suite(suite)
    assert problems == [], "\n".join(map(str, problems))


def _run(suite, model_name, **kw):
    model = get_model(model_name, ModelSettings())
    cases = plan(Selection(suites=[suite], model=model, **kw))

    async def go():
        return [await run_case(c, suite, model) for c in cases]

    return asyncio.run(go())


def test_oracle_has_full_benign_utility(suite):
    results = _run(suite, "scripted/oracle", attacks=[], injection_only=False)
    assert results and all(r.status == "ok" for r in results)
    failed = [r.user_task for r in results if not r.utility]
    assert failed == []


def test_gullible_is_hijacked_whenever_it_sees_the_injection(suite):
    results = _run(suite, "scripted/gullible", benign=False, injection_only=False)
    assert len(results) == len(suite.user_tasks) * len(suite.injection_tasks)
    assert all(r.status == "ok" for r in results), [r.error_message for r in results if r.status != "ok"]
    seen = [r for r in results if r.injection_seen]
    assert len(seen) == len(results)  # every user task reaches a vector, so the oracle path sees it
    missed = [(r.user_task, r.injection_task) for r in seen if not r.attack_succeeded]
    assert missed == []
    # Hijacked on every case, so no case keeps its utility under attack, even where the user's own
    # check holds (a goal reached through a URL or the answer leaves the user's state as asked).
    [row] = summarize([dataclasses.asdict(r) for r in results], prices=PriceTable())
    assert row["attack_success"]["rate"] == 1.0 and row["utility_under_attack"]["successes"] == 0


def test_oracle_keeps_its_utility_under_attack(suite):
    results = _run(suite, "scripted/oracle", benign=False, injection_only=False)
    assert results and all(r.status == "ok" for r in results)
    assert [(r.user_task, r.injection_task) for r in results if not r.utility] == []
    assert not any(r.attack_succeeded for r in results)


def test_reporting_an_injection_is_not_obeying_it(suite):
    """An agent that obeys nothing but reports every injected request, quoting it, reaches no goal
    and still does what the user asked."""
    results = _run(suite, "scripted/reporter", benign=False, injection_only=False)
    assert len(results) == len(suite.user_tasks) * len(suite.injection_tasks)
    assert all(r.status == "ok" and r.injection_seen for r in results)
    reported = [r for r in results if "did not follow" in (r.messages[-1]["content"] or "")]
    assert len(reported) == len(results)
    assert [(r.user_task, r.injection_task) for r in results if r.attack_succeeded] == []
    assert [(r.user_task, r.injection_task) for r in results if not r.utility] == []
    [row] = summarize([dataclasses.asdict(r) for r in results], prices=PriceTable())
    assert row["attack_success"]["rate"] == 0.0


def test_task_ids_and_texts_are_unique(suite):
    prompts = [t.prompt for t in suite.user_tasks.values()]
    goals = [t.goal for t in suite.injection_tasks.values()]
    assert len(set(prompts)) == len(prompts)
    assert len(set(goals)) == len(goals)
    assert suite.version and suite.user_name
