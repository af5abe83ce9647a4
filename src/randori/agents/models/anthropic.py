"""Anthropic models through the official `anthropic` SDK (Messages API) with native tool use.

Install with `pip install 'randori[anthropic]'`; reads ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)."""

from __future__ import annotations

import inspect
import os
from collections import OrderedDict
from typing import Any

from randori.agents.models.base import ChatModel, Completion, ModelSettings, ProviderModel, check_base_url
from randori.agents.models.resilience import connection_error, parse_retry_after, status_error, transport_error
from randori.errors import AuthError, ModelError, UserError, clip, register_secret
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, Usage

# The Messages API requires max_tokens; this is what is sent when --max-tokens is not given.
DEFAULT_MAX_TOKENS = 4096
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
          "model_context_window_exceeded": "length", "refusal": "filtered", "pause_turn": "other"}
# Thinking blocks must go back with the tool results of their turn; a Message has no field for
# provider data, so they are kept here, keyed by the turn's first tool_use id (ids are unique).
_MAX_KEPT_TURNS = 10_000


def to_anthropic(messages: list[Message], thinking: dict[str, list[dict[str, Any]]] | None = None,
                 ) -> tuple[str, list[dict[str, Any]]]:
    """(system prompt, messages) in the Messages API format. Tool results become `tool_result`
    blocks in a user turn, and consecutive turns of one role are merged, as the API requires."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            r = m.tool_result
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": r.call_id if r else "",
                                     "content": m.content or "(no output)"}
            if r is not None and r.error is not None:
                block["is_error"] = True
            role, blocks = "user", [block]
        elif m.role == "assistant":
            blocks = []
            if m.tool_calls and thinking is not None:
                blocks += thinking.get(m.tool_calls[0].id, [])
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            blocks += [{"type": "tool_use", "id": c.id, "name": c.function, "input": c.args} for c in m.tool_calls]
            role = "assistant"
        else:
            role, blocks = "user", [{"type": "text", "text": m.content}] if m.content else []
        if not blocks:
            continue  # the API rejects empty turns (an empty reply that was nudged)
        if out and out[-1]["role"] == role:
            out[-1]["content"] += blocks
        else:
            out.append({"role": role, "content": blocks})
    return system, out


def tool_params(tools: list[Tool]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


CACHE_ENV = "RANDORI_ANTHROPIC_CACHE"
EPHEMERAL = {"type": "ephemeral"}


def with_breakpoints(system: str, msgs: list[dict[str, Any]], tools: list[dict[str, Any]],
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, messages, tools) with prompt-cache breakpoints after the tools, after the
    system prompt and after the conversation so far (3 of the 4 allowed). The cache is a prefix
    cache in the order tools, system, messages: each turn rereads everything up to the previous
    turn's end from the cache, and every case of a suite shares its tools and system prompt."""
    if tools:
        tools = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]
    blocks = [{"type": "text", "text": system, "cache_control": EPHEMERAL}] if system else []
    if msgs and msgs[-1]["content"]:
        last = msgs[-1]
        msgs = [*msgs[:-1], {**last, "content": [*last["content"][:-1], {**last["content"][-1],
                                                                          "cache_control": EPHEMERAL}]}]
    return blocks, msgs, tools


