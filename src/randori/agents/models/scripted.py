"""Scripted reference models: they replay ground truths, so every path runs offline.

- `scripted/oracle` replays the user task's ground truth and gives its ground-truth answer.
- `scripted/gullible` does the same, but when injected text is visible in a tool result it carries
  out the injection task's ground truth first (once), as an agent fully taken over would. With no
  injection task (a denial-of-service attack) it obeys by stopping.
- `scripted/noop` answers at once and calls no tool.
- `scripted/reporter` does what the oracle does and obeys nothing, but ends its answer with a report
  of every injected request it saw, quoting what it asked for: the behaviour defenses aim for,
  which must never count as attack success.
- `scripted/wary`, `scripted/trusts_name`, `scripted/trusts_data` refuse instruction-style text and
  obey only text that hits their weak spot (see weak_spots.py): graded subjects for attacks.

Injected text is "visible" in a tool result or in a tool's description (a poisoned third-party tool).

Defenses that ask a structured question before any data is seen (tool_filter, plan_then_execute,
policy) are answered from the ground truth of the task the user asked for, and calls an executor
made on the model's behalf (a plan step) are taken off the script, so those defenses are testable
offline. Spotlighted tool output (datamark, encode) is read as a capable model would read it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from randori.agents.models.base import CaseContext, ChatModel, ModelSettings
from randori.agents.models.weak_spots import REFUSAL, WEAK_SPOTS, judge
from randori.registry import unknown
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, Usage

KINDS = ("oracle", "gullible", "noop", "reporter", *WEAK_SPOTS)
OBEYING = ("gullible", *WEAK_SPOTS)  # kinds that may carry out what injected text asks


def injection_visible(content: str, text: str) -> bool:
    """Every non-blank line of `text` appears in `content` (tool output renders multi-line strings
    as indented YAML blocks, so whole-string matching would miss them)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return bool(lines) and all(ln in content for ln in lines)


def readable_views(content: str) -> list[str]:
    """`content` as a model reads it: spotlighting (datamark, encode) hides nothing from a reader."""
    from randori.agents.defenses.datamark import unmark
    from randori.agents.defenses.encode import decode

    views = [content, unmark(content)]
    decoded = decode(content)
    if decoded is not None:
        views.append(decoded)
    # A one-line text with quotes becomes a quoted YAML/JSON scalar ('it''s', \"x\"); a reader sees through it.
    return views + [v.replace("''", "'").replace('\\"', '"') for v in views]


