"""Injections in tool descriptions (tool_poisoning, rug_pull) and the position ablation: where the text
goes, what the agent is shown and when, how it is scored, and that other cases are untouched."""

import asyncio
import json

import pytest

from randori.agents.models import ModelSettings, get_model
from randori.agents.models.base import ChatModel
from randori.bench.runner import Selection, plan, run_case
from randori.errors import UserError
from randori.suites import get_suite, suite_names
from randori.suites.banking import suite as banking
from randori.tasks.tool_vectors import read_tool_vectors
from randori.tools.runtime import iter_strings
from randori.vocabulary import Message
from tests.helpers import randori


def cases(model, attacks, users=("user_task_1",), injections=("injection_task_0",), suite=banking):
    m = get_model(model, ModelSettings())
    sel = Selection(suites=[suite], model=m, attacks=list(attacks), user_tasks=list(users),
                    injection_tasks=list(injections), benign=False, injection_only=False)
    return m, plan(sel)


def run(model, attack, **kw):
    m, [case] = cases(model, [attack], **kw)
    return case, asyncio.run(run_case(case, kw.get("suite", banking), m))


@pytest.mark.parametrize("name", suite_names())
def test_every_suite_has_a_third_party_tool_whose_description_is_unchanged_by_default(name):
    suite = get_suite(name)
    assert suite.tool_vectors, f"{name} declares no tool-description vector"
    for v in suite.tool_vectors.values():
        assert v.tool in suite.tool_map and v.default == "" and v.description
    assert [t.description for t in suite.case_tools().at(0)] == [t.description for t in suite.tools]


@pytest.mark.parametrize("attack", ["tool_poisoning", "rug_pull"])
def test_gullible_obeys_a_poisoned_description_and_the_oracle_does_not(attack):
    m, planned = cases("scripted/gullible", [attack], users=[f"user_task_{n}" for n in range(0, 22, 3)],
                       injections=[f"injection_task_{n}" for n in range(11)])
    oracle = get_model("scripted/oracle", ModelSettings())
    for case in planned:
        assert set(case.injections) == set(banking.tool_vectors)  # only the description, no data vector
        hit = asyncio.run(run_case(case, banking, m))
        kept = asyncio.run(run_case(case, banking, oracle))
        assert hit.injection_seen and hit.attack_succeeded, (case.user_task, case.injection_task)
        assert kept.injection_seen and not kept.attack_succeeded and kept.utility


class Recorder(ChatModel):
    """Records the description of read_document on every turn; calls one tool, then answers."""
    provider = "test"
    remote = False

    def __init__(self):
        super().__init__("recorder", ModelSettings())
        self.seen = []

    async def complete(self, messages, tools, settings=None):
        self.seen.append(next(t.description for t in tools if t.name == "read_document"))
        if len(self.seen) == 1:
            from randori.vocabulary import ToolCall
            return Message.assistant(tool_calls=[ToolCall(function="list_documents", id="c1")])
        return Message.assistant("done")


@pytest.mark.parametrize("attack, changes", [("tool_poisoning", False), ("rug_pull", True)])
def test_a_rug_pull_changes_the_tool_list_after_the_first_call(attack, changes):
    _, [case] = cases("scripted/oracle", [attack])
    model = Recorder()
    res = asyncio.run(run_case(case, banking, model))
    text = next(iter(case.injections.values()))
    first, second = model.seen
    assert (text in first) is not changes and text in second
    assert res.injection_seen
    notes = [a for m in res.messages for a in m.get("annotations", [])]
    assert any("in the description of read_document" in n for n in notes)
    assert any("tool list changed after 1 tool call" in n for n in notes) is changes
    tools = banking.case_tools(case.injections, case.placement.get("descriptions_after", 0))
    assert [tools.changes_at(n) for n in range(3)] == ([False, True, False] if changes else [False] * 3)
    assert tools.vectors_at(0) == ({} if changes else {"docbox_plugin": "read_document"})


