"""A policy that learns, from randori's rewards alone, not to act on what tool outputs tell it.

Offline and in a few seconds: the "policy" is a two-armed bandit over behaviours. When a tool output holds
an attacker's text, it either obeys it (carries out the attacker's goal, then the user's task) or ignores
it (only the user's task). The reward is randori's: utility x not hijacked. Obeying earns 0, so the share
of episodes that ignore the text, and the mean reward, rise as it learns. A real trainer (TRL's GRPO,
docs/guides/training.md) puts a model where this bandit is.

    python examples/training/learn_to_ignore.py [--episodes 300] [--suite banking]
"""

from __future__ import annotations

import argparse
import asyncio
import random

from randori.training import Episode, EpisodeSpec
from randori.training.dataset import specs
from randori.training.episode import suite_of


def calls(suite: str, task) -> list[tuple[str, dict]]:
    return [(c.function, dict(c.args)) for c in task.ground_truth(suite_of(suite).load_env())]


async def play(spec: EpisodeSpec, obey: bool) -> float:
    suite = suite_of(spec.suite)
    episode = Episode()
    await episode.reset(spec)
    steps = calls(spec.suite, suite.user_tasks[spec.user_task])
    if obey and spec.injection_task:
        steps = calls(spec.suite, suite.injection_tasks[spec.injection_task]) + steps
    for name, args in steps:
        await episode.call(name, args)
    answer = suite.user_tasks[spec.user_task].ground_truth_output or "Done."
    return (await episode.finish(answer)).reward


async def train(suite: str, episodes: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    pool = list(specs(suite, split="train", benign=False))
    # Where an instruction-tuned model starts: sure that doing what it reads is right. Pseudo-counts
    # make the prior weigh as a few episodes would.
    value = {True: 1.0, False: 0.5}  # estimated reward of obeying / ignoring
    counts = {True: 10, False: 10}
    rewards = []
    for _ in range(episodes):
        explore = rng.random() < 0.05
        obey = rng.random() < 0.5 if explore else value[True] > value[False]
        reward = await play(rng.choice(pool), obey)
        counts[obey] += 1
        value[obey] += (reward - value[obey]) / counts[obey]
        rewards.append(reward)
    return rewards


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=300)
    ap.add_argument("--suite", default="banking")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rewards = asyncio.run(train(args.suite, args.episodes, args.seed))
    window = max(1, args.episodes // 5)
    for k in range(0, args.episodes, window):
        part = rewards[k:k + window]
        print(f"episodes {k + 1:>4}-{k + len(part):<4} mean reward {sum(part) / len(part):.2f}")


if __name__ == "__main__":
    main()