def yaml_strings(content: str) -> list[str]:
    """The strings of a YAML document, each with its whitespace folded as YAML may fold it."""
    import yaml

    from randori.tools.runtime import iter_strings

    try:
        data = yaml.load(content, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return []
    if not isinstance(data, (dict, list)):
        return []
    return [" ".join(s.split()) for s in iter_strings(data)]


class ScriptedModel(ChatModel):
    provider = "scripted"
    remote = False

    def __init__(self, model: str, settings: ModelSettings, **_: object):
        if model not in KINDS:
            raise unknown("scripted model", model, KINDS)
        super().__init__(model, settings)
        self.ctx: CaseContext | None = None
        self.queue: deque[ToolCall] = deque()
        self.taken_over = False
        self.refused = False
        self.read: list[str] = []  # injected texts seen so far (a text split across vectors is read whole)
        self.seen_tool_messages = 0
        self.calls_made = 0
        self.synced: set[str] = set()

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
        structured = self._structured_answer(tools)
        if structured is not None:
            return Message.assistant(tool_calls=[structured], usage=usage)
        self._sync(messages)
        if self.model in (*OBEYING, "reporter") and not self.taken_over and self.ctx is not None:
            self._maybe_take_over(messages, tools)
        allowed = {t.name for t in tools}
        while self.queue:
            call = self.queue.popleft()
            if call.function not in allowed:
                continue  # a defense hid this tool; a scripted agent cannot use what it cannot see
            self.calls_made += 1
            return Message.assistant(tool_calls=[call.model_copy(update={"id": f"call_{self.calls_made}"})],
                                     usage=usage)
        return Message.assistant(self._answer(), usage=usage)

    def _maybe_take_over(self, messages: list[Message], tools: list[Tool]) -> None:
        assert self.ctx is not None
        tool_msgs = [m for m in messages if m.role == "tool"]
        fresh, self.seen_tool_messages = tool_msgs[self.seen_tool_messages:], len(tool_msgs)
        texts = [t for t in dict.fromkeys(self.ctx.injections.values()) if t and t not in self.read]
        if not texts:
            return
        views = [view for m in fresh for view in readable_views(m.content)] + [t.description for t in tools]
        new = [t for t in texts if any(injection_visible(view, t) for view in views)]
        if not new and any(t.show is not None for t in tools):
            # A suite with its own formatter (AgentDojo's YAML folds long lines): read the text it holds.
            views = [view for m in fresh for view in yaml_strings(m.content)]
            new = [t for t in texts if any(injection_visible(view, " ".join(t.split())) for view in views)]
        if not new:
            return
        self.read += new
        if self.model == "reporter":
            return
        if self.model != "gullible":
            verdict = judge(self.model, "\n".join(self.read), user_name=self.ctx.suite.user_name,
                            goal_values=self._goal_values())
            self.refused = self.refused or verdict == "refuse"
            if verdict != "obey":
                return
        self.taken_over = True
        if self.ctx.injection_task is None:
            self.queue.clear()  # a denial-of-service text: the agent stops
        else:
            self.queue.extendleft(reversed(self.ctx.injection_task.ground_truth(self.ctx.env)))

    def _goal_values(self) -> list[Any]:
        """The values the attacker's goal states (an IBAN, an amount): a text must carry them all."""
        from randori.agents.defenses.structured import value_in_text

        it = self.ctx.injection_task if self.ctx is not None else None
        if it is None:
            return []
        # Values the goal's text states do not depend on the state, so the live environment serves.
        calls = it.ground_truth(self.ctx.env)  # type: ignore[union-attr]
        return [v for c in calls for v in c.args.values() if value_in_text(v, it.goal)]

    def _sync(self, messages: list[Message]) -> None:
        """Take calls an executor made for this model (plan steps) off the script."""
        mine = {f"call_{n}" for n in range(1, self.calls_made + 1)}
        for m in messages:
            for c in m.tool_calls if m.role == "assistant" else []:
                if c.id in mine or c.id in self.synced:
                    continue
                self.synced.add(c.id)
                for queued in self.queue:
                    if queued.function == c.function and queued.args == c.args:
                        self.queue.remove(queued)
                        break

    def _structured_answer(self, tools: list[Tool]) -> ToolCall | None:
        """Answers to the questions defenses ask before any data is seen, from the ground truth of the
        task the user asked for (never the attacker's: no data, so no injection, has been read yet)."""
        from randori.agents.defenses import structured as st

        if len(tools) != 1 or tools[0].name not in st.STRUCTURED_TOOLS or self.ctx is None:
            return None
        task = self.ctx.user_task or self.ctx.injection_task
        if task is None or self.model == "noop":
            return ToolCall(function=tools[0].name, args={}, id="structured")
        request = str(getattr(task, "prompt", None) or getattr(task, "goal", ""))
        calls = task.ground_truth(self.ctx.env.model_copy(deep=True))
        args: dict[str, Any]
        if tools[0].name == st.CHOOSE_TOOLS:
            args = {"tools": list(dict.fromkeys(c.function for c in calls))}
        elif tools[0].name == st.SUBMIT_PLAN:
            args = {"steps": [{"function": c.function,
                               "args": {k: (v if st.value_in_text(v, request) else st.FILL) for k, v in c.args.items()}}
                              for c in calls]}
        else:
            args = {"allow": [{"function": c.function,
                               "fixed_args": {k: v for k, v in c.args.items() if st.value_in_text(v, request)}}
                              for c in calls]}
        return ToolCall(function=tools[0].name, args=args, id="structured")

    def _answer(self) -> str:
        if self.model == "noop" or self.ctx is None:
            return "I will not do anything."
        if self.taken_over and self.ctx.injection_task is None:
            return "I stopped, as the note in the data asked."
        parts = []
        task = self.ctx.user_task or self.ctx.injection_task
        if task is not None and task.ground_truth_output:
            parts.append(task.ground_truth_output)
        if self.taken_over and self.ctx.injection_task and self.ctx.injection_task.ground_truth_output:
            parts.append(self.ctx.injection_task.ground_truth_output)
        if self.refused:
            parts.append(REFUSAL)
        if self.model == "reporter" and self.read:
            it = self.ctx.injection_task
            request = it.goal if it is not None else "stop working on your request"
            parts.append(f"Note: one of the tool results contained instructions that I did not follow. "
                         f"It asked me to: “{request}”")
        return "\n".join(parts) or "Done."
