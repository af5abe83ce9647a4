"""Every fault mode of the fake OpenAI-compatible server, through each transport (randori's direct
client, the openai SDK over aiohttp and over httpx): retried and scored when it clears, an error case
with the right category when it does not, never a crash."""

import pytest

from randori.agents.models import ModelSettings
from randori.errors import AuthError
from tests.fakes.openai_server import Cut, FakeOpenAIServer, Fault, scripted_policy, serve_first
from tests.models.helpers import REFUND_STEPS, annotations, run_one, tool_errors

OK = scripted_policy(REFUND_STEPS)


@pytest.fixture(autouse=True, params=["direct", "aiohttp", "httpx"])
def transport(request, monkeypatch):
    monkeypatch.setenv("RANDORI_OPENAI_TRANSPORT", request.param)
    return request.param


def test_429_then_ok_is_retried_after_retry_after_and_scored():
    with FakeOpenAIServer(serve_first([Fault(status=429, retry_after="0.3")], OK)) as server:
        res = run_one("openai/m", server)
    assert res.status == "ok" and res.utility is True
    assert len(server.requests) == 3  # the refused request, its retry, the second turn
    assert server.times[1] - server.times[0] >= 0.3


def test_permanent_500_is_an_error_case_with_category_server_after_all_retries():
    with FakeOpenAIServer(lambda req: Fault(status=500)) as server:
        res = run_one("openai/m", server, max_retries=2)
    assert res.status == "error" and res.error_category == "server"
    assert res.utility is None and res.attack_succeeded is None  # never scored
    assert len(server.requests) == 3  # 1 + 2 retries: the SDK itself does not retry
    assert "gave up after 3 attempts" in res.error_message


def test_slow_reply_past_the_timeout_is_retried_then_recorded_as_timeout():
    with FakeOpenAIServer(lambda req: Fault(delay=1.0)) as server:
        res = run_one("openai/m", server, timeout=0.2, max_retries=1)
    assert res.status == "error" and res.error_category == "timeout"
    assert len(server.requests) == 2


def test_slow_reply_once_then_fast_is_scored():
    with FakeOpenAIServer(serve_first([Fault(delay=1.0)], OK)) as server:
        res = run_one("openai/m", server, timeout=0.3)
    assert res.status == "ok" and res.utility is True


def test_dropped_connection_is_retried():
    # The SDK's aiohttp transport reports a closed connection as a connect timeout; it must still
    # count as a connection failure, as with the SDK's default transport.
    with FakeOpenAIServer(serve_first([Fault(drop=True), Fault(drop=True)], OK)) as server:
        res = run_one("openai/m", server)
    assert res.status == "ok" and res.utility is True
    with FakeOpenAIServer(lambda req: Fault(drop=True)) as server:
        res = run_one("openai/m", server, max_retries=1)
    assert res.status == "error" and res.error_category == "connection"


def test_a_body_that_is_not_json_is_a_bad_response_and_not_retried():
    with FakeOpenAIServer(lambda req: Fault(body="<html>proxy error</html>")) as server:
        res = run_one("openai/m", server)
    assert res.status == "error" and res.error_category == "bad_response"
    assert len(server.requests) == 1


def test_context_overflow_is_its_own_category():
    body = '{"error": {"message": "This model\'s maximum context length is 8192 tokens", ' \
           '"code": "context_length_exceeded"}}'
    with FakeOpenAIServer(lambda req: Fault(status=400, body=body)) as server:
        res = run_one("openai/m", server)
    assert res.status == "error" and res.error_category == "context_length" and len(server.requests) == 1


def test_auth_failure_stops_at_once():
    with FakeOpenAIServer(lambda req: Fault(status=401)) as server:
        with pytest.raises(AuthError):
            run_one("openai/m", server)
    assert len(server.requests) == 1


def test_malformed_json_and_unknown_tool_are_tool_errors_the_agent_recovers_from():
    steps = [[("search_transactions", "{not json")], [("teleport", {})],
             [("search_transactions", {"query": 42, "bogus": 1})], *REFUND_STEPS]
    with FakeOpenAIServer(scripted_policy(steps)) as server:
        res = run_one("openai/m", server)
    assert res.status == "ok" and res.utility is True
    errors = tool_errors(res)
    assert "invalid JSON" in errors[0]
    assert errors[1].startswith("Unknown tool 'teleport'")
    assert "Invalid arguments for search_transactions" in errors[2] and "bogus" in errors[2]


def test_empty_reply_gets_a_nudge_and_the_case_is_scored():
    with FakeOpenAIServer(serve_first([""], OK)) as server:
        res = run_one("openai/m", server)
    assert res.status == "ok" and res.utility is True
    assert server.requests[1]["messages"][-1]["content"].startswith("Your last reply was empty")
    assert any("empty" in a for a in annotations(res))


def test_cut_off_reply_is_continued():
    policy = serve_first([[("search_transactions", {"query": "Brightwave"})], Cut("They refunded 12")],
                         lambda req: "9.00 EUR.")
    with FakeOpenAIServer(policy) as server:
        res = run_one("openai/m", server)
    assert res.status == "ok" and res.utility is True
    final = [m for m in res.messages if m["role"] == "assistant"][-1]
    assert final["content"] == "They refunded 129.00 EUR."
    assert any("cut off" in a for a in annotations(res))


def test_cut_off_tool_call_is_a_tool_error_with_the_reason():
    policy = serve_first([Cut([("search_transactions", '{"query": "Bright')])], OK)
    with FakeOpenAIServer(policy) as server:
        res = run_one("openai/m", server)
    assert res.status == "ok" and res.utility is True
    assert "cut off by the output token limit" in tool_errors(res)[0]


def test_settings_pass_through_exactly():
    settings = ModelSettings(temperature=0.0, seed=3, max_tokens=77, reasoning_effort="low")
    with FakeOpenAIServer(OK) as server:
        run_one("openai/m", server, settings=settings)
    first = server.requests[0]
    assert (first["temperature"], first["seed"], first["max_tokens"], first["reasoning_effort"]) == (0.0, 3, 77, "low")


def test_every_transport_sends_the_key_organization_and_project(monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-fake1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-fake2")
    with FakeOpenAIServer(OK) as server:
        res = run_one("openai/m", server, api_key="sk-the-key")
    assert res.status == "ok"
    for h in server.headers:
        h = {k.lower(): v for k, v in h.items()}
        assert h["authorization"] == "Bearer sk-the-key"
        assert (h["openai-organization"], h["openai-project"]) == ("org-fake1", "proj-fake2")



def test_the_direct_transport_does_not_import_the_sdk(transport):
    import subprocess
    import sys

    code = ("import sys; from randori.agents.models import get_model; "
            "get_model('openai/m', base_url='http://127.0.0.1:9/v1'); print('openai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "RANDORI_OPENAI_TRANSPORT": transport})
    assert out.stdout.strip() == ("False" if transport == "direct" else "True")


def test_credentials_in_the_address_are_sent_as_basic_authentication(transport):
    import base64

    if transport == "aiohttp":
        pytest.skip("the SDK's aiohttp transport refuses an address with credentials (its own limit)")
    with FakeOpenAIServer(OK) as server:
        server_url = server.base_url.replace("http://", "http://proxyuser:proxy-pw-77@")

        class At:  # run_one reads .base_url
            base_url = server_url

        res = run_one("openai/m", At, api_key="sk-not-for-the-proxy")
        sent = {h["authorization"] for h in server.headers}
    assert res.status == "ok"
    assert sent == {"Basic " + base64.b64encode(b"proxyuser:proxy-pw-77").decode()}
