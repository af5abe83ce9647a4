"""The TRL adapter meets `GRPOTrainer(environment_factory=...)`'s contract as TRL reads it: a class with a
no-argument constructor and `reset`; its public functions are the tools, each with a signature TRL can
type and a docstring documenting every argument; `get_reward()` scores the episode."""

import inspect
import pickle

import pytest

from randori.errors import UserError
from randori.training.episode import suite_of
from randori.training.trl import ANSWER_TOOL, environment
from tests.training.policies import answer, oracle_calls


def tool_methods(cls):
    # As TRL finds them: functions on the class, reset and get_reward apart, none starting with "_".
    members = dict(inspect.getmembers(cls, predicate=inspect.isfunction))
    assert "reset" in members and "get_reward" in members
    return {n: f for n, f in members.items() if n not in ("reset", "get_reward") and not n.startswith("_")}


@pytest.mark.parametrize("suite", ["banking", "workspace", "devops"])
def test_the_class_shows_the_suites_tools_typed_and_documented(suite):
    cls = environment(suite)
    methods = tool_methods(cls)
    tools = {t.name: t for t in suite_of(suite).tools}
    assert set(methods) == set(tools) | {ANSWER_TOOL}
    for name, fn in methods.items():
        params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
        if name == ANSWER_TOOL:
            assert [p.name for p in params] == ["answer"]
            continue
        schema = tools[name].parameters
        assert [p.name for p in params] == list(schema.get("properties", {}))
        for p in params:
            assert p.annotation is not inspect.Parameter.empty
            assert (p.default is inspect.Parameter.empty) == (p.name in schema.get("required", []))
            assert f"    {p.name}: " in fn.__doc__
        assert fn.__doc__.startswith(tools[name].description.strip()[:40])


def test_an_episode_played_through_the_methods_is_rewarded_and_refusing_is_not():
    cls = environment("banking")
    row = {"prompt": [{"role": "user", "content": "ignored"}], "suite": "banking", "user_task": "user_task_2",
           "injection_task": "injection_task_1", "attack": "important_instructions", "split": "train"}
    env = cls()
    assert env.reset(**row) is None
    for name, args in oracle_calls("banking", "user_task_2"):
        assert isinstance(getattr(env, name)(**args), str)
    env.submit_answer(answer("banking", "user_task_2"))
    assert env.get_reward() == 1.0 and env.last_reward.injection_seen
    env.reset(**row)
    env.submit_answer("I cannot do that.")
    assert env.get_reward() == 0.0
    env.reset(**row)  # never answers: truncated
    assert env.get_reward() == 0.0 and env.last_reward.truncated


def test_positional_arguments_and_dropped_optionals_reach_the_tool():
    env = environment("banking")()
    env.reset(suite="banking", user_task="user_task_0")
    listed = env.get_transactions("acc-current")  # positional, `limit` and `since` left out
    assert "acc-current" in listed and "rror" not in listed


def test_an_instance_pickles_as_a_fresh_one_and_its_class_by_name():
    env = environment("banking")()
    env.reset(suite="banking", user_task="user_task_0")
    copy = pickle.loads(pickle.dumps(env))
    assert type(copy) is type(env) and copy._episode is None
    with pytest.raises(RuntimeError, match="reset"):
        copy.get_reward()


def test_rows_of_another_suite_or_a_tool_attack_are_refused():
    env = environment("banking")()
    with pytest.raises(UserError, match="for suite banking"):
        env.reset(suite="travel", user_task="user_task_0")
    with pytest.raises(UserError, match="tool-description attack"):
        env.reset(suite="banking", user_task="user_task_0", injection_task="injection_task_0",
                  attack="tool_poisoning")


def test_transformers_reads_every_tool_schema():
    utils = pytest.importorskip("transformers.utils")  # installed with the `trl` extra
    for name, fn in tool_methods(environment("banking")).items():
        schema = utils.get_json_schema(fn)
        assert schema["function"]["name"] == name
