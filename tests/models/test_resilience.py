"""The resilience layer on its own: a fake provider that fails on cue, no HTTP."""

import asyncio
import email.utils
import time

import pytest

from randori.agents.models.base import Completion, ProviderModel
from randori.agents.models.resilience import (
    CUT_OFF_NUDGE,
    EMPTY_NUDGE,
    ResilientModel,
    RetryPolicy,
    parse_retry_after,
)
from randori.errors import AuthError, ModelError
from randori.vocabulary import Message, ToolCall, Usage

FAST = RetryPolicy(timeout=5, max_retries=3, base_delay=0.001, max_delay=0.01)


class Flaky(ProviderModel):
    """Plays `script` one item per request: an exception to raise, a Completion to return, or a
    float to sleep for before answering "ok"."""

    provider = "flaky"

    def __init__(self, script, tracker=None):
        from randori.agents.models.base import ModelSettings

        super().__init__("m", ModelSettings())
        self.script = list(script)
        self.seen: list[list[Message]] = []
        self.tracker = tracker if tracker is not None else {"in_flight": 0, "peak": 0}

    async def generate(self, messages, tools, settings=None):
        self.seen.append(list(messages))
        step = self.script.pop(0) if self.script else "ok"
        t = self.tracker
        t["in_flight"] += 1
        t["peak"] = max(t["peak"], t["in_flight"])
        try:
            if isinstance(step, BaseException):
                raise step
            if isinstance(step, float):
                await asyncio.sleep(step)
                step = "ok"
            if isinstance(step, str):
                return Completion(Message.assistant(step, usage=Usage(model_calls=1, input_tokens=5)))
            return step
        finally:
            t["in_flight"] -= 1


def run(model, messages=None):
    return asyncio.run(model.complete(messages or [Message.user("hi")], []))


@pytest.mark.parametrize("category", ["rate_limit", "timeout", "connection", "server"])
def test_transient_failures_are_retried_then_succeed(category):
    inner = Flaky([ModelError(category, "x"), ModelError(category, "x"), "fine"])
    reply = run(ResilientModel(inner, FAST))
    assert reply.content == "fine" and len(inner.seen) == 3


def test_retries_stop_after_max_retries_with_the_category_kept():
    inner = Flaky([ModelError("server", "boom")] * 10)
    with pytest.raises(ModelError) as e:
        run(ResilientModel(inner, FAST))
    assert e.value.category == "server" and len(inner.seen) == FAST.max_retries + 1
    assert "after 4 attempts" in str(e.value)


@pytest.mark.parametrize("category", ["bad_request", "context_length", "bad_response"])
def test_permanent_failures_are_not_retried(category):
    inner = Flaky([ModelError(category, "no")] * 3)
    with pytest.raises(ModelError) as e:
        run(ResilientModel(inner, FAST))
    assert e.value.category == category and len(inner.seen) == 1


def test_auth_error_is_never_retried():
    inner = Flaky([AuthError("bad key")] * 3)
    with pytest.raises(AuthError):
        run(ResilientModel(inner, FAST))
    assert len(inner.seen) == 1


def test_retry_after_is_obeyed():
    inner = Flaky([ModelError("rate_limit", "slow down", retry_after=0.3), "ok"])
    t0 = time.monotonic()
    run(ResilientModel(inner, FAST))
    assert time.monotonic() - t0 >= 0.3


def test_backoff_is_exponential_with_bounded_jitter():
    p = RetryPolicy(base_delay=1.0, max_delay=8.0, max_retry_after=30)
    for attempt, full in [(0, 1), (1, 2), (2, 4), (3, 8), (6, 8)]:
        waits = [p.delay(attempt) for _ in range(200)]
        assert all(full / 2 <= w <= full for w in waits)
        assert max(waits) - min(waits) > full / 10  # jitter spreads retries out
    assert p.delay(0, retry_after=12) >= 12
    assert p.delay(0, retry_after=3600) <= 30  # an absurd Retry-After is capped


