"""The `Attack` interface and the attacker's knowledge."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from randori.tasks.task import InjectionTask, UserTask


@dataclass(frozen=True)
class AttackContext:
    """What the attacker knows. Logged with every case, so knowledge can be ablated and audited."""

    vectors: tuple[str, ...]  # the vectors this user task's data passes through
    user_name: str | None = None
    model_name: str | None = None
    tools: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {"user_name": self.user_name, "model_name": self.model_name, "tools": list(self.tools)}


class Attack:
    name = "base"
    description = ""

    def text(self, user_task: UserTask, injection_task: InjectionTask, context: AttackContext) -> str:
        raise NotImplementedError

    def injections(self, user_task: UserTask, injection_task: InjectionTask,
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
