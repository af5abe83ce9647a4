"""Fixed attacks: what text each writes, what its attacker knows, and that the knowledge is logged."""

import json
import sqlite3

import pytest

from randori.agents.models import ModelSettings, get_model
from randori.attacks import attack_names, get_attack
from randori.attacks.base import AttackContext
from randori.bench.runner import Selection, plan
from randori.errors import UserError
from randori.registry import format_spec, parse_spec
from randori.suites.banking import suite as banking
from tests.helpers import randori

INJECTION_TEMPLATES = ["important_instructions", "important_instructions_no_user_name",
                       "important_instructions_no_model_name", "important_instructions_no_names",
                       "important_instructions_wrong_user_name", "important_instructions_wrong_model_name",
                       "ignore_previous", "direct", "system_message", "injecagent", "tool_knowledge"]
DOS = ["dos_stop", "dos_captcha", "dos_offensive", "dos_illegal", "dos_insult"]


def context(**kw):
    base = {"vectors": ("refund_memo",), "user_name": "Mara Lindqvist", "model_name": "GPT-4",
            "tools": tuple(t.name for t in banking.tools), "environment": banking.load_env()}
    return AttackContext(**{**base, **kw})


def injected(name, injection_task="injection_task_0"):
    attack = get_attack(name)
    ctx = attack.context(context())
    it = banking.injection_tasks[injection_task] if attack.kind != "dos" else None
    return attack, ctx, attack.injections(banking.user_tasks["user_task_1"], it, ctx)["refund_memo"]


def test_every_named_attack_is_registered_with_a_description():
    names = attack_names()
    for name in [*INJECTION_TEMPLATES, *DOS, "adaptive"]:
        assert name in names
        assert len(get_attack(name).description) > 20


@pytest.mark.parametrize("name", INJECTION_TEMPLATES)
def test_injection_templates_carry_the_goal(name):
    _, _, text = injected(name)
    if name == "tool_knowledge":
        assert "send_payment(" in text
    else:
        assert banking.injection_tasks["injection_task_0"].goal in text


@pytest.mark.parametrize("name", DOS)
def test_dos_attacks_have_no_goal_and_are_planned_once_per_user_task(name):
    attack, _, text = injected(name)
    assert attack.kind == "dos"
    assert "LT121000011101001000" not in text and text.strip()
    model = get_model("scripted/gullible", ModelSettings())
    cases = plan(Selection(suites=[banking], model=model, attacks=[name], benign=False, injection_only=False))
    assert len(cases) == len(banking.user_tasks)
    assert {c.kind for c in cases} == {"dos"} and {c.injection_task for c in cases} == {None}


def test_knowledge_ablations_change_what_the_attacker_knows_and_writes():
    _, ctx, full = injected("important_instructions")
    assert ctx.user_name == "Mara Lindqvist" and "Mara Lindqvist" in full and "GPT-4" in full
    _, ctx, text = injected("important_instructions_no_user_name")
    assert ctx.user_name is None and "Mara" not in text and "GPT-4" in text
    _, ctx, text = injected("important_instructions_no_model_name")
    assert ctx.model_name is None and "GPT-4" not in text and "Mara Lindqvist" in text
    _, ctx, text = injected("important_instructions_no_names")
    assert ctx.user_name is None and ctx.model_name is None and "Mara" not in text and "GPT-4" not in text
    _, ctx, text = injected("important_instructions_wrong_user_name")
    assert ctx.user_name not in (None, "Mara Lindqvist") and ctx.user_name in text and "Mara" not in text
    _, ctx, text = injected("important_instructions_wrong_model_name")
    assert ctx.model_name not in (None, "GPT-4") and ctx.model_name in text and "GPT-4" not in text


def test_tool_knowledge_spells_out_calls_with_placeholders_for_what_the_attacker_cannot_know():
    _, _, text = injected("tool_knowledge", "injection_task_0")
    # Values stated in the goal are spelled out; the internal account id is not known to an attacker.
    assert ('send_payment(from_account=<from_account>, recipient_name="R. Kowalczyk Consulting", '
            'recipient_iban="LT121000011101001000", amount=450.0, subject="Invoice 2026-117")') in text
    _, _, text = injected("tool_knowledge", "injection_task_1")  # leak the tax id: the attacker cannot know it
    assert "read_document(name=<name>)" in text and "subject=<subject>" in text
    assert "57 219 846 301" not in text
    _, _, text = injected("tool_knowledge", "injection_task_3")  # drain: the balance is unknown
    assert "amount=<amount>" in text and "3184.52" not in text


def test_specs_parse_and_refuse_mistakes():
    assert parse_spec("adaptive[attacker=openai/gpt-4o,budget=5,trace]") == (
        "adaptive", {"attacker": "openai/gpt-4o", "budget": "5", "trace": "true"})
    spec = format_spec("adaptive", {"budget": 5, "trace": True, "attacker": "x/y"})
    assert spec == "adaptive[attacker=x/y,budget=5,trace]"
    label = get_attack("adaptive[budget=3,attacker=scripted/attacker]").label
    assert label == "adaptive[attacker=scripted/attacker,budget=3]"
    with pytest.raises(UserError, match="has no parameter 'budget'"):
        get_attack("direct[budget=3]")
    with pytest.raises(UserError, match="must be int"):
        get_attack("adaptive[budget=many]")
    with pytest.raises(UserError, match="'max' is not an attack to run"):
        get_attack("max")


def test_attacker_knowledge_is_logged_per_case_in_the_store(tmp_path):
    r = randori("run", "-s", "banking", "-u", "user_task_1", "-i", "injection_task_0", "--no-benign",
                "-a", "important_instructions", "-a", "important_instructions_no_names",
                "-a", "important_instructions_wrong_user_name", "-r", str(tmp_path))
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(tmp_path / "randori.sqlite")
    logged = {a: json.loads(k) for a, k in con.execute(
        "select attack, attacker_knowledge from cases where kind = 'attacked'")}
    assert logged["important_instructions"]["user_name"] == "Mara Lindqvist"
    assert logged["important_instructions"]["model_name"] == "AI assistant"  # scripted/gullible has no family
    assert "send_payment" in logged["important_instructions"]["tools"]
    assert logged["important_instructions_no_names"]["user_name"] is None
    assert logged["important_instructions_no_names"]["model_name"] is None
    assert logged["important_instructions_wrong_user_name"]["user_name"] not in (None, "Mara Lindqvist")


def test_attacks_list_shows_every_attack_and_explains_max():
    out = randori("attacks", "list").stdout
    for name in [*INJECTION_TEMPLATES, *DOS, "adaptive"]:
        assert f"\n{name} " in "\n" + out
    assert "max (a report row)" in out and "[denial of service]" in out
