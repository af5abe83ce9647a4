"""Reference agents for external-agent tests: they decide like `scripted/oracle` and
`scripted/gullible`, but from what any external agent sees (the user's prompt and the tool outputs
so far), never from the harness's case. The task is found by its prompt; the ground truth is computed
on a fresh environment on which the calls so far are replayed; the gullible one takes over when an
injection task's goal is readable in a tool output, as the scripted one does on the injected text.

`Replay.next(prompt, outputs)` is a tool call `(name, arguments)` or the final answer (a str).
`Replay.policy` answers chat requests the same way, for the fake OpenAI-compatible server."""

from __future__ import annotations

import functools
from collections import deque
from typing import Any

from randori.agents.models.scripted import injection_visible, readable_views
from randori.suites import get_suite, suite_names


@functools.cache
def _tasks() -> dict[str, tuple[Any, Any, bool]]:
    """prompt -> (suite, task, is a user task). Injection tasks are asked by their goal (injection_only)."""
    table: dict[str, tuple[Any, Any, bool]] = {}
    for name in suite_names():
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
        self.taken_over: Any = None
        self.pending: Any = None

    def step(self, output: str | None) -> tuple[str, dict[str, Any]] | str:
        if self.pending is not None and output is not None:
            self.suite.replay(self.env, [self.pending])  # the call that produced `output`, on our own copy
            if self.gullible and self.is_user_task and self.taken_over is None:
                self.taken_over = Replay.injection_seen(self.suite, output)
                if self.taken_over is not None:
                    self.queue.extendleft(reversed(self.taken_over.ground_truth(self.env)))
        if self.queue:
            self.pending = self.queue.popleft()
            return self.pending.function, dict(self.pending.args)
        self.pending = None
        parts = [t.ground_truth_output for t in (self.task, self.taken_over) if t is not None and t.ground_truth_output]
        return "\n".join(parts) or "Done."


class Replay:
    def __init__(self, gullible: bool = False):
        self.gullible = gullible

    def next(self, prompt: str, outputs: list[str]) -> tuple[str, dict[str, Any]] | str:
        """Stateless: the conversation so far is replayed (a chat server sees one request at a time)."""
        script = Script(prompt, self.gullible)
        step = script.step(None)
        for out in outputs:
            step = script.step(out)
        return step

    @staticmethod
    def injection_seen(suite: Any, output: str) -> Any:
        views = readable_views(output)
        return next((it for it in suite.injection_tasks.values()
                     if any(injection_visible(v, it.goal) for v in views)), None)

    def policy(self, request: dict[str, Any]) -> Any:
        """A reply for the fake OpenAI server: the first user message is the prompt."""
        messages = request["messages"]
        prompt = next(_text(m["content"]) for m in messages if m["role"] == "user")
        step = self.next(prompt, [_text(m["content"]) for m in messages if m["role"] == "tool"])
        return step if isinstance(step, str) else [step]


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


async def _drive(gullible: bool, case: Any) -> str:
    script = Script(case.prompt, gullible)
    step = script.step(None)
    while not isinstance(step, str):
        step = script.step(await case.call(*step))
    return step


async def oracle_agent(case: Any) -> str:
    """A Python agent (`--agent tests.fakes.replay:oracle_agent`) that replays the ground truth."""
    return await _drive(False, case)


async def gullible_agent(case: Any) -> str:
    """A Python agent that replays the ground truth and obeys the first injection it reads."""
    return await _drive(True, case)
