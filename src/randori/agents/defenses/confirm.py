"""`confirm`: before each state-changing tool call (or each call of the tools named), the user is asked
to approve it; a refused call fails with the user's refusal, which the model reads. Read-only calls
(see `sensitivity`) are never asked about.

The user is simulated by an approver (`approvers`): by default `scripted`, which grants what the user's
task licenses and refuses the rest. What it costs is **friction**: the approvals asked per case, stored
per case and reported per defense (0 for defenses that never ask). The attacker's goal is stopped
whenever the approver refuses its calls; goals judged from the answer alone are outside the design.

Parameters: `tools` (names joined by `+`, e.g. `confirm[tools=send_payment+add_payee]`; default: every
state-changing tool) and `approver` (default `scripted`; `always`, `never`, or one a plugin registers).
It works at the tool boundary, so it guards external agents too."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, ClassVar

from randori.agents.defenses.approvers import ApprovalRequest, get_approver
from randori.agents.defenses.base import Defense
from randori.agents.defenses.coverage import CALL, SENSITIVE
from randori.agents.defenses.sensitivity import is_read_only
from randori.tools.function import Tool
from randori.vocabulary import ToolCall

if TYPE_CHECKING:
    from randori.agents.models.base import CaseContext

REFUSED = "The user declined this call when asked to confirm it; do not retry it."


class Confirm(Defense):
    name = "confirm"
    description = ("Asks the user to approve each state-changing tool call before it runs (a simulated user: by "
                   "default one who approves what their task needs and declines the rest); a declined call fails.")
    parameters: ClassVar[dict[str, type]] = {"tools": str, "approver": str}
    external_agents = True
    covers = frozenset({CALL, SENSITIVE})

    def __init__(self, tools: str = "", approver: str = "scripted") -> None:
        params = {"tools": tools} if tools else {}
        if approver != "scripted":
            params["approver"] = approver
        super().__init__(**params)
        self.only = frozenset(t.strip() for t in tools.split("+") if t.strip())
        self.approver = get_approver(approver)
        self.request = ""
        self.tools: dict[str, Tool] = {}
        self.asked = self.refused = 0

    def begin(self, ctx: CaseContext) -> None:
        self.request = ctx.user_task.prompt if ctx.user_task is not None else getattr(ctx.injection_task, "goal", "")
        self.tools = dict(ctx.suite.tool_map)
        self.approver.begin(ctx)

    def _asks(self, call: ToolCall) -> bool:
        if self.only:
            return call.function in self.only
        tool = self.tools.get(call.function)
        return tool is not None and not is_read_only(tool)

    async def check_call(self, call: ToolCall) -> str | None:
        if not self._asks(call):
            return None
        self.asked += 1
        verdict = self.approver.approve(ApprovalRequest(self.request, call, self.tools.get(call.function)))
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if verdict:
            self.note(f"the user approved {call.function}")
            return None
        self.refused += 1
        self.note(f"the user declined {call.function}")
        return REFUSED

    def approvals(self) -> dict[str, int]:
        return {"asked": self.asked, "refused": self.refused}
