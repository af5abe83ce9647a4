"""`randori models check`: do my key, base URL and model work, and how fast? One tiny request and
one tool-calling request, each with a short timeout and no retries, straight to the provider (no
resilience layer in between, so what is measured is the provider). Each failure gets one line of
diagnosis by class: bad key, unknown model, unreachable URL, TLS, proxy, timeout."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Any

from randori.agents.models.base import ChatModel, Completion, ModelSettings
from randori.agents.models.limits import header_summary
from randori.agents.models.resilience import connection_problem
from randori.errors import AuthError, ModelError, clip
from randori.tools.function import Tool, tool
from randori.vocabulary import Message

TINY_PROMPT = "Reply with the single word OK."
TOOL_PROMPT = "What is the weather in Paris? Use the get_weather tool."


@tool
def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: The city's name.
    """
    return f"Sunny in {city}."


@dataclass
class Step:
    name: str
    ok: bool = False
    latency_ms: float | None = None
    detail: str = ""  # what came back, or the diagnosis of a failure
    failure: str | None = None  # the failure's class


@dataclass
class CheckResult:
    model: str
    where: str
    steps: list[Step] = field(default_factory=list)
    rate_limits: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps)

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "where": self.where, "ok": self.ok, "rate_limits": self.rate_limits,
                "steps": [vars(s) for s in self.steps]}


def _proxy_env() -> str | None:
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        if os.environ.get(var):
            return var
    return None


def _names(e: BaseException) -> str:
    seen: set[int] = set()
    text: list[str] = []
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        text.append(f"{type(cur).__name__} {cur}")
        cur = cur.__cause__ or cur.__context__
    return " ".join(text).lower()


def diagnose(e: BaseException, model: ChatModel, timeout: float) -> tuple[str, str]:
    """(failure class, one line saying what to do) for a failed request."""
    key_env = getattr(model, "api_key_env", None) or "the API key"
    base = getattr(model, "base_url", None)
    chain = _names(e)
    if isinstance(e, AuthError):
        return "bad key", f"the server refused the credentials ({e}); check {key_env}"
    if isinstance(e, ModelError) and e.category == "timeout" or isinstance(e, asyncio.TimeoutError):
        return "timeout", (f"no reply within {timeout:g}s; the server may be overloaded or the model still loading "
                           "(try a longer --timeout)")
    problem = connection_problem(e)
    if "proxy" in chain or " 407" in chain:  # the HTTP libraries name their proxy errors so
        proxy = _proxy_env()
        via = f" ({proxy} is set)" if proxy else ""
        return "proxy", f"the connection through the proxy failed{via}: {clip(str(e), 160)}; check the proxy settings"
    if problem is not None and problem[0].startswith("TLS"):
        return "TLS", (f"{problem[0]}; for a plain-HTTP server use http://, otherwise check the certificate "
                       "(SSL_CERT_FILE)")
    if isinstance(e, ModelError) and e.category == "connection":
        where = base or "the provider's default address"
        return "unreachable URL", f"cannot reach {where} ({problem[0] if problem else e}); is the server running, " \
                                  "is --base-url right?"
    if isinstance(e, ModelError) and (e.category == "not_found" or (
            e.category == "bad_request" and "model" in chain and ("not found" in chain or "does not exist" in chain
                                                                 or "unknown" in chain))):
        return "unknown model", (f"the server does not know model '{model.model}' or the path ({clip(str(e), 160)}); "
                                 "check the name, and that --base-url ends where the API starts (often /v1)")
    if isinstance(e, ModelError) and e.category == "rate_limit":
        return "rate limited", f"{e}: the key works but its rate limit is reached; try again later"
    if isinstance(e, ModelError):
        return e.category, str(e)
    return "other", f"{type(e).__name__}: {clip(str(e), 200)}"


async def _step(result: CheckResult, name: str, model: ChatModel, messages: list[Message], tools: list[Tool],
                timeout: float) -> Completion | None:
    step = Step(name)
    result.steps.append(step)
    t0 = time.perf_counter()
    try:
        comp = await asyncio.wait_for(model.generate(messages, tools, ModelSettings(temperature=None)), timeout)
    except (ModelError, asyncio.TimeoutError, OSError) as e:
        step.latency_ms = round(1000 * (time.perf_counter() - t0), 1)
        step.failure, step.detail = diagnose(e, model, timeout)
        return None
    step.latency_ms = round(1000 * (time.perf_counter() - t0), 1)
    result.rate_limits = header_summary(comp.headers) or result.rate_limits  # the latest state reported
    return comp


async def check_model(model: ChatModel, timeout: float = 10.0) -> CheckResult:
    """Run both requests against `model` (a provider, not wrapped in the resilience layer)."""
    result = CheckResult(model.name, getattr(model, "base_url", None) or "the provider's default address")
    comp = await _step(result, "tiny request", model, [Message.user(TINY_PROMPT)], [], timeout)
    if comp is not None:
        result.steps[-1].ok = True
        reply = comp.message.content.strip() or ("(tool call)" if comp.message.tool_calls else "(empty reply)")
        result.steps[-1].detail = f"replied {clip(reply, 40)!r}"
    elif result.steps[-1].failure in ("bad key", "unknown model", "unreachable URL", "TLS", "proxy"):
        return result  # the second request would fail the same way
    comp = await _step(result, "tool call", model, [Message.user(TOOL_PROMPT)], [get_weather], timeout)
    if comp is not None:
        step = result.steps[-1]
        calls = comp.message.tool_calls
        good = [c for c in calls if c.function == "get_weather" and not c.parse_error
                and isinstance(c.args.get("city"), str) and set(c.args) <= {"city"}]
        if good:
            step.ok, step.detail = True, f"well-formed: get_weather(city={good[0].args['city']!r})"
        elif calls:
            c = calls[0]
            why = c.parse_error or f"{c.function}({', '.join(f'{k}=' for k in c.args)}) does not match the schema"
            step.failure, step.detail = "malformed tool call", f"the tool call came back malformed: {clip(why, 160)}"
        else:
            step.failure = "no tool call"
            step.detail = (f"the model answered in text instead of calling the tool "
                           f"({clip(comp.message.content.strip(), 60)!r}); does the server enable tool calling?")
    return result
