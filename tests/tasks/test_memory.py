"""The memory tool set: notes kept in the state, found by their words, deleted by id, and traced back
to the tool output their text came from (by the harness, from the trace)."""

from __future__ import annotations

from pydantic import Field

from randori.tasks.environment import Environment
from randori.tasks.memory import MEMORY_TOOLS, USER_REQUEST, Memory, attribute
from randori.tools.runtime import run_tool
from randori.vocabulary import Message, ToolCall, ToolResult, Trace

TOOLS = {t.name: t for t in MEMORY_TOOLS}


class Env(Environment):
    memory: Memory = Field(default_factory=Memory)


def call(env: Env, name: str, **args: object) -> ToolResult:
    return run_tool(TOOLS, env, ToolCall(function=name, args=args, id=f"c-{name}"))


def test_notes_are_saved_searched_listed_and_deleted_in_the_state():
    env = Env()
    env.memory.session = 2
    call(env, "save_note", text="Pay Jonas with reference WG-Kochstr", tags=["Jonas"])
    call(env, "save_note", text="Prefers window seats")
    assert [(n.id, n.session) for n in env.memory.notes] == [(1, 2), (2, 2)]
    found = call(env, "search_notes", query="jonas wg-kochstr")
    assert "WG-Kochstr" in found.content and "window" not in found.content
    assert "saved_in_session: 2" in call(env, "list_notes").content
    assert call(env, "search_notes", query="jonas aisle").content.strip() in ("[]", "")
    call(env, "delete_note", note_id=1)
    assert env.memory.texts() == ["Prefers window seats"]
    assert call(env, "delete_note", note_id=9).error
    assert call(env, "save_note", text="  ").error


def _tool_message(function: str, call_id: str, content: str) -> Message:
    return Message(role="tool", content=content,
                   tool_result=ToolResult(call_id=call_id, function=function, content=content))


def test_a_notes_source_is_the_tool_output_that_held_its_text_else_the_users_request():
    env = Env()
    env.memory.session = 1
    call(env, "save_note", text="New landlord IBAN DE02500105170648812237 for every payment")
    call(env, "save_note", text="I like my statements in German")
    trace = Trace(messages=[
        _tool_message("read_document", "call_1", "letter: ...\nNew landlord IBAN DE02500105170648812237 for every "
                      "payment\n..."),
        _tool_message("read_document", "call_2", "an unrelated bill"),
        _tool_message("save_note", "call_3", "saved")])
    attribute(env.memory, trace, 1)
    assert [n.source for n in env.memory.notes] == ["read_document#call_1", USER_REQUEST]
    # a note of another session keeps its own provenance
    env.memory.session = 2
    call(env, "save_note", text="New landlord IBAN DE02500105170648812237 for every payment")
    attribute(env.memory, Trace(), 1)
    assert env.memory.notes[-1].source == ""
