"""Attacks: what text goes into the injection vectors. Registry + `randori.attacks` entry points.

An attack is named on the command line as `NAME` or `NAME[key=value,...]` (parameters, e.g.
`adaptive[attacker=openai/gpt-4o,budget=5]`); the canonical form (`Attack.label`) is what the store
and the report show and what the case key hashes."""

from __future__ import annotations

from typing import Any

from randori.attacks.base import Attack, AttackContext, model_display_name
from randori.errors import UserError
from randori.registry import Registry, coerce_params, not_a_subclass, parse_spec, start_plugin

_T = "randori.attacks.templates:"
ATTACKS: dict[str, str] = {
    "important_instructions": _T + "ImportantInstructions",
    "standing_preference": _T + "StandingPreference",
    "important_instructions_no_user_name": _T + "NoUserName",
    "important_instructions_no_model_name": _T + "NoModelName",
    "important_instructions_no_names": _T + "NoNames",
    "important_instructions_wrong_user_name": _T + "WrongUserName",
    "important_instructions_wrong_model_name": _T + "WrongModelName",
    "ignore_previous": _T + "IgnorePrevious",
    "direct": _T + "Direct",
    "system_message": _T + "SystemMessage",
    "injecagent": _T + "InjecAgent",
    "tool_knowledge": _T + "ToolKnowledge",
    "dos_stop": _T + "DoSStop",
    "dos_captcha": _T + "DoSCaptcha",
    "dos_offensive": _T + "DoSOffensive",
    "dos_illegal": _T + "DoSIllegal",
    "dos_insult": _T + "DoSInsult",
    "adaptive": "randori.attacks.adaptive:Adaptive",
    "search": "randori.attacks.search:Search",
    "tool_poisoning": "randori.attacks.tool_description:ToolPoisoning",
    "rug_pull": "randori.attacks.tool_description:RugPull",
    "bank": "randori.attacks.bank:Bank",
}

MAX_ROW = "max"  # a report row, not an attack: see bench/metrics.py


REGISTRY = Registry("attack", "randori.attacks", ATTACKS, not_a_subclass(Attack, "an Attack subclass"))


def attack_names() -> list[str]:
    return REGISTRY.names()


def get_attack(spec: str, defaults: dict[str, Any] | None = None) -> Attack:
    """The attack named by `spec`. `defaults` fill parameters the spec leaves out, for attacks that
    accept them (the CLI's --attacker-* options reach `adaptive` this way)."""
    name, raw = parse_spec(spec)
    if name == MAX_ROW:
        raise UserError("'max' is not an attack to run: the report adds a 'max' row (broken by any attack) "
                        "whenever two or more attacks ran")
    if name.startswith("agentdojo:"):
        return _agentdojo(name, raw)
    cls = REGISTRY.load(name)
    accepted: dict[str, type] = getattr(cls, "parameters", {})
    params = coerce_params(f"attack '{name}'", raw, accepted)
    for key, value in (defaults or {}).items():
        if key in accepted and key not in params and value is not None:
            params[key] = value
    attack = start_plugin(f"attack '{name}'", cls, params)
    attack.name = name
    if not hasattr(attack, "params"):  # a plugin that does not call Attack.__init__
        attack.params = {}
    return attack  # type: ignore[no-any-return]


def _agentdojo(name: str, raw: dict[str, str]) -> Attack:
    from randori.attacks.agentdojo import attack_class

    short = name.split(":", 1)[1]
    cls = attack_class(short)
    if raw:
        raise UserError(f"attack '{name}' takes no parameters (it is AgentDojo's, as AgentDojo runs it)")
    attack = cls(short)
    attack.name = name
    return attack


__all__ = ["ATTACKS", "Attack", "AttackContext", "attack_names", "get_attack", "model_display_name"]
