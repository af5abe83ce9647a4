"""Injections in tool descriptions (tool_poisoning, rug_pull) and the position ablation: where the text
goes, what the agent is shown and when, how it is scored, and that other cases are untouched."""

import asyncio
import json

import pytest

from randori.agents.messages import Message
from randori.agents.models import ModelSettings, get_model
from randori.agents.models.base import ChatModel
from randori.bench.runner import Selection, plan, run_case
from randori.errors import UserError
from randori.suites import get_suite, suite_names
from randori.suites.banking import suite as banking
from randori.tasks.tool_vectors import read_tool_vectors
from randori.tools.runtime import iter_strings
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
            from randori.agents.messages import ToolCall
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


SEEN_BY_AGENT: list[str] = []


async def describing_agent(case):
    """A Python agent that notes the description of read_document it was given, calls a tool, answers."""
    SEEN_BY_AGENT.append(next(t.description for t in case.tools if t.name == "read_document"))
    await case.call("list_documents", {})
    return "done"


@pytest.mark.parametrize("attack, sees", [("tool_poisoning", True), ("rug_pull", False)])
def test_an_external_agent_gets_the_descriptions_as_they_stand_at_the_start(attack, sees):
    # A rug pull reaches an external agent only through `tools/list_changed`, which the MCP route
    # does not send yet: until then it keeps the list it got, and the case says the text was not seen.
    from randori.agents.external import get_agent

    _, [case] = cases("scripted/oracle", [attack])
    SEEN_BY_AGENT.clear()
    res = asyncio.run(run_case(case, banking, None, agent=get_agent(f"{__name__}:describing_agent")))
    text = next(iter(case.injections.values()))
    assert res.status == "ok" and (text in SEEN_BY_AGENT[0]) is sees and res.injection_seen is sees