class AnthropicModel(ProviderModel):
    provider = "anthropic"
    api_key_env = "ANTHROPIC_API_KEY"
    max_concurrency = 8

    @classmethod
    def preload(cls) -> None:
        import anthropic  # noqa: F401

    def __init__(self, model: str, settings: ModelSettings, *, base_url: str | None = None,
                 api_key: str | None = None, timeout: float | None = 120.0, prompt_cache: bool | None = None,
                 **_: Any):
        super().__init__(model, settings)
        import anthropic

        if prompt_cache is None:  # caching changes what a run costs, never what the model answers
            prompt_cache = os.environ.get(CACHE_ENV, "on").strip().lower() not in ("0", "off", "false", "no")
        self.prompt_cache = prompt_cache

        if settings.seed is not None:
            raise UserError("the Anthropic API has no seed; run anthropic/ models without --seed")
        key = api_key or os.environ.get(self.api_key_env)
        if not key:
            raise UserError(f"{self.api_key_env} is not set (needed for anthropic/{model})")
        register_secret(key)
        env_url = os.environ.get("ANTHROPIC_BASE_URL")
        self.base_url = base_url or (check_base_url(env_url, "ANTHROPIC_BASE_URL") if env_url else None)
        # Retries happen once, in the resilience layer, so the SDK must not retry on its own.
        self.client = anthropic.AsyncAnthropic(api_key=key, base_url=self.base_url, timeout=timeout,
                                               max_retries=0)
        self._thinking: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def share_state(self, first: ChatModel) -> None:
        if isinstance(first, AnthropicModel):
            self._thinking = first._thinking

    def request(self, messages: list[Message], tools: list[Tool], s: ModelSettings) -> dict[str, Any]:
        system, msgs = to_anthropic(messages, self._thinking)
        kwargs: dict[str, Any] = {"model": self.model, "messages": msgs,
                                  "max_tokens": s.max_tokens if s.max_tokens is not None else DEFAULT_MAX_TOKENS}
        params = tool_params(tools)
        if self.prompt_cache:
            blocks, kwargs["messages"], params = with_breakpoints(system, msgs, params)
            system_value: Any = blocks
        else:
            system_value = system
        if system:
            kwargs["system"] = system_value
        if tools:
            kwargs["tools"] = params
        # Sent in the body, not as arguments: SDK versions differ in which of these they accept.
        extra: dict[str, Any] = {}
        if s.temperature is not None:
            extra["temperature"] = s.temperature
        if s.reasoning_effort is not None:
            extra["output_config"] = {"effort": s.reasoning_effort}
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    async def generate(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Completion:
        s = settings or self.settings
        try:
            raw = await self.client.messages.with_raw_response.create(**self.request(messages, tools, s))
            resp = raw.parse()
            if inspect.isawaitable(resp):  # SDK versions differ: a legacy or an async raw response
                resp = await resp
        except Exception as e:
            raise self._error(e) from e
        text: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[dict[str, Any]] = []
        for block in resp.content or []:
            kind = getattr(block, "type", "")
            if kind == "text":
                text.append(block.text)
            elif kind == "tool_use":
                args = block.input
                if isinstance(args, dict):
                    calls.append(ToolCall(id=block.id, function=block.name, args=args))
                else:
                    calls.append(ToolCall(id=block.id, function=block.name,
                                          parse_error="arguments are not a JSON object"))
            elif kind in ("thinking", "redacted_thinking"):
                thinking.append(block.model_dump(mode="json", exclude_none=True))
        if calls and thinking:
            self._thinking[calls[0].id] = thinking
            while len(self._thinking) > _MAX_KEPT_TURNS:
                self._thinking.popitem(last=False)
        u = resp.usage
        # input_tokens counts only what came after the last cache breakpoint; the total is the sum.
        read, write = getattr(u, "cache_read_input_tokens", 0) or 0, getattr(u, "cache_creation_input_tokens", 0) or 0
        usage = Usage(model_calls=1, input_tokens=(getattr(u, "input_tokens", 0) or 0) + read + write,
                      output_tokens=getattr(u, "output_tokens", 0) or 0, cached_input_tokens=read,
                      cache_write_tokens=write)
        return Completion(Message.assistant("".join(text), calls, usage=usage),
                          FINISH.get(resp.stop_reason or "end_turn", "other"), raw.headers)

    def _error(self, e: Exception) -> ModelError:
        import anthropic

        if isinstance(e, (anthropic.AuthenticationError, anthropic.PermissionDeniedError)):
            return AuthError(f"{self.name}: authentication failed (HTTP {e.status_code}); check the API key")
        if isinstance(e, anthropic.APITimeoutError):
            return ModelError("timeout", f"{self.name}: request timed out")
        if isinstance(e, anthropic.APIConnectionError):
            return connection_error(self.name, e)
        if isinstance(e, anthropic.APIStatusError):
            body = e.body if isinstance(e.body, dict) else {}
            err = body.get("error", {}) if isinstance(body.get("error"), dict) else {}
            text = f"{err.get('type', '')} {err.get('message', e.message)}".strip()
            if e.status_code == 529 or err.get("type") == "overloaded_error":
                over = ModelError("server", f"{self.name}: overloaded (HTTP {e.status_code})",
                                  retry_after=parse_retry_after(e.response.headers))
                over.overloaded, over.headers = True, e.response.headers
                return over
            return status_error(self.name, e.status_code, text, parse_retry_after(e.response.headers),
                                e.response.headers)
        if isinstance(e, (anthropic.APIError, ValueError)):
            return ModelError("bad_response", f"{self.name}: unreadable reply ({clip(str(e), 200)})")
        return transport_error(self.name, e)

    async def aclose(self) -> None:
        await self.client.close()
