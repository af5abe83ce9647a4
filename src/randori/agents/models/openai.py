"""OpenAI and every OpenAI-compatible server (vLLM, Ollama, llama.cpp server, OpenRouter...),
through the official `openai` SDK with native tool calls."""

from __future__ import annotations

import json
import os
from typing import Any

from randori.agents.messages import Message, ToolCall, Usage
from randori.agents.models.base import ChatModel, ModelSettings
from randori.errors import AuthError, ModelError, UserError
from randori.tools.function import Tool


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            call_id = m.tool_result.call_id if m.tool_result else ""
            out.append({"role": "tool", "tool_call_id": call_id, "content": m.content})
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                msg["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.function, "arguments": json.dumps(c.args)}}
                                     for c in m.tool_calls]
            out.append(msg)
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def parse_tool_call(call_id: str, name: str, arguments: str | None) -> ToolCall:
    raw = arguments or "{}"
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as e:
        return ToolCall(id=call_id, function=name, parse_error=f"invalid JSON ({e.msg})")
    if not isinstance(args, dict):
        return ToolCall(id=call_id, function=name, parse_error="arguments are not a JSON object")
    return ToolCall(id=call_id, function=name, args=args)


def request_params(settings: ModelSettings) -> dict[str, Any]:
    """Settings as sent: every value that is set goes out as is (temperature 0.0 included)."""
    params: dict[str, Any] = {}
    if settings.temperature is not None:
        params["temperature"] = settings.temperature
    if settings.seed is not None:
        params["seed"] = settings.seed
    if settings.max_tokens is not None:
        params["max_tokens"] = settings.max_tokens
    if settings.reasoning_effort is not None:
        params["reasoning_effort"] = settings.reasoning_effort
    return params


class OpenAIModel(ChatModel):
    provider = "openai"
    api_key_env = "OPENAI_API_KEY"

    def __init__(self, model: str, settings: ModelSettings, *, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = 120.0, max_retries: int = 2, **_: Any):
        super().__init__(model, settings)
        import openai

        key = api_key or os.environ.get(self.api_key_env)
        if not key:
            if base_url is None:
                raise UserError(f"{self.api_key_env} is not set (needed for {self.provider}/{model}); "
                                "for a local server pass --base-url")
            key = "not-needed"  # local OpenAI-compatible servers accept any key
        self.base_url = base_url
        self.client = openai.AsyncOpenAI(api_key=key, base_url=base_url, timeout=timeout,
                                         max_retries=max_retries)

    async def complete(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Message:
        import openai

        s = settings or self.settings
        kwargs: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(messages),
                                  **request_params(s)}
        if tools:
            kwargs["tools"] = [t.schema() for t in tools]
        try:
            resp = await self.client.chat.completions.create(**kwargs)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
            raise AuthError(f"{self.name}: authentication failed ({e.status_code})") from e
        except openai.RateLimitError as e:
            raise ModelError("rate_limit", f"{self.name}: rate limited") from e
        except openai.APITimeoutError as e:
            raise ModelError("timeout", f"{self.name}: request timed out") from e
        except openai.APIConnectionError as e:
            raise ModelError("connection", f"{self.name}: connection failed: {e}") from e
        except openai.BadRequestError as e:
            text = str(e)
            cat = "context_length" if "context" in text.lower() and "length" in text.lower() else "bad_response"
            raise ModelError(cat, f"{self.name}: {text[:300]}") from e
        except openai.APIStatusError as e:
            raise ModelError("server", f"{self.name}: HTTP {e.status_code}") from e
        except openai.APIError as e:
            raise ModelError("bad_response", f"{self.name}: {str(e)[:300]}") from e
        if not resp.choices:
            raise ModelError("bad_response", f"{self.name}: reply had no choices")
        msg = resp.choices[0].message
        calls = [parse_tool_call(c.id, c.function.name, c.function.arguments) for c in msg.tool_calls or []
                 if c.type == "function"]
        usage = Usage(model_calls=1, input_tokens=getattr(resp.usage, "prompt_tokens", 0) or 0,
                      output_tokens=getattr(resp.usage, "completion_tokens", 0) or 0)
        return Message.assistant(msg.content or "", calls, usage=usage)

    async def aclose(self) -> None:
        await self.client.close()
