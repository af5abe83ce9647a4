"""A suite's deterministic train/val/test splits of its user tasks and of its injection tasks.

Both axes are split, so that an attack optimised on `train` has seen no `test` prompt (user task) and
no `test` goal (injection task). Each axis is split apart: its ids are ranked by a keyed SHA-256 of
(seed, suite name, axis, id), then cut in that order into `train`, `val` and `test` by fixed
fractions (`FRACTIONS`: 50/20/30). The hash is hashlib's, never Python's salted `hash()`, so a split
is the same on every machine and in every process. The suite's version is not in the key: a new
version ranks every task it kept as before (only the cut may move when tasks are added or removed),
and so do AgentDojo's benchmark versions of one suite (`agentdojo:slack@v1` is keyed as
`agentdojo:slack`), so a task id keeps its rank across them.

With 3 or more tasks on an axis every split holds at least one; with 2, the first ranked goes to
`train` and the other to `test`; a single task is in `train`. A case belongs to split S when its
user task and its injection task (when it has one) are both in S; a case mixing splits is in none.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from randori.errors import UserError

SPLITS = ("train", "val", "test")
FRACTIONS = {"train": 0.5, "val": 0.2, "test": 0.3}
# The seed every split is cut with unless a run names another (`--split-seed`): results that name
# no seed were cut with this one.
DEFAULT_SEED = "randori-splits-1"
AXES = ("user", "injection")


def check_split(name: str) -> str:
    """`name` if it is a split, else a one-line UserError."""
    if name not in SPLITS:
        raise UserError(f"unknown split '{name}': choose one of {', '.join(SPLITS)}")
    return name


def _rank(seed: str, suite: str, axis: str, task_id: str) -> str:
    return hashlib.sha256("\x00".join((seed, suite, axis, task_id)).encode()).hexdigest()


def _sizes(n: int) -> dict[str, int]:
    """How many of `n` ranked ids each split takes (see the module's docstring)."""
    if n < 3:
        return {"train": min(n, 1), "val": 0, "test": max(n - 1, 0)}
    val = max(1, round(FRACTIONS["val"] * n))
    test = max(1, round(FRACTIONS["test"] * n))
    return {"train": n - val - test, "val": val, "test": test}


def split_ids(ids: Iterable[str], *, suite: str, axis: str, seed: str = DEFAULT_SEED) -> dict[str, tuple[str, ...]]:
    """Split name -> the ids it holds (in the order `ids` gives them: a suite's own), for one axis of
    one suite."""
    order = list(dict.fromkeys(ids))
    ranked = sorted(order, key=lambda i: (_rank(seed, suite, axis, i), i))
    out: dict[str, tuple[str, ...]] = {}
    start = 0
    for name, size in _sizes(len(ranked)).items():
        out[name] = tuple(sorted(ranked[start:start + size], key=order.index))
        start += size
    return out


@dataclass(frozen=True)
class SuiteSplits:
    """One suite's splits at one seed: per axis, split name -> ids."""

    suite: str
    seed: str
    user: Mapping[str, tuple[str, ...]]
    injection: Mapping[str, tuple[str, ...]]

    def holds(self, split: str, user_task: str | None, injection_task: str | None) -> bool:
        """Whether a case of these tasks (None: the case has none of that kind) is in `split`."""
        return ((user_task is None or user_task in self.user[split])
                and (injection_task is None or injection_task in self.injection[split]))

    def of(self, axis: str, task_id: str) -> str:
        """The split that holds a task of `axis` ("user" or "injection")."""
        table = self.user if axis == "user" else self.injection
        return next(name for name, ids in table.items() if task_id in ids)

    def as_dict(self) -> dict[str, Any]:
        return {"suite": self.suite, "seed": self.seed, "fractions": dict(FRACTIONS),
                "user_tasks": {k: list(v) for k, v in self.user.items()},
                "injection_tasks": {k: list(v) for k, v in self.injection.items()}}


def suite_splits(suite: Any, seed: str = DEFAULT_SEED) -> SuiteSplits:
    """The splits of a suite (anything with `name`, `user_tasks` and `injection_tasks`: a built-in
    suite, an AgentDojo suite at any version, a plugin's)."""
    family = suite.name.partition("@")[0]  # agentdojo:slack@v1 ranks its tasks as agentdojo:slack does
    return SuiteSplits(suite.name, seed, split_ids(suite.user_tasks, suite=family, axis="user", seed=seed),
                       split_ids(suite.injection_tasks, suite=family, axis="injection", seed=seed))
