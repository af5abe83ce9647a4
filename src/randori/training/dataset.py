"""The rows a trainer samples episodes from: one per case of a suite's split (benign, and attacked under
each static attack), each with the episode's chat prompt and the spec `reset(**row)` reads back. Rows of
split S hold only user tasks and injection tasks of S: a held-out goal or prompt never reaches training."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

from randori.tasks.splits import DEFAULT_SEED, check_split, suite_splits
from randori.training.episode import Episode, EpisodeSpec, suite_of


def specs(suite: str, *, split: str | None = None, split_seed: str = DEFAULT_SEED,
          attacks: Sequence[str] = ("important_instructions",), defense: str = "none", benign: bool = True,
          repeats: int = 1) -> Iterator[EpisodeSpec]:
    """The episodes of `suite` (of its `split` when given), in the suite's order."""
    s = suite_of(suite)
    cut = suite_splits(s, split_seed) if split else None
    if split:
        check_split(split)
    users = [u for u in s.user_tasks if cut is None or cut.holds(split, u, None)]  # type: ignore[arg-type]
    injections = [i for i in s.injection_tasks if cut is None or cut.holds(split, None, i)]  # type: ignore[arg-type]
    recorded = {"split": split, "split_seed": split_seed if split else None}
    for seed in range(repeats):
        if benign:
            yield from (EpisodeSpec(suite, u, defense=defense, seed=seed, attack=None, **recorded) for u in users)
        for attack in attacks:
            for u in users:
                if not s.reachable_vectors(u):
                    continue  # no attacker text is ever shown: the case would be a benign one again
                yield from (EpisodeSpec(suite, u, i, attack=attack, defense=defense, seed=seed, **recorded)
                            for i in injections)


def rows(episodes: Sequence[EpisodeSpec]) -> list[dict[str, Any]]:
    """One row per episode: `prompt` (system and user message, as `reset` will show them) and the spec."""
    async def observe() -> list[dict[str, Any]]:
        out = []
        episode = Episode()
        for spec in episodes:
            observation = await episode.reset(spec)
            await episode.close()
            out.append({"prompt": observation.messages(), **spec.as_row()})
        return out

    return asyncio.run(observe())
