"""Scripted reference models: they replay ground truths, so every path runs offline.

- `scripted/oracle` replays the user task's ground truth and gives its ground-truth answer.
- `scripted/gullible` does the same, but when injected text is visible in a tool result it carries
  out the injection task's ground truth first (once), as an agent fully taken over would.
- `scripted/noop` answers at once and calls no tool.
"""

from __future__ import annotations

from collections import deque

from randori.agents.messages import Message, ToolCall, Usage
from randori.agents.models.base import CaseContext, ChatModel, ModelSettings
from randori.errors import UserError
from randori.tools.function import Tool

KINDS = ("oracle", "gullible", "noop")


def injection_visible(content: str, text: str) -> bool:
    """Every non-blank line of `text` appears in `content` (tool output renders multi-line strings
    as indented YAML blocks, so whole-string matching would miss them)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return bool(lines) and all(ln in content for ln in lines)


class ScriptedModel(ChatModel):
    provider = "scripted"

    def __init__(self, model: str, settings: ModelSettings, **_: object):
        if model not in KINDS:
            raise UserError(f"unknown scripted model '{model}' (known: {', '.join(KINDS)})")
        super().__init__(model, settings)
        self.ctx: CaseContext | None = None
        self.queue: deque[ToolCall] = deque()
        self.taken_over = False
        self.seen_tool_messages = 0
        self.calls_made = 0

    def for_case(self, ctx: CaseContext) -> ScriptedModel:
        m = ScriptedModel(self.model, self.settings)
        m.ctx = ctx
        if self.model != "noop":
            task = ctx.user_task or ctx.injection_task
            if task is not None:
                m.queue.extend(task.ground_truth(ctx.env))
        return m

    async def complete(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Message:
        usage = Usage(model_calls=1)
        if self.model == "gullible" and not self.taken_over and self.ctx is not None:
            self._maybe_take_over(messages)
        allowed = {t.name for t in tools}
        while self.queue:
            call = self.queue.popleft()
            if call.function not in allowed:
                continue  # a defense hid this tool; a scripted agent cannot use what it cannot see
            self.calls_made += 1
            return Message.assistant(tool_calls=[call.model_copy(update={"id": f"call_{self.calls_made}"})],
                                     usage=usage)
        return Message.assistant(self._answer(), usage=usage)

    def _maybe_take_over(self, messages: list[Message]) -> None:
        assert self.ctx is not None
        tool_msgs = [m for m in messages if m.role == "tool"]
        fresh, self.seen_tool_messages = tool_msgs[self.seen_tool_messages:], len(tool_msgs)
        texts = [t for t in self.ctx.injections.values() if t]
        if self.ctx.injection_task is None or not texts:
            return
        if any(injection_visible(m.content, t) for m in fresh for t in texts):
            self.taken_over = True
            self.queue.extendleft(reversed(self.ctx.injection_task.ground_truth(self.ctx.env)))

    def _answer(self) -> str:
        if self.model == "noop" or self.ctx is None:
            return "I will not do anything."
        parts = []
        task = self.ctx.user_task or self.ctx.injection_task
        if task is not None and task.ground_truth_output:
            parts.append(task.ground_truth_output)
        if self.taken_over and self.ctx.injection_task and self.ctx.injection_task.ground_truth_output:
            parts.append(self.ctx.injection_task.ground_truth_output)
        return "\n".join(parts) or "Done."
