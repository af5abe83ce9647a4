"""memory_gate: a write to memory or another persistent place is allowed only when the user's request
of this session asks to keep something (after the 2026 finding that, of the defenses tried on
persistent-memory agents, only gating the writes helped; filters on input and retrieval did not).

Each persistent write tool is allowed by words of the request that ask for it: `save_note` by words
that ask to remember ("remember", "keep in mind", "from now on", "for the future"...), a payee, a
standing order, a mail rule, an out-of-office or a signature by their own names as well. What the
data says never opens the gate: it reads only the user's request, which it is given before any tool
output (the `select_tools` hook)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from randori.agents.defenses.base import Defense
from randori.tools.function import Tool
from randori.vocabulary import ToolCall

if TYPE_CHECKING:
    from randori.agents.models.base import ChatModel

REMEMBER = (r"\bremember", r"\bkeep (this|that|it)? ?in mind", r"\bfrom now on\b", r"\bfor the future\b",
            r"\bfor later\b", r"\bmake a note\b", r"\bnote (this|that) down\b", r"\bsave (a|this|that) note\b",
            r"\bgoing forward\b", r"\bin future\b")
# Persistent write tools of the built-in suites -> what a request names when it asks for one.
WRITES: dict[str, tuple[str, ...]] = {
    "save_note": (),
    "add_payee": (r"\bpayee",),
    "create_standing_order": (r"\bstanding order",), "update_standing_order": (r"\bstanding order",),
    "create_mail_rule": (r"\b(mail )?rule\b",),
    "set_auto_reply": (r"\bout-of-office\b", r"\bout of office\b", r"\bauto-?reply\b"),
    "update_account_settings": (r"\bsignature\b", r"\bdisplay name\b", r"\brecovery\b"),
}


def asks_to_keep(request: str, tool: str) -> bool:
    """Whether the user's `request` asks for the persistent write `tool` makes."""
    low = request.lower()
    return any(re.search(p, low) for p in (*REMEMBER, *WRITES.get(tool, ())))


class MemoryGate(Defense):
    name = "memory_gate"
    description = ("Blocks writes to memory and other persistent places (notes, payees, standing orders, mail "
                   "rules, auto-replies, signatures) unless this session's request asks to keep something.")
    external_agents = False
    covers = frozenset({"call"})

    def __init__(self) -> None:
        super().__init__()
        self.request = ""

    async def select_tools(self, task: str, tools: list[Tool], model: ChatModel) -> list[Tool]:
        self.request = task
        return tools

    async def check_call(self, call: ToolCall) -> str | None:
        if call.function in WRITES and not asks_to_keep(self.request, call.function):
            self.note(f"blocked {call.function}: the user did not ask to keep anything")
            return ("memory_gate: this change would persist into later conversations, and the user's request "
                    "does not ask to keep anything; not done")
        return None