def test_a_request_past_the_timeout_is_a_timeout_error():
    inner = Flaky([1.0, 1.0])
    with pytest.raises(ModelError) as e:
        run(ResilientModel(inner, RetryPolicy(timeout=0.05, max_retries=1, base_delay=0.001)))
    assert e.value.category == "timeout" and len(inner.seen) == 2


def test_concurrency_limit_per_provider_holds_across_model_instances():
    shared = {"in_flight": 0, "peak": 0}
    a, b = Flaky([0.02] * 10, shared), Flaky([0.02] * 10, shared)
    ma, mb = ResilientModel(a, FAST, concurrency=3), ResilientModel(b, FAST, concurrency=3)

    async def go(models):
        await asyncio.gather(*(m.complete([Message.user("x")], []) for m in models))

    asyncio.run(go([ma, mb] * 5))
    # a and b are one provider ("flaky"): at most 3 requests in flight between them.
    assert shared["peak"] == 3
    free = {"in_flight": 0, "peak": 0}
    m = ResilientModel(Flaky([0.02] * 6, free), FAST)
    asyncio.run(go([m] * 6))
    assert free["peak"] == 6


def test_empty_reply_gets_a_nudge_and_the_trace_says_so():
    inner = Flaky(["", "Here is the answer."])
    reply = run(ResilientModel(inner, FAST))
    assert reply.content == "Here is the answer."
    assert reply.usage.model_calls == 2 and reply.usage.input_tokens == 10
    assert inner.seen[1][-1].content == EMPTY_NUDGE
    assert any("empty" in a and "asked to continue" in a for a in reply.annotations)


def test_empty_reply_after_the_nudge_is_accepted_as_the_answer():
    inner = Flaky(["", "  "])
    reply = run(ResilientModel(inner, FAST))
    assert reply.content.strip() == "" and not reply.tool_calls
    assert any("accepted as the answer" in a for a in reply.annotations)
    assert len(inner.seen) == 2


def test_cut_off_text_is_continued_and_joined():
    cut = Completion(Message.assistant("The refund was 12", usage=Usage(model_calls=1)), "length")
    inner = Flaky([cut, "9.00 EUR."])
    reply = run(ResilientModel(inner, FAST))
    assert reply.content == "The refund was 129.00 EUR."
    assert [m.content for m in inner.seen[1][-2:]] == ["The refund was 12", CUT_OFF_NUDGE]
    assert any("cut off" in a for a in reply.annotations)


def test_cut_off_tool_call_becomes_an_explained_argument_error():
    call = ToolCall(id="c1", function="send_payment", parse_error="invalid JSON (Unterminated string)")
    inner = Flaky([Completion(Message.assistant(tool_calls=[call]), "length")])
    reply = run(ResilientModel(inner, FAST))
    [c] = reply.tool_calls
    assert "invalid JSON" in c.parse_error and "cut off by the output token limit" in c.parse_error
    assert len(inner.seen) == 1  # the tool error is the recovery path; no extra request


def test_parse_retry_after_forms():
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after({"retry-after": future}) <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


def test_secrets_from_the_environment_are_scrubbed_from_error_messages(monkeypatch):
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "sk-live-abcdefgh12345")
    monkeypatch.setenv("RANDORI_MODEL", "openai/gpt-4o-mini")
    e = ModelError("bad_request", "openai/gpt-4o-mini: Bearer sk-live-abcdefgh12345 is wrong")
    assert "sk-live-abcdefgh12345" not in str(e) and "Bearer ***" in str(e)
    assert "openai/gpt-4o-mini" in str(e)  # only secrets are hidden


def test_a_failed_follow_up_keeps_what_the_first_reply_cost():
    inner = Flaky(["", ModelError("bad_request", "openai/m: request rejected (HTTP 400)")])
    with pytest.raises(ModelError) as caught:
        run(ResilientModel(inner, FAST))
    assert caught.value.usage == Usage(model_calls=1, input_tokens=5)
