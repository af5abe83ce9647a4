"""What `get_model` was asked for, kept on the model it made, so that another process (a worker of
`--executor processes` or `ray`) can build the same model in its own event loop: a model's client
is bound to the loop it was first used in and cannot cross processes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from randori.errors import UserError

if TYPE_CHECKING:
    from randori.agents.models.base import ChatModel, ModelSettings


@dataclass(frozen=True)
class ModelSpec:
    name: str
    settings: ModelSettings | None = None
    options: dict[str, Any] = field(default_factory=dict)  # get_model's keyword arguments

    def build(self) -> ChatModel:
        from randori.agents.models import get_model

        return get_model(self.name, self.settings, **self.options)


def spec_of(model: ChatModel) -> ModelSpec:
    """How to build `model` again elsewhere. A model made by `get_model` says so itself; one that
    runs in process (scripted, local) is rebuilt from its name; any other cannot be."""
    spec = getattr(model, "spec", None)
    if isinstance(spec, ModelSpec):
        return spec
    if not getattr(model, "remote", True):
        return ModelSpec(model.name, model.settings)
    raise UserError(f"{model.name} was not made by get_model, so a worker process cannot build it again; "
                    "use --executor inprocess")
