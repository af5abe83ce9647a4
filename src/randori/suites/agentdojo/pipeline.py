"""The stand-in for an agent pipeline that AgentDojo's attacks ask for: they read only its name, to
address the victim model the way the paper did ("GPT-4", "Claude")."""

from __future__ import annotations

from typing import Any


def target(model_name: str | None) -> Any:
    """A pipeline element named after a model AgentDojo knows whose prose name is `model_name` (as
    randori addresses the model); AgentDojo's "local" model when it knows none."""
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
    from agentdojo.models import MODEL_NAMES

    class Target(BasePipelineElement):
        def query(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("a name for AgentDojo's attacks, not an agent")

    wanted = (model_name or "").lower()
    same = [full for full, prose in MODEL_NAMES.items() if wanted and prose.lower() == wanted]
    family = [full for full in MODEL_NAMES if wanted and wanted.split()[0] in full.lower()]
    element = Target()
    element.name = (same or family or ["local"])[0]
    return element


def attack_user_name(source: Any) -> str:
    """The user AgentDojo's attacks sign as (its suites' user): randori's attacks address the same one."""
    from agentdojo.attacks import load_attack

    return str(load_attack("important_instructions", source, target(None)).user_name)
