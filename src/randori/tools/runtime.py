"""Run a `ToolCall` against an environment. Never raises: every failure becomes `ToolResult.error`."""

from __future__ import annotations

import datetime as dt
import enum
import json
from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from randori.tools import yaml_block
from randori.tools.function import Tool
from randori.vocabulary import ToolCall, ToolResult


def run_tool(tools: Mapping[str, Tool], env: Any, call: ToolCall, *,
             watch: Mapping[str, str] | None = None, fmt: str = "yaml") -> ToolResult:
    """Execute `call`. `watch` maps vector ids to injected texts; those found in the raw output
    are recorded in `vectors_seen`, which is how we know an injection reached the model."""
    t = tools.get(call.function)
    if t is None:
        known = ", ".join(sorted(tools)) or "none"
        return ToolResult(call_id=call.id, function=call.function,
                          error=f"Unknown tool '{call.function}'. Available tools: {known}.")
    if call.parse_error:
        return ToolResult(call_id=call.id, function=call.function,
                          error=f"Could not read the arguments for {t.name}: {call.parse_error}. "
                                "Send the arguments as one JSON object.")
    if not _finite(call.args):  # NaN or Infinity would pass the schema's number type and reach the state
        return ToolResult(call_id=call.id, function=call.function,
                          error=f"Invalid arguments for {t.name}: numbers must be finite (not NaN or Infinity)")
    try:
        args = t.args_model.model_validate(call.args)
    except ValidationError as e:
        return ToolResult(call_id=call.id, function=call.function,
                          error=f"Invalid arguments for {t.name}: {_readable(e)}")
    kwargs = {k: getattr(args, k) for k in type(args).model_fields}
    for pname, path in t.env_params.items():
        kwargs[pname] = _resolve(env, path)
    try:
        value = t.fn(**kwargs)
    except Exception as e:  # a tool's own failure is information for the model, not a crash
        return ToolResult(call_id=call.id, function=call.function,
                          error=f"{type(e).__name__}: {e}")
    plain = to_plain(value)
    seen: list[str] = []
    if watch:
        strings = list(iter_strings(plain))
        seen = sorted(v for v, text in watch.items() if text and _shows(text, strings, folded=t.show is not None))
    content = t.show(value) if t.show is not None else render(plain, fmt)
    return ToolResult(call_id=call.id, function=call.function, content=content, vectors_seen=seen)


def _shows(text: str, strings: list[str], *, folded: bool) -> bool:
    """`text` is in one of `strings`. A tool with its own formatter comes from a foreign suite
    (AgentDojo's) whose loader reads attack text as YAML, folding its line breaks into spaces: there
    the text counts as shown when it appears with its whitespace folded."""
    if any(text in s for s in strings):
        return True
    if not folded or not any(c.isspace() for c in text):
        return False
    flat = " ".join(text.split())
    return bool(flat) and any(flat in " ".join(s.split()) for s in strings)


def _finite(args: Any) -> bool:
    try:
        json.dumps(args, allow_nan=False, default=str)
    except ValueError:
        return False
    return True


def _readable(e: ValidationError) -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "arguments"
        msg = "unexpected argument" if err["type"] == "extra_forbidden" else err["msg"]
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)


def _resolve(env: Any, path: str) -> Any:
    obj = env
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part)
    return obj


def to_plain(value: Any) -> Any:
    """Pydantic models, enums and dates -> plain JSON-like data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [to_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    return value


def iter_strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from iter_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from iter_strings(v)


# libyaml's emitter is ~10x faster than PyYAML's pure-Python one; rendering is the hot path of a case.
# But libyaml escapes characters outside the BMP (most emoji) and then quotes the whole string, which
# would show multi-line text as one escaped line; such output is rendered again by the Python emitter.
class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


class _PyDumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # Literal blocks keep multi-line text (mail bodies, files) readable and verbatim line by line.
    # YAML forbids trailing spaces in a block scalar and would fall back to one quoted, escaped
    # line, so they are dropped: invisible to a reader, and it keeps injected lines intact.
    if "\n" in data:
        data = "\n".join(line.rstrip() for line in data.split("\n"))
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)
_PyDumper.add_representer(str, _str_presenter)


_WIDTH = 1_000_000  # never fold a long line: folding could split an injected sentence


def render(plain: Any, fmt: str = "yaml") -> str:
    if plain is None:
        return "None"
    if isinstance(plain, str):
        return plain
    if fmt == "json":
        import json

        return json.dumps(plain, ensure_ascii=False, indent=1)
    fast = yaml_block.dump(plain)  # the same text, several times faster; None where it is not sure
    if fast is not None:
        return fast.rstrip()
    return pyyaml_render(plain)


def pyyaml_render(plain: Any) -> str:
    """`plain` rendered by PyYAML itself (what `yaml_block.dump` must reproduce)."""
    out = yaml.dump(plain, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=_WIDTH)
    if "\\U" in out:
        out = yaml.dump(plain, Dumper=_PyDumper, sort_keys=False, allow_unicode=True, width=_WIDTH)
    return out.rstrip()
