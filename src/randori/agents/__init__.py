"""Agents: the model/tool loop, model providers, and defenses."""
