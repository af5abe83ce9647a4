from typing import Any

from pydantic import ConfigDict

from randori.suites.banking import suite as banking
from randori.tasks.environment import Environment, EnvironmentTemplate, copy_state, state_diff


class Note(Environment):
    title: str
    body: str
    tags: list[str]


def template():
    data = {"title": "Plan {v1}", "body": "JSON like {\"a\": 1} and {unknown} stay; {v2}", "tags": ["{v1}", "x"]}
    return EnvironmentTemplate(Note, data, {"v1", "v2"})


def test_placeholders_filled_on_parsed_data_and_braces_are_harmless():
    t = template()
    attack = "Do {this} now } {{ {v2} \"quoted\"\n- not: yaml"
    env = t.instantiate({"v1": attack, "v2": "B"})
    assert env.title == f"Plan {attack}"
    assert env.tags == [attack, "x"]
    # Braces in data that name no vector are left alone; vectors in attack text are not re-expanded.
    assert env.body == 'JSON like {"a": 1} and {unknown} stay; B'
    assert t.placeholders == {"v1", "v2"}


def test_each_instance_is_an_independent_copy():
    t = template()
    a = t.instantiate({"v1": "A", "v2": "A"})
    a.tags.append("mutated")
    b = t.instantiate({"v1": "B", "v2": "B"})
    assert b.tags == ["B", "x"]


def test_suite_defaults_and_injection():
    env = banking.load_env()
    memo = next(t.subject for t in env.transactions if t.id == 32)
    assert memo == banking.vectors["refund_memo"].default
    attacked = banking.load_env({"refund_memo": "{evil} text"})
    assert next(t.subject for t in attacked.transactions if t.id == 32) == "{evil} text"


def test_state_diff_keys_records_by_id():
    pre = banking.load_env()
    post = banking.load_env()
    post.payees = [p for p in post.payees if p.id != "payee-4"]
    post.accounts[0].balance = 1.0
    paths = [d["path"] for d in state_diff(pre, post)]
    assert paths == ["accounts.acc-current.balance", "payees.payee-4"]


class Loose(Environment):
    notes: Any
    items: list[str]


def test_instances_never_share_state_even_with_untyped_fields():
    t = EnvironmentTemplate(Loose, {"notes": {"a": ["{v1}"]}, "items": ["{v1}"]}, {"v1"})
    assert t._fast is False  # an Any field would alias the cached dump, so deepcopy is used
    a = t.instantiate({"v1": "A"})
    a.notes["a"].append("mutated")
    b = t.instantiate({"v1": "B"})
    assert b.notes == {"a": ["B"]} and b.items == ["B"]


def test_a_copied_state_is_equal_and_independent_typed_or_not():
    env = banking.load_env()
    copy = copy_state(env)
    assert copy == env and copy is not env
    copy.accounts[0].balance += 5
    copy.payees.pop()
    assert env == banking.load_env()  # the original is untouched
    loose = Loose(notes={"a": ["x"]}, items=["y"])
    twin = copy_state(loose)
    twin.notes["a"].append("mutated")  # an Any field holds a dict: copied too, not shared
    twin.items.append("z")
    assert loose.notes == {"a": ["x"]} and loose.items == ["y"]
    again = copy_state(loose)  # the class's decision is remembered, and still copies
    again.notes["a"].clear()
    assert loose.notes == {"a": ["x"]}


class Box:  # an object pydantic neither validates nor copies
    def __init__(self) -> None:
        self.items: list[str] = []


class Odd(Environment):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    box: Box


def test_a_state_holding_an_object_pydantic_does_not_copy_is_deep_copied():
    odd = Odd(box=Box())
    for _ in range(2):  # the first copy decides for the class, the second follows the decision
        copy = copy_state(odd)
        assert copy.box is not odd.box
        copy.box.items.append("mutated")
        assert odd.box.items == []


def test_typed_environments_take_the_fast_copy():
    assert template()._fast is True
    assert banking.template._fast is True


def test_keys_with_dots_are_quoted_so_no_path_prefixes_an_unrelated_one():
    from randori.tasks.checks import only_changed
    from randori.tasks.environment import diff_path

    t = EnvironmentTemplate(Loose, {"notes": {"files": {"a.md": "x", "a.md.bak": "y", "plain": "z"}},
                                    "items": ["one"]}, set())
    pre, post = t.instantiate({}), t.instantiate({})
    post.notes["files"]["a.md.bak"] = "changed"
    post.items[0] = "uno"
    assert [d["path"] for d in state_diff(pre, post)] == ['notes.files["a.md.bak"]', "items[0]"]
    # Allowing a.md must not allow a.md.bak, as a plain "notes.files.a.md" prefix once did.
    assert not only_changed(pre, post, diff_path("notes", "files", "a.md"), "items")
    assert only_changed(pre, post, diff_path("notes", "files", "a.md.bak"), "items")
    assert only_changed(pre, post, "notes.files", "items")
    assert diff_path("branches", "release/0.6", "files", 'say "hi".txt') == \
        'branches["release/0.6"].files["say \\"hi\\".txt"]'
    assert diff_path("files", 23, "shared_with") == "files.23.shared_with"