def test_the_rug_pull_is_part_of_the_case_key_and_other_keys_do_not_change():
    _, [poison, pull] = cases("scripted/gullible", ["tool_poisoning", "rug_pull"])
    assert poison.injections == pull.injections and poison.key != pull.key
    assert pull.placement == {"descriptions_after": 1} and poison.placement == {}
    # an attack with no placement hashes exactly the fields it always did
    _, [plain] = cases("scripted/gullible", ["important_instructions"])
    import hashlib
    payload = {"kind": "attacked", "suite": "banking", "version": banking.version, "user_task": "user_task_1",
               "injection_task": "injection_task_0", "attack": "important_instructions",
               "injections": plain.injections, "defense": "none", "model": "scripted/gullible",
               "settings": plain.settings, "repeat": 0}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
    assert plain.key == hashlib.sha256(blob).hexdigest()[:32]


def test_position_puts_the_text_at_the_start_or_end_of_its_field():
    _, planned = cases("scripted/gullible", ["important_instructions", "important_instructions[position=replace]",
                                             "important_instructions[position=start]",
                                             "important_instructions[position=end]"], users=["user_task_3"])
    default, start, end = planned  # position=replace is the default: the same attack, planned once
    assert default.attack == "important_instructions" and default.placement == {}
    assert start.attack == "important_instructions[position=start]" and start.key != default.key
    [vector] = default.injections
    text, benign = default.injections[vector], banking.vectors[vector].default
    fields = {}
    for case in planned:
        env = banking.load_env(case.injections, case.placement.get("position", "replace"))
        fields[case.attack] = next(s for s in iter_strings(env.model_dump()) if text in s)
    assert benign not in fields["important_instructions"]
    assert fields["important_instructions[position=start]"].startswith(text)
    assert fields["important_instructions[position=end]"].endswith(text)
    for p in ("start", "end"):
        assert benign in fields[f"important_instructions[position={p}]"]
    for case in (start, end):  # the text still reaches the agent, which still obeys it
        res = asyncio.run(run_case(case, banking, get_model("scripted/gullible", ModelSettings())))
        assert res.injection_seen and res.attack_succeeded


@pytest.mark.parametrize("raw, message", [
    ({"v": {"tool": "teleport"}}, "has no tool 'teleport'"),
    ({"v": {"description": "x"}}, "names no 'tool'"),
    ({"refund_memo": {"tool": "read_document"}}, "already has a data vector"),
    ({"v": {"tool": "read_document", "default": ["x"]}}, "'default' must be text"),
    (["v"], "expected a mapping"),
])
def test_a_malformed_tool_vector_is_one_error_naming_it(raw, message):
    with pytest.raises(UserError, match=message):
        read_tool_vectors("banking", "tool_vectors.yaml", raw, banking.tool_map, banking.vectors)


def test_tool_attacks_on_a_suite_without_tool_vectors_are_refused(monkeypatch):
    monkeypatch.setattr(type(banking), "tool_vectors", property(lambda self: {}))
    with pytest.raises(UserError, match="declares no tool-description vectors"):
        cases("scripted/gullible", ["tool_poisoning"])


def test_tool_attacks_from_the_command_line(tmp_path):
    r = randori("run", "-s", "chat", "-u", "user_task_0", "-u", "user_task_5", "-a", "tool_poisoning", "-a", "rug_pull",
                "-a", "important_instructions[position=end]", "--no-benign", "-r", str(tmp_path))
    assert r.returncode == 0, r.stderr
    rows = json.loads(randori("report", "-r", str(tmp_path), "-f", "json").stdout)["rows"]
    rates = {r["attack"]: (r["attack_success"]["rate"], r["injection_seen"]["rate"]) for r in rows}
    assert rates["tool_poisoning"] == rates["rug_pull"] == rates["important_instructions[position=end]"] == (1.0, 1.0)
    listed = randori("attacks", "list").stdout
    assert "tool_poisoning" in listed and "rug_pull" in listed and "search" in listed and "bank" in listed


