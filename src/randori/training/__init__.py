"""Randori's cases as reinforcement-learning environments, above the runner: episodes for a defending
policy (`episode`), an attacking one (`attacker`), the rows a trainer samples (`dataset`) and adapters for
trainers (`trl`). randori itself imports no trainer."""

from randori.training.episode import Episode, EpisodeSpec, Observation, Reward

__all__ = ["Episode", "EpisodeSpec", "Observation", "Reward"]
