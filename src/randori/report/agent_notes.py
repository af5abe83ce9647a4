"""What a report must say about how external agents were kept from their verdict: the run records
it (`AgentSpec.isolation()` in the run's config), and every report over its cases repeats it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def agent_notes(rows: Iterable[dict[str, Any]], runs: Iterable[dict[str, Any]]) -> list[str]:
    """One line per thing worth saying, for the runs that wrote `rows`."""
    used = {r.get("run_id") for r in rows}
    notes: list[str] = []
    for run in runs:
        config = run.get("config") or {}
        if run.get("id") not in used or "agent_isolation" not in config:
            continue
        agent = config.get("agent", "the agent")
        how = config["agent_isolation"]
        if how == "in_process":
            text = (f"{agent} ran in randori's own process (--agent-in-process): its results were judged "
                    "in reach of the agent")
        elif how == "process_group":
            text = (f"{agent} ran in a process group only, not in its own container: "
                    f"{config.get('agent_isolation_note', '')}")
        elif config.get("agent_isolation_note"):
            text = f"{agent}: {config['agent_isolation_note']}"
        else:
            text = ""
        reuse = config.get("agent_reuse") or 1
        if reuse > 1:
            text += ("; " if text else f"{agent}: ") + f"one process served up to {reuse} cases in turn (--agent-reuse)"
        if config.get("agent_network") == "none":
            text += ("; " if text else f"{agent}: ") + "no network but the case's MCP server (--agent-network none)"
        if text and text not in notes:
            notes.append(text)
    return notes
