"""Google Gemini models through the `google-genai` SDK, with native function calling, on either the
Gemini API (GOOGLE_API_KEY or GEMINI_API_KEY) or Vertex AI (GOOGLE_GENAI_USE_VERTEXAI=true with
GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, and application-default credentials).

Install with `pip install 'randori[google]'`."""

from __future__ import annotations

import os
import uuid
from collections import OrderedDict
from typing import Any

from randori.agents.models.base import ChatModel, Completion, ModelSettings, ProviderModel
from randori.agents.models.resilience import parse_retry_after, status_error, transport_error
from randori.errors import ModelError, UserError
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, Usage

FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "filtered", "RECITATION": "filtered",
          "BLOCKLIST": "filtered", "PROHIBITED_CONTENT": "filtered", "SPII": "filtered",
          "MODEL_ARMOR": "filtered"}
# Ids we make up when the API gives a function call none; they are not sent back.
_OWN_ID = "randori-"
_MAX_KEPT_TURNS = 10_000


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


class GoogleModel(ProviderModel):
    provider = "google"
    max_concurrency = 8

    @classmethod
    def preload(cls) -> None:
        from google import genai  # noqa: F401

    def __init__(self, model: str, settings: ModelSettings, *, base_url: str | None = None,
                 api_key: str | None = None, timeout: float | None = 120.0, vertex: bool | None = None, **_: Any):
        super().__init__(model, settings)
        from google import genai
        from google.genai import types

        if settings.reasoning_effort is not None:
            levels = [x.value.lower() for x in types.ThinkingLevel if x.value != "THINKING_LEVEL_UNSPECIFIED"]
            if settings.reasoning_effort.lower() not in levels:
                raise UserError(f"google/ models take --reasoning-effort {', '.join(levels)}, "
                                f"not '{settings.reasoning_effort}'")
        vertex = _truthy(os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")) if vertex is None else vertex
        http = types.HttpOptions(
            base_url=base_url, timeout=int(timeout * 1000) if timeout else None,
            # Retries happen once, in the resilience layer, so the SDK must not retry on its own.
            retry_options=types.HttpRetryOptions(attempts=1))
        if vertex:
            project = os.environ.get("GOOGLE_CLOUD_PROJECT")
            if not project:
                raise UserError("Vertex AI needs GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION) to be set")
            self.client = genai.Client(vertexai=True, project=project,
                                       location=os.environ.get("GOOGLE_CLOUD_LOCATION", "global"),
                                       http_options=http)
        else:
            key = api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
            if not key:
                raise UserError(f"GOOGLE_API_KEY (or GEMINI_API_KEY) is not set (needed for google/{model}); "
                                "for Vertex AI set GOOGLE_GENAI_USE_VERTEXAI=true")
            self.client = genai.Client(api_key=key, http_options=http)
        self.base_url = base_url
        # A model turn with function calls must be sent back exactly, thought signatures included;
        # a Message has no field for that, so the turns are kept here, keyed by their first call id.
        self._turns: OrderedDict[str, Any] = OrderedDict()

    def share_state(self, first: ChatModel) -> None:
        if isinstance(first, GoogleModel):
            self._turns = first._turns

    def contents(self, messages: list[Message]) -> list[Any]:
        from google.genai import types

        out: list[types.Content] = []
        for m in messages:
            if m.role == "system":
                continue
            if m.role == "tool":
                r = m.tool_result
                call_id = r.call_id if r else ""
                response = {"error": r.error} if r is not None and r.error is not None else {"output": m.content}
                fr = types.FunctionResponse(name=r.function if r else "", response=response,
                                            id=None if call_id.startswith(_OWN_ID) else call_id or None)
                role, parts = "user", [types.Part(function_response=fr)]
            elif m.role == "assistant":
                kept = self._turns.get(m.tool_calls[0].id) if m.tool_calls else None
                if kept is not None:
                    role, parts = "model", list(kept.parts or [])
                else:
                    parts = [types.Part(text=m.content)] if m.content else []
                    parts += [types.Part(function_call=types.FunctionCall(
                        name=c.function, args=c.args, id=None if c.id.startswith(_OWN_ID) else c.id or None))
                        for c in m.tool_calls]
                    role = "model"
            else:
                role, parts = "user", [types.Part(text=m.content)] if m.content else []
            if not parts:
                continue
            if out and out[-1].role == role:
                out[-1].parts = [*(out[-1].parts or []), *parts]
            else:
                out.append(types.Content(role=role, parts=parts))
        return out

    def config(self, messages: list[Message], tools: list[Tool], s: ModelSettings) -> Any:
        from google.genai import types

        system = "\n\n".join(m.content for m in messages if m.role == "system")
        cfg: dict[str, Any] = {"automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True)}
        if system:
            cfg["system_instruction"] = system
        if tools:
            cfg["tools"] = [types.Tool(function_declarations=[
                types.FunctionDeclaration(name=t.name, description=t.description,
                                          parameters_json_schema=t.parameters) for t in tools])]
        if s.temperature is not None:
            cfg["temperature"] = s.temperature
        if s.max_tokens is not None:
            cfg["max_output_tokens"] = s.max_tokens
        if s.seed is not None:
            cfg["seed"] = s.seed
        if s.reasoning_effort is not None:
            level = types.ThinkingLevel(s.reasoning_effort.upper())
            cfg["thinking_config"] = types.ThinkingConfig(thinking_level=level)
        return types.GenerateContentConfig(**cfg)

    async def generate(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Completion:
        s = settings or self.settings
        try:
            resp = await self.client.aio.models.generate_content(
                model=self.model, contents=self.contents(messages), config=self.config(messages, tools, s))
        except Exception as e:
            raise self._error(e) from e
        meta = resp.usage_metadata
        usage = Usage(model_calls=1, input_tokens=getattr(meta, "prompt_token_count", 0) or 0,
                      output_tokens=(getattr(meta, "candidates_token_count", 0) or 0)
                      + (getattr(meta, "thoughts_token_count", 0) or 0),
                      # Implicit caching: part of prompt_token_count, billed at the cached rate.
                      cached_input_tokens=getattr(meta, "cached_content_token_count", 0) or 0)
        if not resp.candidates:
            block = getattr(resp.prompt_feedback, "block_reason", None)
            if block:
                return Completion(Message.assistant("", usage=usage), "filtered")
            raise ModelError("bad_response", f"{self.name}: reply had no candidates")
        cand = resp.candidates[0]
        text: list[str] = []
        calls: list[ToolCall] = []
        for part in (cand.content.parts if cand.content else None) or []:
            if part.function_call is not None:
                fc = part.function_call
                call_id = fc.id or f"{_OWN_ID}{uuid.uuid4().hex[:12]}"
                if isinstance(fc.args, dict) or fc.args is None:
                    calls.append(ToolCall(id=call_id, function=fc.name or "", args=dict(fc.args or {})))
                else:
                    calls.append(ToolCall(id=call_id, function=fc.name or "",
                                          parse_error="arguments are not a JSON object"))
            elif part.text and not part.thought:
                text.append(part.text)
        if calls and cand.content is not None:
            self._turns[calls[0].id] = cand.content
            while len(self._turns) > _MAX_KEPT_TURNS:
                self._turns.popitem(last=False)
        reason = getattr(cand.finish_reason, "value", cand.finish_reason) or "STOP"
        # MALFORMED_FUNCTION_CALL leaves an empty reply with finish "other": the model gets a nudge.
        finish = "tool_calls" if calls else FINISH.get(str(reason), "other")
        headers = getattr(getattr(resp, "sdk_http_response", None), "headers", None)
        return Completion(Message.assistant("".join(text), calls, usage=usage), finish, headers)

    def _error(self, e: Exception) -> ModelError:
        from google.genai import errors

        if isinstance(e, errors.APIError):
            headers = getattr(getattr(e, "response", None), "headers", None)
            text = f"{e.status or ''} {e.message or ''}".strip()
            return status_error(self.name, int(e.code or 0), text, parse_retry_after(headers), headers)
        return transport_error(self.name, e)

    async def aclose(self) -> None:
        try:
            await self.client.aio.aclose()
        except AttributeError:  # older SDKs have no async close
            pass
