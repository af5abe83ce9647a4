"""The vocabulary of the whole benchmark: the conversation between a user, a model and its tools
(messages, tool calls and results, the trace of a case, token usage), as stored and replayed.

The ground floor: it imports nothing of randori."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """A request by the model (or a ground truth) to run one tool with arguments."""

    function: str
    args: dict[str, Any] = Field(default_factory=dict)
    id: str = ""
    # Set when the model's arguments could not be parsed; the tool then answers with this error.
    parse_error: str | None = None


class ToolResult(BaseModel):
    """What a tool returned. `error` is set instead of raising, so a run never crashes on a tool."""

    call_id: str = ""
    function: str
    content: str = ""
    error: str | None = None
    # Vectors whose injected text appeared in the raw tool output (before any defense rewrote it).
    vectors_seen: list[str] = Field(default_factory=list)
    # The defense that stopped this call before it ran (a refused call, or a tool it withheld).
    blocked_by: str | None = None


class Usage(BaseModel):
    """Tokens of one or more model calls. `input_tokens` counts every input token; of those,
    `cached_input_tokens` were read from the provider's prompt cache and `cache_write_tokens` were
    written to it (each billed at its own rate)."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            model_calls=self.model_calls + other.model_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class Message(BaseModel):
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    # Set on role="tool" messages.
    tool_result: ToolResult | None = None
    # Set on assistant messages produced by a model call.
    usage: Usage | None = None
    # Free-form notes a defense attaches (what it redacted, why it aborted); shown in the viewer.
    annotations: list[str] = Field(default_factory=list)

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=text)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", content=text)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: list[ToolCall] | None = None,
                  usage: Usage | None = None) -> Message:
        return cls(role="assistant", content=text, tool_calls=tool_calls or [], usage=usage)

    @classmethod
    def tool(cls, result: ToolResult) -> Message:
        body = result.content if result.error is None else f"Error: {result.error}"
        return cls(role="tool", content=body, tool_result=result)


class Trace(BaseModel):
    """Everything that happened in one case, in order."""

    messages: list[Message] = Field(default_factory=list)
    # Tool vectors whose injected text stood in a tool description the model was shown.
    description_vectors: list[str] = Field(default_factory=list)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for m in self.messages:
            if m.usage is not None:
                total = total + m.usage
        return total

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [c for m in self.messages if m.role == "assistant" for c in m.tool_calls]

    @property
    def final_output(self) -> str:
        for m in reversed(self.messages):
            if m.role == "assistant" and not m.tool_calls:
                return m.content
        return ""

    @property
    def vectors_seen(self) -> set[str]:
        seen = {v for m in self.messages if m.tool_result for v in m.tool_result.vectors_seen}
        return seen | set(self.description_vectors)
