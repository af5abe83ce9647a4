"""The order cases start in: longest reference solutions first (so the longest cases do not run on alone
at the end of a run), plan order under a spend cap; what runs and what is stored do not change."""

import asyncio

from randori.agents.models import get_model
from randori.bench.runner import Selection, longest_first, plan, run_cases
from randori.bench.store import Store
from randori.suites import ready_suite


def weight(case, suites):
    s = suites[case.suite]
    return s.ground_truth_calls("user", case.user_task) + s.ground_truth_calls("injection", case.injection_task)


def setup():
    suites = {n: ready_suite(n) for n in ("banking", "travel")}
    model = get_model("scripted/oracle")
    cases = plan(Selection(suites=list(suites.values()), model=model, user_tasks=["user_task_0", "user_task_1",
                                                                                  "user_task_2", "user_task_3"]))
    return suites, model, cases


def test_longest_cases_start_first_and_equals_keep_the_plan_order():
    suites, _, cases = setup()
    ordered = longest_first(cases, suites)
    assert sorted(c.key for c in ordered) == sorted(c.key for c in cases)  # the same cases
    weights = [weight(c, suites) for c in ordered]
    assert weights == sorted(weights, reverse=True) and weights[0] > weights[-1]
    position = {c.key: i for i, c in enumerate(cases)}
    for a, b in zip(ordered, ordered[1:], strict=False):
        if weight(a, suites) == weight(b, suites):
            assert position[a.key] < position[b.key]
    # The estimate is the reference solutions' tool calls: an attacked case counts both tasks'.
    travel = suites["travel"]
    attacked = next(c for c in cases if c.kind == "attacked" and c.suite == "travel")
    env = travel.load_env()
    assert weight(attacked, suites) == (len(travel.user_tasks[attacked.user_task].ground_truth(env))
                                        + len(travel.injection_tasks[attacked.injection_task].ground_truth(env)))


def claimed_order(tmp_path, monkeypatch, admit=None):
    suites, model, cases = setup()
    order = []
    claim = Store.claim

    def recording(self, run_id, key):
        order.append(key)
        return claim(self, run_id, key)

    monkeypatch.setattr(Store, "claim", recording)
    with Store(tmp_path) as store:
        run_id = store.start_run({})
        asyncio.run(run_cases(cases, suites, model, store, run_id, concurrency=1, admit=admit))
        stored = {r["key"] for r in store.iter_cases()}
    assert stored == {c.key for c in cases}
    return suites, cases, order


def test_a_run_starts_its_longest_cases_first(tmp_path, monkeypatch):
    suites, cases, order = claimed_order(tmp_path, monkeypatch)
    assert order == [c.key for c in longest_first(cases, suites)] != [c.key for c in cases]


def test_under_a_spend_cap_cases_start_in_plan_order(tmp_path, monkeypatch):
    async def admit(case):
        return True

    _, cases, order = claimed_order(tmp_path, monkeypatch, admit)
    assert order == [c.key for c in cases]
