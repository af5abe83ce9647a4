"""Structured questions a defense asks the model before it sees any data (which tools, which plan,
which calls are allowed). The question is a single tool the model must call, with a JSON schema, so it
works with every provider that does tool calls; a JSON object in a plain-text reply is accepted too.
Nothing is ever read by substring matching.

The scripted models recognise these tools by name and answer from their ground truth, so defenses
that ask them are testable offline."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, create_model

from randori.tools.function import Tool
from randori.vocabulary import Message, Usage

if TYPE_CHECKING:
    from randori.agents.defenses.base import Defense
    from randori.agents.models.base import ChatModel

CHOOSE_TOOLS = "choose_tools"
SUBMIT_PLAN = "submit_plan"
SUBMIT_POLICY = "submit_policy"
SUBMIT_PROGRAM = "submit_program"
STRUCTURED_TOOLS = frozenset({CHOOSE_TOOLS, SUBMIT_PLAN, SUBMIT_POLICY, SUBMIT_PROGRAM})
# In a plan, an argument whose value is this string is filled from tool outputs at execution time.
FILL = "<from tool output>"


def _never_called(**_: Any) -> None:  # the defense reads the call's arguments; nothing executes
    return None


def _names(tools: list[Tool]) -> Any:
    return Literal[tuple(t.name for t in tools)]  # type: ignore[valid-type]


def choose_tools_tool(tools: list[Tool]) -> Tool:
    args = create_model("choose_tools_args", __config__=ConfigDict(extra="forbid"),
                        tools=(list[_names(tools)],  # type: ignore[misc,arg-type]
                               Field(description="Names of the tools the request needs.")))
    return Tool(CHOOSE_TOOLS, "Report which of the available tools are needed to carry out the user's request.",
                _never_called, args)


def submit_plan_tool(tools: list[Tool]) -> Tool:
    step = create_model(
        "plan_step", __config__=ConfigDict(extra="forbid"),
        function=(_names(tools), Field(description="The tool to call.")),
        args=(dict[str, Any], Field(default_factory=dict, description=(
            f"Arguments known now. Give the string \"{FILL}\" for an argument that must be read from "
            "the output of an earlier step."))))
    args = create_model("submit_plan_args", __config__=ConfigDict(extra="forbid"),
                        steps=(list[step], Field(description="Every tool call needed, in order.")))  # type: ignore[valid-type]
    return Tool(SUBMIT_PLAN, "Submit the complete plan of tool calls for the user's request.", _never_called, args)


def submit_policy_tool(tools: list[Tool]) -> Tool:
    rule = create_model(
        "policy_rule", __config__=ConfigDict(extra="forbid"),
        function=(_names(tools), Field(description="A tool the request needs.")),
        fixed_args=(dict[str, Any], Field(default_factory=dict, description=(
            "Arguments whose value the user's request states (a payee, an amount...); calls of this tool "
            "must use exactly these values. Leave out anything the request does not state."))))
    args = create_model("submit_policy_args", __config__=ConfigDict(extra="forbid"),
                        allow=(list[rule], Field(description="The tool calls the request may make.")))  # type: ignore[valid-type]
    return Tool(SUBMIT_POLICY, "Submit the allow-list of tool calls for the user's request.", _never_called, args)


def submit_program_tool(tools: list[Tool]) -> Tool:
    ref = create_model(
        "program_ref", __config__=ConfigDict(extra="forbid"),
        from_step=(int, Field(description="The number (1, 2, ...) of the earlier step whose output holds the value.")),
        question=(str, Field(description="What to read from that output, e.g. 'the IBAN the bill asks to pay'.")))
    step = create_model(
        "program_step", __config__=ConfigDict(extra="forbid"),
        function=(_names(tools), Field(description="The tool to call.")),
        args=(dict[str, Any], Field(default_factory=dict, description=(
            "Arguments whose value is known now: stated in the request (or a fixed choice such as a flag)."))),
        refs=(dict[str, ref], Field(default_factory=dict, description=(  # type: ignore[valid-type]
            "Arguments whose value must be read from the output of an earlier step, by argument name."))),
        user_named=(bool, Field(default=False, description=(
            "True when the user's request itself points to what this step reads (e.g. 'the bill in my document "
            "box'). Values read from other steps may not fill recipients, accounts, e-mail addresses, URLs, "
            "commands, shared files or people given access."))))
    args = create_model("submit_program_args", __config__=ConfigDict(extra="forbid"),
                        steps=(list[step], Field(description="Every tool call needed, in order.")))  # type: ignore[valid-type]
    return Tool(SUBMIT_PROGRAM, "Submit the program of tool calls for the user's request.", _never_called, args)


def tool_catalogue(tools: list[Tool]) -> str:
    lines = []
    for t in tools:
        props = t.parameters.get("properties", {})
        params = ", ".join(props)
        summary = (t.description or "").strip().splitlines()[0] if t.description else ""
        lines.append(f"- {t.name}({params}): {summary}")
    return "\n".join(lines)


async def ask(model: ChatModel, defense: Defense, system: str, prompt: str, tool: Tool) -> dict[str, Any] | None:
    """Ask one structured question; the reply's arguments, or None when there is no usable answer.
    The call's usage is the defense's cost."""
    reply = await model.complete([Message.system(system), Message.user(prompt)], [tool])
    defense.usage = defense.usage + (reply.usage or Usage(model_calls=1))
    for call in reply.tool_calls:
        if call.function == tool.name and call.parse_error is None:
            return call.args
    return _json_object(reply.content)


def _json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a text reply (models without tool calling often answer this way)."""
    for m in re.finditer(r"\{", text or ""):
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[m.start():])
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def value_in_text(value: Any, text: str) -> bool:
    """Is `value` stated in `text`? Strings case-insensitively; numbers in the usual spellings
    (450.0 -> '450.00', '450', '1,015.00'...). Booleans are never 'stated'."""
    if value is None:
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        v = float(value)
        english = f"{v:,.2f}"
        spellings = {f"{v:.2f}", english, english.replace(",", "_").replace(".", ",").replace("_", "."),
                     f"{v:.2f}".replace(".", ",")}
        if v.is_integer():
            spellings.add(str(int(v)))
        return any(re.search(rf"(?<![\d.,]){re.escape(s)}(?![.,]?\d)", text) for s in spellings)
    if isinstance(value, str):
        return bool(value.strip()) and value.strip().lower() in text.lower()
    if isinstance(value, (list, tuple)):
        return all(value_in_text(v, text) for v in value)
    if isinstance(value, dict):
        return all(value_in_text(v, text) for v in value.values())
    return False
