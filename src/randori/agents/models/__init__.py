"""Chat model providers, named `provider/model`. Providers register in `PROVIDERS` or through the
`randori.models` entry point group, so a new model never needs a code change."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from randori.agents.models.base import CaseContext, ChatModel, ModelSettings
from randori.errors import UserError

# provider -> "module:Class"; imported only when used so start-up stays fast.
PROVIDERS: dict[str, str] = {
    "openai": "randori.agents.models.openai:OpenAIModel",
    "scripted": "randori.agents.models.scripted:ScriptedModel",
}


def _provider_table() -> dict[str, str]:
    table = dict(PROVIDERS)
    for ep in entry_points(group="randori.models"):
        table.setdefault(ep.name, ep.value)
    return table


def get_model(name: str, settings: ModelSettings | None = None, **options: Any) -> ChatModel:
    provider, sep, model = name.partition("/")
    if not sep or not model:
        raise UserError(f"model '{name}' must be named provider/model, e.g. openai/gpt-4o-mini")
    table = _provider_table()
    if provider not in table:
        raise UserError(f"unknown model provider '{provider}' (known: {', '.join(sorted(table))})")
    module_name, _, cls_name = table[provider].partition(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    return cls(model, settings or ModelSettings(), **options)  # type: ignore[no-any-return]


__all__ = ["CaseContext", "ChatModel", "ModelSettings", "PROVIDERS", "get_model"]
