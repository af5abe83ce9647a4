"""Reference agents for external-agent tests: they decide like `scripted/oracle` and
`scripted/gullible`, but from what any external agent sees (the user's prompt, the tool outputs so
far and the tool descriptions it is shown), never from the harness's case. The task is found by its
prompt; the ground truth is computed on a fresh environment on which the calls so far are replayed;
the gullible one takes over when an injection task's goal is readable in a tool output or a tool's
description, as the scripted one does on the injected text.

`Replay.next(prompt, outputs, ...)` is a tool call `(name, arguments)` or the final answer (a str).
`Replay.policy` answers chat requests the same way, for the fake OpenAI-compatible server."""

from __future__ import annotations

import functools
import json
from collections import deque
from typing import Any

from randori.agents.defenses.structured import value_in_text
from randori.agents.models.scripted import injection_visible, readable_views, yaml_strings
from randori.suites import get_suite, suite_names
from randori.tasks.task import data_given

# Suites asked for by name only (AgentDojo's) that the reference agents also know: tests add theirs.
EXTRA_SUITES: list[str] = []


def _tasks() -> dict[str, tuple[Any, Any, bool]]:
    return _tasks_of(tuple(suite_names() + EXTRA_SUITES))


@functools.cache
def _tasks_of(names: tuple[str, ...]) -> dict[str, tuple[Any, Any, bool]]:
    """prompt -> (suite, task, is a user task). Injection tasks are asked by their goal (injection_only)."""
    table: dict[str, tuple[Any, Any, bool]] = {}
    for name in names:
        suite = get_suite(name)
        for it in suite.injection_tasks.values():
            table.setdefault(it.goal, (suite, it, False))
        for ut in suite.user_tasks.values():
            table[ut.prompt] = (suite, ut, True)
    return table


class Script:
    """One conversation: `step(output)` takes the output of the last call (None at the start) and
    gives the next call `(name, arguments)` or the final answer."""

    def __init__(self, prompt: str, gullible: bool):
        self.suite, self.task, self.is_user_task = _tasks()[prompt.strip()]
        self.gullible = gullible
        self.env = self.suite.load_env()
        self.queue = deque(self.task.ground_truth(self.env))
        # As the scripted agents: a call that needs what only the data gives is made only once that
        # stands, readably, in a tool output this agent was shown (a defense may have withheld it).
        self.needs = {id(c): marks for c in self.queue if (marks := data_given(self.task, c))} \
            if self.is_user_task else {}
        self.shown: list[str] = []
        self.taken_over: Any = None
        self.pending: Any = None

    def step(self, output: str | None, descriptions: str = "") -> tuple[str, dict[str, Any]] | str:
        """`descriptions`: the tool descriptions the agent is shown on this turn (a poisoned third-party
        tool is obeyed like a poisoned tool output)."""
        read = []
        if self.pending is not None and output is not None:
            self.suite.replay(self.env, [self.pending])  # the call that produced `output`, on our own copy
            read.append(output)
            self.shown += readable_views(output)
        if descriptions:
            read.append(descriptions)
        if self.gullible and self.is_user_task and self.taken_over is None:
            self.taken_over = next((it for text in read if (it := Replay.injection_seen(self.suite, text))), None)
            if self.taken_over is not None:
                self.queue.extendleft(reversed(self.taken_over.ground_truth(self.env)))
        while self.queue:
            call = self.queue.popleft()
            marks = self.needs.get(id(call), ())
            if not all(any(value_in_text(fd.evidence(call), v) for v in self.shown) for fd in marks):
                continue
            self.pending = call
            return call.function, dict(call.args)
        self.pending = None
        parts = [t.ground_truth_output for t in (self.task, self.taken_over) if t is not None and t.ground_truth_output]
        return "\n".join(parts) or "Done."


class Replay:
    def __init__(self, gullible: bool = False):
        self.gullible = gullible

    def next(self, prompt: str, outputs: list[str], descriptions: str = "",
             calls: list[tuple[str, dict[str, Any]]] | None = None) -> tuple[str, dict[str, Any]] | str:
        """Stateless: the conversation so far is replayed (a chat server sees one request at a time).
        `descriptions` are the tool descriptions sent with this request; since a rug pull changes them
        between turns, the turn from which they were shown is the first one that explains `calls`, the
        calls made so far."""
        suite = _tasks()[prompt.strip()][0]
        poisoned = self.gullible and calls is not None and Replay.injection_seen(suite, descriptions) is not None
        step: tuple[str, dict[str, Any]] | str = ""
        for start in range(len(outputs) + 1 if poisoned else 1):
            script = Script(prompt, self.gullible)
            made = []
            step = script.step(None, descriptions if start == 0 else "")
            for turn, out in enumerate(outputs, 1):
                made.append(step)
                step = script.step(out, descriptions if turn >= start else "")
            if not poisoned or json.loads(json.dumps(made)) == json.loads(json.dumps(calls)):
                break
        return step

    @staticmethod
    def injection_seen(suite: Any, output: str) -> Any:
        views = readable_views(output)
        found = next((it for it in suite.injection_tasks.values()
                      if any(injection_visible(v, it.goal) for v in views)), None)
        if found is None and any(t.show is not None for t in suite.tools):  # AgentDojo's YAML folds long lines
            views = yaml_strings(output)
            found = next((it for it in suite.injection_tasks.values()
                          if any(" ".join(it.goal.split()) in v for v in views)), None)
        return found

    def policy(self, request: dict[str, Any]) -> Any:
        """A reply for the fake OpenAI server: the first user message is the prompt."""
        messages = request["messages"]
        prompt = next(_text(m["content"]) for m in messages if m["role"] == "user")
        descriptions = "\n\n".join(t["function"].get("description", "") for t in request.get("tools") or [])
        calls = [(c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
                 for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        step = self.next(prompt, [_text(m["content"]) for m in messages if m["role"] == "tool"], descriptions, calls)
        return step if isinstance(step, str) else [step]


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


async def _drive(gullible: bool, case: Any) -> str:
    """Reads the tool list before every step, as the built-in agent sends it with every model request."""
    script = Script(case.prompt, gullible)
    step = script.step(None, _descriptions(case))
    while not isinstance(step, str):
        output = await case.call(*step)
        step = script.step(output, _descriptions(case))
    return step


def _descriptions(case: Any) -> str:
    return "\n\n".join(t.description for t in case.current_tools())


async def oracle_agent(case: Any) -> str:
    """A Python agent (`--agent tests.fakes.replay:oracle_agent`) that replays the ground truth."""
    return await _drive(False, case)


async def gullible_agent(case: Any) -> str:
    """A Python agent that replays the ground truth and obeys the first injection it reads."""
    return await _drive(True, case)
