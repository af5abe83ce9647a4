"""A `Case` is one unit of work; its key is a content hash of everything that affects its result."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

# "dos": a user task under a denial-of-service attack (no injection task; scored as loss of utility).
# "scenario" / "scenario_attacked": a scenario's sessions in order (randori.tasks.scenario), without and
# with an attack; their `injection_task` is the scenario's own goal.
Kind = Literal["benign", "attacked", "injection_only", "dos", "scenario", "scenario_attacked"]


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
    # The split the run selected this case by ({"name", "seed"}, randori.tasks.splits), or None. Not in
    # the key: a split only chooses cases, so a case run with or without --split is the same case.
    split: dict[str, str] | None = field(default=None, hash=False, compare=False)
    # A scenario case: the scenario's id and its sessions' user task ids, in order.
    scenario: str | None = None
    sessions: tuple[str, ...] = ()
    # Whether its user task needs its data (UserTask.data_directed), as the suite said when the case was
    # planned. Stored with the row, so that a report reads fidelity from the store alone. Not in the key:
    # the task's version is.
    data_directed: bool = field(default=False, hash=False, compare=False)

    @property
    def key(self) -> str:
        # The attack text itself is hashed, not just the attack's name: a reworded template, a new
        # task version or a changed setting never reuses a stale result.
        payload: dict[str, Any] = {
            "kind": self.kind, "suite": self.suite, "version": self.suite_version,
            "user_task": self.user_task, "injection_task": self.injection_task,
            "attack": self.attack, "injections": self.injections, "defense": self.defense,
            "model": self.model, "settings": self.settings, "repeat": self.repeat,
        }
        if self.agent != "builtin":  # only then: every key of a store written before agents were pluggable stays
            payload |= {"agent": self.agent, "agent_version": self.agent_version}
        if self.placement:  # only when set, so the keys of every other case stay as they were
            payload["placement"] = self.placement
        if self.scenario is not None:  # the sequence is part of what ran; other keys stay as they were
            payload |= {"scenario": self.scenario, "sessions": list(self.sessions)}
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:32]
