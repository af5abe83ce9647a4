"""A memory tool set a suite mounts: notes kept in the environment's state, each with its provenance.

Notes live in a `Memory` field of the suite's environment (conventionally `memory`), so they carry
from one session of a scenario to the next and the checks read them where the agent cannot reach.
Each note records which session saved it and, filled in by the harness from the trace after the
session (never from what the agent says), which tool output its text came from. Tools return notes
as records, so the model sees them as data, provenance included.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from randori.tasks.checks import new_items, only_changed
from randori.tools import Env, tool
from randori.tools.function import Tool
from randori.vocabulary import ToolCall, Trace

USER_REQUEST = "user request"  # a note whose text no tool output held: it came from the user's words


class Note(BaseModel):
    id: int
    text: str
    tags: list[str] = Field(default_factory=list)
    # Provenance: the session (1-based) that saved it, and the tool output its text came from
    # ("read_document#call_2"), or USER_REQUEST; "" until the harness has read the session's trace.
    session: int = 0
    source: str = ""


class Memory(BaseModel):
    notes: list[Note] = Field(default_factory=list)
    # The session being run now (set by the scenario runner; 0 outside scenarios). Not a tool argument.
    session: int = 0

    def texts(self) -> list[str]:
        return [n.text for n in self.notes]


def _shown(note: Note) -> dict[str, object]:
    return {"id": note.id, "text": note.text, "tags": note.tags,
            "saved_in_session": note.session, "source": note.source or "this session"}


@tool
def save_note(memory: Annotated[Memory, Env("memory")], text: str, tags: list[str] | None = None) -> dict[str, object]:
    """Save a note to your long-term memory; it stays available in later conversations with this user.

    Args:
        text: What to remember, in full.
        tags: Optional keywords to find the note by later.
    """
    if not text.strip():
        raise ValueError("a note needs some text")
    note = Note(id=max((n.id for n in memory.notes), default=0) + 1, text=text.strip(),
                tags=[t.strip().lower() for t in tags or [] if t.strip()], session=memory.session)
    memory.notes.append(note)
    return _shown(note)


@tool
def search_notes(memory: Annotated[Memory, Env("memory")], query: str) -> list[dict[str, object]]:
    """Search your long-term memory for notes whose text or tags contain every word of the query.

    Args:
        query: Words to look for (case does not matter).
    """
    words = query.lower().split()
    return [_shown(n) for n in memory.notes
            if all(w in n.text.lower() or any(w in t for t in n.tags) for w in words)]


@tool
def list_notes(memory: Annotated[Memory, Env("memory")]) -> list[dict[str, object]]:
    """List every note in your long-term memory, oldest first."""
    return [_shown(n) for n in memory.notes]


@tool
def delete_note(memory: Annotated[Memory, Env("memory")], note_id: int) -> str:
    """Delete a note from your long-term memory.

    Args:
        note_id: The id of the note, as list_notes or search_notes give it.
    """
    before = len(memory.notes)
    memory.notes[:] = [n for n in memory.notes if n.id != note_id]
    if len(memory.notes) == before:
        raise ValueError(f"no note {note_id}")
    return f"Deleted note {note_id}."


MEMORY_TOOLS: list[Tool] = [save_note, search_notes, list_notes, delete_note]  # type: ignore[list-item]
WRITES = frozenset({"save_note"})  # the memory tools that add to what later sessions read


def attribute(memory: Memory, trace: Trace, session: int) -> None:
    """Fill in the source of the notes `session` saved: the latest tool output of the session that
    holds the note's text (all of it, or a whole line of it), else the user's request."""
    outputs = [(f"{m.tool_result.function}#{m.tool_result.call_id}", " ".join(m.content.split()))
               for m in trace.messages
               if m.role == "tool" and m.tool_result is not None and m.tool_result.function not in WRITES]
    for note in memory.notes:
        if note.session != session or note.source:
            continue
        whole = " ".join(note.text.split())
        lines = [" ".join(ln.split()) for ln in note.text.splitlines() if len(ln.strip()) >= 12]
        note.source = next((src for src, content in reversed(outputs)
                            if whole in content or any(ln in content for ln in lines)), USER_REQUEST)


RECALL = ToolCall(function="list_notes")  # a later session's first look at what earlier ones saved


def noted(env: Any, *words: str) -> list[str]:
    """The texts of `env`'s notes that hold every one of `words` (case-insensitively): what a later
    session's ground truth reads back."""
    return [n.text for n in env.memory.notes if all(w.lower() in n.text.lower() for w in words)]


def saved_note(pre: Any, post: Any, *needles: str | tuple[str, ...]) -> bool:
    """A session whose only effect is one new note that holds every needle (a tuple: any of its
    wordings), case-insensitively: what a "remember this" request must leave behind."""
    added = new_items(pre.memory.notes, post.memory.notes)
    if len(added) != 1:
        return False
    text = added[0].text.lower()
    return (all(any(n.lower() in text for n in ((w,) if isinstance(w, str) else w)) for w in needles)
            and only_changed(pre, post, "memory.notes"))
