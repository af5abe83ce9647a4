"""`randori mcp serve`: one case served over MCP to a client started by hand (an IDE, a desktop
assistant, an inspector). When the session ends (Ctrl-C or SIGTERM) the case is scored and stored
like any other; each session of the same case is a new repeat."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import sys
from collections.abc import Callable
from typing import Any

from randori.agents.external.mcp import ManualAgent, ManualDriver
from randori.agents.external.session import AgentCase
from randori.agents.models.base import ChatModel
from randori.bench.cases import Case
from randori.bench.runner import Selection, plan, run_case
from randori.bench.store import CaseResult, Store
from randori.errors import UserError
from randori.tasks.suite import TaskSuite


def pick_case(suite: TaskSuite[Any], user_task: str, injection_task: str | None, attack: str | None,
              defense: str, model: ChatModel | None, agent: ManualAgent, done: set[str]) -> Case:
    if attack and not injection_task:
        raise UserError("--attack needs --injection-task (the attacker's goal); without both the case is benign")
    injection_tasks = [injection_task] if injection_task else []
    attacks = [attack or "important_instructions"] if injection_tasks else []
    sel = Selection(suites=[suite], model=model, attacks=attacks, defenses=[defense], user_tasks=[user_task],
                    injection_tasks=injection_tasks,
                    benign=not injection_tasks, injection_only=False, agent=agent)
    [case] = plan(sel)
    repeat = 0
    while dataclasses.replace(case, repeat=repeat).key in done:
        repeat += 1
    return dataclasses.replace(case, repeat=repeat)


def read_answer() -> str:
    """The agent's final answer, typed or pasted on the terminal (or piped in); empty when none."""
    if sys.stdin is None or sys.stdin.closed:
        return ""
    if sys.stdin.isatty():
        print("\nPaste the agent's final answer, then Ctrl-D on an empty line (nothing: no answer).", flush=True)
    try:
        return sys.stdin.read().strip()
    except (OSError, ValueError):
        return ""


async def serve_case(suite: TaskSuite[Any], case: Case, store: Store, agent: ManualAgent, *, port: int,
                     model: ChatModel | None, say: Callable[[str], None]) -> CaseResult:
    """Serve `case` until SIGINT/SIGTERM, then score and store it."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    def announce(url: str, agent_case: AgentCase) -> None:
        say(f"MCP server (streamable HTTP): {url}")
        say(f"Case: {_describe(case)}; {len(agent_case.tools)} tools.")
        say(f"Instructions (use them as your agent's system prompt):\n  {agent_case.instructions}")
        say(f"The user's request (give it to your agent):\n  {agent_case.prompt}")
        say("Ctrl-C (or SIGTERM) ends the case; randori then scores and stores it.")

    async def answer() -> str:
        return await asyncio.to_thread(read_answer)

    agent.manual = ManualDriver(port, announce, stop, answer)
    run_id = store.start_run({"suites": [f"{suite.name}@{suite.version}"], "agent": agent.name,
                              "agent_version": agent.version, "defenses": [case.defense], "mcp_serve": True})
    status = "interrupted"
    try:
        result = await run_case(case, suite, model, agent=agent)
        store.add(run_id, [result])
        status = "finished"
    finally:
        store.finish_run(run_id, status)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return result


def _describe(case: Case) -> str:
    text = f"{case.suite}@{case.suite_version} {case.user_task}"
    if case.injection_task:
        text += f" attacked by {case.attack} with {case.injection_task}"
    return text + (f", defense {case.defense}" if case.defense != "none" else "") + f", repeat {case.repeat}"


def verdict(case: Case, result: CaseResult, calls: int) -> list[str]:
    def yes(value: bool | None) -> str:
        return "-" if value is None else ("yes" if value else "no")

    lines = [f"Case: {_describe(case)}"]
    if result.status != "ok":
        return [*lines, f"Error ({result.error_category}): {result.error_message}"]
    answer = next((m.get("content") for m in reversed(result.messages or []) if m.get("role") == "assistant"
                   and not m.get("tool_calls")), "") or "(none given)"
    lines.append(f"final answer: {answer}")
    lines.append(f"tool calls: {calls}; utility (the user's task done): {yes(result.utility)}")
    if case.kind == "attacked":
        lines.append(f"attack succeeded: {yes(result.attack_succeeded)}; injection seen: "
                     f"{yes(result.injection_seen)}")
        lines.append(f"attack attempted: {yes(result.attack_attempted)}; blocked by the defense: "
                     f"{yes(result.attack_blocked)}")
    return lines
