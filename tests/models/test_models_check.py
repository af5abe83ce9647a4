"""`randori models check MODEL [--base-url URL]`: latency, a well-formed tool call, the rate-limit
headers seen, and one line of diagnosis per failure class; exit 1 on any failure."""

from __future__ import annotations

import json
import re

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Fault
from tests.fakes.ratelimit import RateLimitedOpenAIServer
from tests.helpers import randori
from tests.models.test_connectivity import closed_port

KEY = {"OPENAI_API_KEY": "sk-test-check-0000000000", "OPENAI_BASE_URL": ""}


def weather(tool_reply):
    """A model that answers the tiny request in text and the tool request with `tool_reply`."""
    return lambda req: tool_reply if req.get("tools") else "OK"


def flat(r):
    """stdout with the wrapped lines joined."""
    return " ".join(r.stdout.split())


def check(url, *extra, env=None, model="openai/fake-model"):
    return randori("models", "check", model, "--base-url", url, *extra, env={**KEY, **(env or {})})


def test_a_working_model_reports_latency_tool_call_and_rate_limits():
    policy = weather([("get_weather", {"city": "Paris"})])
    with RateLimitedOpenAIServer(policy, rpm=600, tpm=1_000_000) as server:
        r = check(server.base_url)
        js = check(server.base_url, "-f", "json")
    assert r.returncode == 0, r.stderr
    assert "tiny request  ok" in r.stdout and "replied 'OK'" in r.stdout
    assert "well-formed: get_weather(city='Paris')" in flat(r)
    assert re.search(r"rate limits   requests: 59\d of 600 left, full again in", r.stdout)
    assert "tokens: 999," in r.stdout
    assert all(len(line) <= 80 for line in r.stdout.splitlines())
    data = json.loads(js.stdout)
    assert data["ok"] is True and [s["name"] for s in data["steps"]] == ["tiny request", "tool call"]
    assert all(s["latency_ms"] > 0 for s in data["steps"])
    assert server.requests[1]["tools"][0]["function"]["name"] == "get_weather"
    assert "temperature" not in server.requests[0]  # the most compatible request: model and messages


@pytest.mark.parametrize("fault, failure, words", [
    (Fault(status=401, echo_auth=True), "bad key", "OPENAI_API_KEY"),
    (Fault(status=404), "unknown model", "check the name"),
])
def test_setup_failures_are_diagnosed_in_one_line_and_stop(fault, failure, words):
    with FakeOpenAIServer(lambda req: fault) as server:
        r = check(server.base_url)
    assert r.returncode == 1
    assert r.stdout.count("FAILED") == 1 and f"FAILED ({failure})" in r.stdout
    assert words in " ".join(r.stdout.split())
    assert server.count == 1  # the second request would fail the same way
    assert "sk-test-check-0000000000" not in r.stdout + r.stderr


def test_unreachable_url_tls_and_timeout():
    r = check(f"http://127.0.0.1:{closed_port()}/v1")
    assert r.returncode == 1 and "FAILED (unreachable URL)" in r.stdout and "is the server running" in flat(r)
    assert all(len(line) <= 80 for line in r.stdout.splitlines())
    with FakeOpenAIServer(lambda req: "OK") as server:
        r = check(server.base_url.replace("http://", "https://"))
    assert r.returncode == 1 and "FAILED (TLS)" in r.stdout and "use http://" in flat(r)
    with FakeOpenAIServer(lambda req: Fault(delay=3)) as server:
        r = check(server.base_url, "--timeout", "0.5")
    assert r.returncode == 1 and r.stdout.count("FAILED (timeout)") == 2 and "no reply within 0.5s" in flat(r)


def test_proxy_failure_is_named():
    with FakeOpenAIServer(lambda req: "OK") as server:
        url = server.base_url.replace("127.0.0.1", "randori-check.invalid")
        r = check(url, env={"HTTP_PROXY": f"http://127.0.0.1:{closed_port()}", "NO_PROXY": "", "no_proxy": ""})
    assert r.returncode == 1 and "FAILED (proxy)" in r.stdout and "HTTP_PROXY is set" in flat(r)


@pytest.mark.parametrize("reply, failure", [
    ([("get_weather", "{not json")], "malformed tool call"),
    ([("get_weather", {"town": "Paris"})], "malformed tool call"),
    ("It is sunny in Paris.", "no tool call"),
])
def test_a_bad_tool_call_fails_the_check(reply, failure):
    with FakeOpenAIServer(weather(reply)) as server:
        r = check(server.base_url)
    assert r.returncode == 1 and "tiny request  ok" in r.stdout and f"FAILED ({failure})" in r.stdout


def test_mistakes_are_one_line_errors():
    r = randori("models", "check", "gpt-4o")
    assert r.returncode == 2 and r.stderr.startswith("randori: error: model 'gpt-4o' must be named provider/model")
    r = randori("models", "check", "openai/x", "--base-url", "ftp://x")
    assert r.returncode == 2 and "randori: error: --base-url must be an http:// or https://" in r.stderr
    listing = randori("models", "-f", "json")
    assert listing.returncode == 0 and any(x["provider"] == "openai" for x in json.loads(listing.stdout))