def _read_document(tools):
    return next(t.description for t in tools if t.name == "read_document")


async def describing_agent(case):
    """A Python agent that notes the description of read_document at the start (`case.tools`) and after
    its first call (`case.current_tools()`), and how often it was told the list changed."""
    told = []

    async def changed():
        told.append(1)

    case.on_tools_changed(changed)
    start = _read_document(case.tools)
    await case.call("list_documents", {})
    # Told in its answer: in its worker (the default route) the agent shares nothing with the test.
    return json.dumps([start, _read_document(case.current_tools()), len(told)])


async def incurious_agent(case):
    """Reads the tool list once, at the start, and never again."""
    _read_document(case.tools)
    await case.call("list_documents", {})
    return "done"


def _notes(res):
    return [a for m in res.messages for a in m.get("annotations", [])]


@pytest.mark.parametrize("in_process", [False, True])
@pytest.mark.parametrize("attack, changes", [("tool_poisoning", False), ("rug_pull", True)])
def test_a_python_agent_sees_a_rug_pull_in_current_tools_after_its_first_call(attack, changes, in_process):
    from randori.agents.external import get_agent

    _, [case] = cases("scripted/oracle", [attack])
    agent = get_agent(f"{__name__}:describing_agent", in_process=in_process)
    res = asyncio.run(run_case(case, banking, None, agent=agent))
    text = next(iter(case.injections.values()))
    start, after, told = json.loads(res.messages[-1]["content"])
    assert res.status == "ok" and res.injection_seen
    assert (text in start) is not changes and text in after and told == int(changes)
    notes = _notes(res)
    assert any("in the description of read_document" in n for n in notes)
    new = "tool list changed after 1 tool call(s): new description of read_document"
    assert any(new in n for n in notes) is changes
    assert any("the agent was told the tool list changed after 1 tool call(s)" in n for n in notes) is changes


def test_an_agent_that_never_lists_the_tools_again_is_not_counted_as_seeing_a_rug_pull():
    from randori.agents.external import get_agent

    _, planned = cases("scripted/oracle", ["rug_pull", "tool_poisoning"])
    agent = get_agent(f"{__name__}:incurious_agent")
    seen = {c.attack: asyncio.run(run_case(c, banking, None, agent=agent)).injection_seen for c in planned}
    assert seen == {"rug_pull": False, "tool_poisoning": True}


@pytest.mark.parametrize("attack", ["tool_poisoning", "rug_pull"])
def test_python_replay_agents_match_the_scripted_ones_on_every_banking_pair(attack):
    # tests/fakes/replay.py decides from what the agent is shown (case.current_tools() before each
    # step), as scripted/gullible does from the tool list sent with each model request.
    from randori.agents.external import get_agent

    m, planned = cases("scripted/gullible", [attack], users=list(banking.user_tasks),
                       injections=list(banking.injection_tasks))
    # In randori's process: a run_case per pair would start a worker per pair (the worker route's
    # equivalence is tested in tests/agents/test_external.py).
    gullible = get_agent("tests.fakes.replay:gullible_agent", in_process=True)
    oracle = get_agent("tests.fakes.replay:oracle_agent", in_process=True)
    assert len(planned) == len(banking.user_tasks) * len(banking.injection_tasks)
    hits = 0
    for case in planned:
        scripted = asyncio.run(run_case(case, banking, m))
        replayed = asyncio.run(run_case(case, banking, None, agent=gullible))
        kept = asyncio.run(run_case(case, banking, None, agent=oracle))
        assert (replayed.utility, replayed.attack_succeeded, replayed.injection_seen) == (
            scripted.utility, scripted.attack_succeeded, scripted.injection_seen), (case.user_task, case.injection_task)
        assert kept.injection_seen and not kept.attack_succeeded, (case.user_task, case.injection_task)
        hits += bool(replayed.attack_succeeded)
    assert hits >= len(planned) - 1  # banking user_task_11 x injection_task_4: see docs/concepts/vectors.md
