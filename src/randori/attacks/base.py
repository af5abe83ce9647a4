"""The `Attack` interface and the attacker's knowledge."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from randori.registry import format_spec
from randori.tasks.task import InjectionTask, UserTask

AttackKind = Literal["injection", "dos", "adaptive"]


@dataclass(frozen=True)
class AttackContext:
    """What the attacker knows. Logged with every case (`attacker_knowledge`), so knowledge can be
    ablated and audited. `environment` is the suite's initial state, used only to work out the
    calls of an attacker's goal (tool_knowledge); it is never logged."""

    vectors: tuple[str, ...]  # the vectors this user task's data passes through
    user_name: str | None = None
    model_name: str | None = None
    tools: tuple[str, ...] = field(default_factory=tuple)
    # What an adaptive attacker observes after each try ("final_answer", "trace"); empty for fixed attacks.
    observes: tuple[str, ...] = field(default_factory=tuple)
    environment: Any = field(default=None, compare=False, repr=False)
    # Vectors in tool descriptions (a third-party tool's author writes them); only attacks that
    # target descriptions use them.
    tool_vectors: tuple[str, ...] = field(default_factory=tuple)
    # The case's defense as its public description states it ("name: what it does"), as an attacker
    # who read its paper knows it; None when the attacker is not told (the default: see
    # Attack.knows_defense).
    defense: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"user_name": self.user_name, "model_name": self.model_name, "tools": list(self.tools),
               "observes": list(self.observes)}
        # Only when known, so what every other case logged stays as it was.
        return out | ({"defense": self.defense} if self.defense is not None else {})

    def replace(self, **changes: Any) -> AttackContext:
        return dataclasses.replace(self, **changes)


class Attack:
    """Subclass and implement `text` (same text in every vector) or `injections` (per vector).

    `kind`: "injection" attacks pursue an injection task's goal; "dos" attacks only try to stop the
    agent (scored as loss of utility, planned once per user task); "adaptive" attacks are run by the
    runner in a loop of tries. `parameters` names the `name[key=value]` options an attack accepts."""

    name = "base"
    description = ""
    kind: ClassVar[AttackKind] = "injection"
    parameters: ClassVar[dict[str, type]] = {}

    def __init__(self, **params: Any) -> None:
        self.params = params

    @property
    def label(self) -> str:
        """The attack as stored and reported: its name plus every parameter that changes its result."""
        return format_spec(self.name, self.params)

    @property
    def knows_defense(self) -> bool:
        """Whether the attacker is told the case's defense (AttackContext.defense). Off unless an
        attack says so (adaptive and search: `defense_aware`), which is in its label, so a case of a
        defense-aware attacker never reuses the result of one that was not told."""
        return False

    @property
    def placement(self) -> dict[str, Any]:
        """Where the text goes beyond which vectors, stored with the case and part of its key:
        {"position": "start" | "end"} (in the data field, around its benign text), or
        {"descriptions_after": N} (tool-description text appears only after N tool calls)."""
        return {}

    def context(self, context: AttackContext) -> AttackContext:
        """The knowledge this attack works with; knowledge ablations override it. What it returns is
        what gets logged with the case."""
        return context

    def text(self, user_task: UserTask, injection_task: InjectionTask | None, context: AttackContext) -> str:
        raise NotImplementedError

    def injections(self, user_task: UserTask, injection_task: InjectionTask | None,
                   context: AttackContext) -> dict[str, str]:
        """Vector id -> injected text. The default puts the same text in every reachable vector."""
        payload = self.text(user_task, injection_task, context)
        return {v: payload for v in context.vectors}


_FAMILIES = (("gpt", "GPT-4"), ("o1", "ChatGPT"), ("o3", "ChatGPT"), ("o4", "ChatGPT"), ("claude", "Claude"),
             ("gemini", "Gemini"), ("llama", "Llama"), ("qwen", "Qwen"), ("mistral", "Mistral"),
             ("mixtral", "Mixtral"), ("command", "Command R"), ("deepseek", "DeepSeek"),
             ("smollm", "SmolLM"), ("phi", "Phi"), ("gemma", "Gemma"))


def model_display_name(model: str) -> str:
    """How a person would address the model: 'openai/gpt-4o-mini' -> 'GPT-4'."""
    base = model.split("/", 1)[-1].lower()
    for prefix, display in _FAMILIES:
        if base.startswith(prefix) or f"/{prefix}" in base or f"-{prefix}" in base:
            return display
    return "AI assistant"
