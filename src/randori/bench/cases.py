"""A `Case` is one unit of work; its key is a content hash of everything that affects its result."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

# "dos": a user task under a denial-of-service attack (no injection task; scored as loss of utility).
Kind = Literal["benign", "attacked", "injection_only", "dos"]


@dataclass(frozen=True)
class Case:
    kind: Kind
    suite: str
    suite_version: str
    user_task: str | None
    injection_task: str | None
    attack: str | None
    defense: str
    model: str
    settings: dict[str, Any]
    repeat: int
    # The agent under test: "builtin" (the ToolAgent driven by `model`) or an external one, with the
    # version its user gave. For an external agent `model` holds its label (see agents/agent.py).
    agent: str = "builtin"
    agent_version: str | None = None
    injections: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    attacker_knowledge: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # Where the attack puts its text, beyond which vectors (Attack.placement): {"position": "start"},
    # {"descriptions_after": 1} for a rug pull. Empty for most attacks.
    placement: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def key(self) -> str:
        # The attack text itself is hashed, not just the attack's name: a reworded template, a new
        # task version or a changed setting never reuses a stale result.
        payload = {
            "kind": self.kind, "suite": self.suite, "version": self.suite_version,
            "user_task": self.user_task, "injection_task": self.injection_task,
            "attack": self.attack, "injections": self.injections, "defense": self.defense,
            "model": self.model, "settings": self.settings, "repeat": self.repeat,
        }
        if self.agent != "builtin":  # only then: every key of a store written before agents were pluggable stays
            payload |= {"agent": self.agent, "agent_version": self.agent_version}
        if self.placement:  # only when set, so the keys of every other case stay as they were
            payload["placement"] = self.placement
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:32]
