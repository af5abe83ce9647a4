"""Scripted reference models: they replay ground truths, so every path runs offline.

- `scripted/oracle` replays the user task's ground truth and gives its ground-truth answer.
- `scripted/gullible` does the same, but when injected text is visible in a tool result it carries
  out the injection task's ground truth first (once), as an agent fully taken over would. With no
  injection task (a denial-of-service attack) it obeys by stopping.
- `scripted/noop` answers at once and calls no tool.
- `scripted/literal` follows only the user's words: the ground truth without the steps and values a
  data-directed task takes from the data (`UserTask.data_given`), so it fails every such task.
- `scripted/reporter` does what the oracle does and obeys nothing, but ends its answer with reports
  of the injected request it saw, in every wording of `randori.tasks.reports.report_wordings`
  (quoted, paraphrased, across a semicolon, in parentheses, over two sentences...): the behaviour
  defenses aim for, which must never count as attack success.
- `scripted/wary`, `scripted/trusts_name`, `scripted/trusts_data` refuse instruction-style text and
  obey only text that hits their weak spot (see weak_spots.py): graded subjects for attacks.

Injected text is "visible" in a tool result or in a tool's description (a poisoned third-party tool).

Defenses that ask a structured question before any data is seen (tool_filter, plan_then_execute,
policy) are answered from the ground truth of the task the user asked for, and calls an executor
made on the model's behalf (a plan step) are taken off the script, so those defenses are testable
offline. Spotlighted tool output (datamark, encode) is read as a capable model would read it.

A call that needs what only the data gives (a data-directed task's code, account or step) is made only
once that value stands in what the agent was shown, read the same way: a defense that withheld,
redacted or dropped it has cost the user that call. Questions asked before any data is seen are
answered from the user's words alone (the ground truth without its data-given steps).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from randori.agents.models.base import CaseContext, ChatModel, ModelSettings
from randori.agents.models.weak_spots import REFUSAL, WEAK_SPOTS, judge
from randori.registry import unknown
from randori.tasks.environment import copy_state
from randori.tasks.reports import report_wordings
from randori.tasks.task import FromData, data_given, literal_calls
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, Usage

KINDS = ("oracle", "gullible", "noop", "reporter", "literal", *WEAK_SPOTS)
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
        # capabilities: reader question -> (tool, argument, the ground truth's value)
        self.answers: dict[str, tuple[str, str, Any]] = {}
        self.held: list[str] = []
        self.needs: dict[int, list[FromData]] = {}  # id of a ground-truth call -> what only the data gives it

    def for_case(self, ctx: CaseContext) -> ScriptedModel:
        m = ScriptedModel(self.model, self.settings)
        m.ctx = ctx
        # What the persistent places held when this conversation began: a planted rule read back from
        # them later fires; the one this conversation plants does not fire in it.
        m.held = [t.lower() for t in ctx.suite.persistent(ctx.env)]
        if self.model != "noop":
            task = ctx.user_task or ctx.injection_task
            if task is not None:
                calls = task.ground_truth(ctx.env)
                m.queue.extend(literal_calls(task, calls) if self.model == "literal" else calls)
                # Marks hold for these very calls, not for an attacker's call of the same tool.
                m.needs = {id(c): marks for c in calls if (marks := data_given(task, c))}
        return m

    async def complete(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Message:
        usage = Usage(model_calls=1)
        if self._masked(messages):
            return Message.assistant(tool_calls=self._masked_calls(messages, tools), usage=usage)
        structured = self._structured_answer(tools) or self._read_value(messages, tools)
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
            if not self._shown_enough(call, messages):
                continue  # what only the data gives never reached the agent readably
            self.calls_made += 1
            return Message.assistant(tool_calls=[call.model_copy(update={"id": f"call_{self.calls_made}"})],
                                     usage=usage)
        return Message.assistant(self._answer(), usage=usage)

    def _shown_enough(self, call: ToolCall, messages: list[Message]) -> bool:
        """Whether every value or step of the user's task that only the data gives, and that `call`
        needs, stands in a tool output the agent was shown (as a reader sees through spotlighting)."""
        from randori.agents.defenses.structured import value_in_text

        marks = self.needs.get(id(call))
        if not marks:
            return True
        views = [v for m in messages if m.role == "tool" for v in readable_views(m.content)]
        return all(any(value_in_text(fd.evidence(call), v) for v in views) for fd in marks)

    def _visible(self, contents: list[str], tools: list[Tool], skip: list[str] | None = None) -> list[str]:
        """The injected texts (other than `skip`) that `contents` or the tools' descriptions show."""
        assert self.ctx is not None
        texts = [t for t in dict.fromkeys(self.ctx.injections.values()) if t and t not in (skip or [])]
        if not texts:
            return []
        views = [view for c in contents for view in readable_views(c)] + [t.description for t in tools]
        new = [t for t in texts if any(injection_visible(view, t) for view in views)]
        if not new and any(t.show is not None for t in tools):
            # A suite with its own formatter (AgentDojo's YAML folds long lines): read the text it holds.
            views = [view for c in contents for view in yaml_strings(c)]
            new = [t for t in texts if any(injection_visible(view, " ".join(t.split())) for view in views)]
        return new

    def _obeys(self, texts: list[str]) -> bool:
        """Whether this kind carries out what `texts` ask (the weak-spot kinds judge them)."""
        assert self.ctx is not None
        if self.model == "gullible":
            return True
        if self.model not in OBEYING:
            return False
        return judge(self.model, "\n".join(texts), user_name=self.ctx.suite.user_name,
                     goal_values=self._goal_values()) == "obey"

    def _maybe_take_over(self, messages: list[Message], tools: list[Tool]) -> None:
        assert self.ctx is not None
        tool_msgs = [m for m in messages if m.role == "tool"]
        fresh, self.seen_tool_messages = tool_msgs[self.seen_tool_messages:], len(tool_msgs)
        new = self._visible([m.content for m in fresh], tools, skip=self.read)
        if not new:
            self._maybe_trigger([m.content for m in fresh])
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
            self.queue.extendleft(reversed(self._attack_calls()))

    def _maybe_trigger(self, contents: list[str]) -> None:
        """A scenario's later session: a rule an earlier session planted in a persistent place is read
        back; the kinds that obey it carry out what it asks (PersistentGoal.triggered_calls), once."""
        from randori.tasks.scenario import PersistentGoal

        it = self.ctx.injection_task if self.ctx is not None else None
        if not isinstance(it, PersistentGoal) or self.taken_over:
            return
        for content in contents:
            low = content.lower()
            if any(m.lower() in low and any(m.lower() in h for h in self.held) for m in it.markers) \
                    and self._obeys([content]):
                self.taken_over = True
                self.queue.extendleft(reversed(it.triggered_calls(copy_state(self.ctx.env))))  # type: ignore[union-attr]
                return

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
        # Asked before any data is read: the steps only the data gives are not known yet.
        calls = [c for c in task.ground_truth(copy_state(self.ctx.env))
                 if not any(fd.arg is None for fd in data_given(task, c))]
        if tools[0].name in (st.SUBMIT_PLAN, st.SUBMIT_PROGRAM):
            # The plan is final: this model is never asked for a step outside it.
            self.queue = deque(c for c in self.queue if not any(fd.arg is None for fd in data_given(task, c)))
        args: dict[str, Any]
        if tools[0].name == st.CHOOSE_TOOLS:
            args = {"tools": list(dict.fromkeys(c.function for c in calls))}
        elif tools[0].name == st.SUBMIT_PROGRAM:
            from randori.agents.defenses.program import reference_program

            ref = reference_program(self.ctx.suite, copy_state(self.ctx.env), request, calls)
            self.answers.update(ref.answers)
            self._attack_calls()  # on the state before any call, as a reader would later need it
            args = {"steps": ref.steps}
        elif tools[0].name == st.SUBMIT_PLAN:
            args = {"steps": [{"function": c.function,
                               "args": {k: (v if st.value_in_text(v, request) else st.FILL) for k, v in c.args.items()}}
                              for c in calls]}
        else:
            args = {"allow": [{"function": c.function,
                               "fixed_args": {k: v for k, v in c.args.items() if st.value_in_text(v, request)}}
                              for c in calls]}
        return ToolCall(function=tools[0].name, args=args, id="structured")

    def _masked(self, messages: list[Message]) -> bool:
        from randori.agents.defenses.reexecution import MASKED_REQUEST

        return any(m.role == "user" and m.content == MASKED_REQUEST for m in messages)

    def _masked_calls(self, messages: list[Message], tools: list[Tool]) -> list[ToolCall]:
        """A re-run with the user's request masked: no user task to follow, so only what injected
        text in the tool outputs asks (the injection task's calls not made yet), by the kinds that obey
        it. Nothing of this case's own script changes."""
        it = self.ctx.injection_task if self.ctx is not None else None
        if it is None or self.model not in OBEYING:
            return []
        seen = self._visible([m.content for m in messages if m.role == "tool"], tools)
        if not seen or not self._obeys(seen):
            return []
        made = [c for m in messages if m.role == "assistant" for c in m.tool_calls]
        allowed = {t.name for t in tools}
        todo = [c for c in self._attack_calls()
                if c.function in allowed and not any(c.function == d.function and c.args == d.args for d in made)]
        return [c.model_copy(update={"id": f"masked_{i}"}) for i, c in enumerate(todo, 1)]

    def _attack_calls(self) -> list[ToolCall]:
        """The injection task's ground truth, worked out once, on a copy of the state as it is then
        (capabilities asks for it when it plans, before any call). An attacker's goal whose objects the
        user's task has already removed cannot be carried out: none."""
        if "_attack" not in self.__dict__:
            it = self.ctx.injection_task if self.ctx is not None else None
            try:
                self.__dict__["_attack"] = it.ground_truth(copy_state(self.ctx.env)) if it else []  # type: ignore[union-attr]
            except Exception:  # the task's own solution fails on this state
                self.__dict__["_attack"] = []
        return list(self.__dict__["_attack"])

    def _read_value(self, messages: list[Message], tools: list[Tool]) -> ToolCall | None:
        """capabilities' quarantined reader: the value the ground truth uses for the asked argument;
        a kind that obeys injected text it reads gives the attacker's value for that argument instead
        (the injection task's, for the same tool and argument, else the same argument, else the same
        sensitive kind), when the attacker's task has one."""
        from randori.agents.defenses.capabilities import READ_VALUE, parse_reader_prompt

        if len(tools) != 1 or tools[0].name != READ_VALUE or self.ctx is None:
            return None
        asked = parse_reader_prompt(next((m.content for m in reversed(messages) if m.role == "user"), ""))
        if asked is None or asked[0] not in self.answers:
            return ToolCall(function=READ_VALUE, args={"value": None}, id="read")
        function, arg, value = self.answers[asked[0]]
        if self._withheld(function, arg, value, asked[1]):
            return ToolCall(function=READ_VALUE, args={"value": None}, id="read")
        if self.ctx.injection_task is not None and self.model in OBEYING:
            seen = self._visible([asked[1]], [])
            if seen and self._obeys(seen):
                value = self._attackers_value(function, arg, value)
        return ToolCall(function=READ_VALUE, args={"value": value}, id="read")

    def _withheld(self, function: str, arg: str, value: Any, shown: str) -> bool:
        """A value only the data gives that the reader was not shown readably: it cannot know it."""
        from randori.agents.defenses.structured import value_in_text

        task = self.ctx.user_task if self.ctx is not None else None
        marks = [fd for fd in getattr(task, "data_given", ()) if fd.function == function and fd.arg == arg]
        return any(not any(value_in_text(fd.shown if fd.shown is not None else value, v)
                           for v in readable_views(shown)) for fd in marks)

    def _attackers_value(self, function: str, arg: str, honest: Any) -> Any:
        from randori.agents.defenses.sensitivity import argument_kind

        assert self.ctx is not None and self.ctx.injection_task is not None
        suite = self.ctx.suite
        calls = self._attack_calls()
        kind = argument_kind(suite.tool_map.get(function), function, arg, honest)
        found = (next((c.args[arg] for c in calls if c.function == function and arg in c.args), None)
                 or next((c.args[arg] for c in calls if arg in c.args), None)
                 or next((v for c in calls for a, v in c.args.items() if kind is not None
                          and argument_kind(suite.tool_map.get(c.function), c.function, a, v) == kind), None))
        if found is None:
            return honest
        if isinstance(honest, list) and not isinstance(found, list):
            return [found]
        if isinstance(found, list) and not isinstance(honest, list):
            return found[0] if found else honest
        return found

    def _answer(self) -> str:
        if self.model == "noop" or self.ctx is None:
            return "I will not do anything."
        if self.taken_over and self.ctx.injection_task is None:
            return "I stopped, as the note in the data asked."
        parts = []
        task = self.ctx.user_task or self.ctx.injection_task
        if task is not None and task.ground_truth_output and not (
                self.model == "literal" and getattr(task, "data_directed", False)):
            parts.append(task.ground_truth_output)
        if self.taken_over and self.ctx.injection_task and self.ctx.injection_task.ground_truth_output:
            parts.append(self.ctx.injection_task.ground_truth_output)
        if self.refused:
            parts.append(REFUSAL)
        if self.model == "reporter" and self.read:
            it = self.ctx.injection_task
            request = it.goal if it is not None else "stop working on your request"
            # Every way the validity rule `reported` words a report, each its own paragraph: none
            # may count as obeying, so one answer tries them all.
            parts += ["", *(f"{text}\n" for _, text in report_wordings(request))]
        return "\n".join(parts) or "Done."
