"""AgentDojo's own attacks by name (`--attack agentdojo:important_instructions`), from its installed
package, on AgentDojo's suites: the paper's setting, text for text."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from randori.attacks.base import Attack, AttackContext, AttackKind
from randori.errors import UserError
from randori.suites import agentdojo
from randori.tasks.task import InjectionTask, UserTask


def attack_class(name: str) -> type[AgentDojoAttack]:
    """The randori attack for AgentDojo's attack `name` (without the `agentdojo:` prefix)."""
    if not agentdojo.installed():
        raise UserError(f"AgentDojo's attacks need the agentdojo package: {agentdojo.install_hint()}")
    from agentdojo.attacks.attack_registry import ATTACKS

    if name not in ATTACKS:
        known = ", ".join(agentdojo.PREFIX + a for a in sorted(ATTACKS))
        raise UserError(f"unknown attack '{agentdojo.PREFIX}{name}' (AgentDojo's attacks: {known})")
    return AgentDojoDoS if ATTACKS[name].is_dos_attack else AgentDojoAttack


class AgentDojoAttack(Attack):
    """Runs AgentDojo's attack on the case's user and injection task. Its text names the model as
    AgentDojo would: by the model AgentDojo knows under the prose name randori gives the model."""

    description = "AgentDojo's own attack of this name, from its installed package."

    def __init__(self, attack: str, **params: Any) -> None:
        super().__init__(**params)
        self.attack = attack

    def injections(self, user_task: UserTask, injection_task: InjectionTask | None,
                   context: AttackContext) -> dict[str, str]:
        source = getattr(user_task, "source", None)
        if source is None:
            raise UserError(f"attack {agentdojo.PREFIX}{self.attack} runs on AgentDojo's suites only "
                            f"(--suite {agentdojo.PREFIX}banking and the like)")
        target = injection_task if injection_task is not None else next(iter(source.injection_tasks.values()))
        loaded = _loaded(self.attack, source, context.model_name, context.vectors)
        return dict(loaded.attack(user_task.task, getattr(target, "task", target)))  # type: ignore[attr-defined]


class AgentDojoDoS(AgentDojoAttack):
    kind: ClassVar[AttackKind] = "dos"


@functools.lru_cache(maxsize=256)
def _loaded(name: str, source: Any, model_name: str | None, vectors: tuple[str, ...]) -> Any:
    """AgentDojo's attack object for one user task's vectors. The vectors a user task reaches are
    randori's (the same rule as AgentDojo's, checked equal in the tests): AgentDojo would replay the
    ground truth again per attack, through its YAML loader."""
    from agentdojo.attacks.attack_registry import load_attack

    from randori.suites.agentdojo.pipeline import target

    attack = load_attack(name, source, target(model_name))
    attack.get_injection_candidates = lambda user_task: list(vectors)
    return attack
