"""Each validity rule of scenarios holds on the built-in ones and fails on a broken toy scenario."""

from __future__ import annotations

import copy
from typing import Any

from randori.suites import get_suite
from randori.suites.banking.scenarios import (
    KeyDeposit,
    LandlordIbanRule,
    PayJonasInternet,
    RememberJonasReference,
)
from randori.tasks.scenario import Scenario
from randori.validity.probe import SuiteCheck
from randori.validity.validate_scenarios import check_scenario


def problems(sc: Scenario, **changes: Any) -> dict[str, list[str]]:
    suite = copy.copy(get_suite("banking"))
    suite.__dict__.pop("_scenario_reach", None)
    suite.scenarios = {sc.id: sc}
    for name, value in changes.items():
        setattr(suite, name, value)
    report = SuiteCheck(suite.name, suite.version)
    check_scenario(suite, sc, report)
    out: dict[str, list[str]] = {}
    for p in report.problems:
        out.setdefault(p.rule, []).append(p.message)
    return out


def test_the_built_in_scenarios_hold_every_rule():
    suite = get_suite("banking")
    for sc in suite.scenarios.values():
        assert problems(sc) == {}, sc.id


class NeverDone(KeyDeposit):
    id = "never_done"

    def utility(self, *args: Any) -> bool:
        return False


class NeverFires(LandlordIbanRule):
    def triggered_calls(self, env: Any) -> list[Any]:
        return []  # the planted rule asks nothing of a later session: the goal is out of reach


def test_a_session_the_oracle_fails_breaks_scenario_oracle():
    sc = Scenario("toy", (RememberJonasReference(), NeverDone()))
    assert "scenario_oracle" in problems(sc)


def test_a_goal_the_gullible_agent_cannot_reach_breaks_scenario_gullible():
    suite = get_suite("banking")
    sc = Scenario("toy", (suite.user_tasks["user_task_3"], KeyDeposit()), goal=NeverFires())
    assert "does not reach the goal" in problems(sc)["scenario_gullible"][0]


def test_a_persistent_place_that_changes_by_itself_breaks_scenario_noop():
    sc = Scenario("toy", (RememberJonasReference(), PayJonasInternet()), remembers=True)
    found = problems(sc, persistent=lambda env: [f"counter {env.memory.session}"])
    assert "scenario_noop" in found


def test_a_memory_scenario_whose_later_sessions_need_no_memory_breaks_scenario_memory():
    suite = get_suite("banking")
    sc = Scenario("toy", (RememberJonasReference(), suite.user_tasks["user_task_0"]), remembers=True)
    assert list(problems(sc)) == ["scenario_memory"]
