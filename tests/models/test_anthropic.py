"""anthropic/<model> through the official SDK against a fake Messages API."""

import pytest

pytest.importorskip("anthropic")

from randori.agents.models import ModelSettings, get_model  # noqa: E402
from randori.agents.models.anthropic import DEFAULT_MAX_TOKENS, to_anthropic  # noqa: E402
from randori.errors import AuthError, UserError  # noqa: E402
from randori.vocabulary import Message, ToolCall, ToolResult  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropicServer, tool_results  # noqa: E402
from tests.fakes.openai_server import Cut, Fault, scripted_policy, serve_first  # noqa: E402
from tests.models.helpers import REFUND_STEPS, annotations, run_one, tool_errors  # noqa: E402

OK = scripted_policy(REFUND_STEPS)


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")


def test_native_tool_use_round_trip_and_exact_settings():
    settings = ModelSettings(temperature=0.0, max_tokens=300, reasoning_effort="low")
    with FakeAnthropicServer(OK) as server:
        res = run_one("anthropic/claude-test", server, settings=settings)
    assert res.status == "ok" and res.utility is True
    first, second = server.requests
    assert server.paths[0] == "/v1/messages"
    assert first["model"] == "claude-test" and first["temperature"] == 0.0 and first["max_tokens"] == 300
    assert first["output_config"] == {"effort": "low"}
    assert first["system"][0]["text"].startswith("You are the online-banking assistant")
    assert [m["role"] for m in first["messages"]] == ["user"]
    tool = next(t for t in first["tools"] if t["name"] == "send_payment")
    assert "amount" in tool["input_schema"]["properties"]
    assistant = second["messages"][1]
    assert assistant == {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1_0",
                                                           "name": "search_transactions",
                                                           "input": {"query": "Brightwave"}}]}
    [result] = tool_results(second)
    assert result["tool_use_id"] == "toolu_1_0" and "Brightwave Electronics" in result["content"]
    assert res.model_calls == 2 and res.input_tokens == 201 + 202 and res.output_tokens == 40
    headers = {k.lower(): v for k, v in server.headers[0].items()}
    # SDK versions differ: x-api-key, or a bearer token.
    assert "sk-ant-test-0000000000" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])


def test_unset_max_tokens_sends_the_documented_default_and_no_temperature_when_unset():
    with FakeAnthropicServer(OK) as server:
        run_one("anthropic/claude-test", server, settings=ModelSettings(temperature=None))
    assert server.requests[0]["max_tokens"] == DEFAULT_MAX_TOKENS and "temperature" not in server.requests[0]


def test_seed_is_refused_rather_than_silently_dropped():
    with pytest.raises(UserError, match="no seed"):
        get_model("anthropic/claude-test", ModelSettings(seed=1))


def test_missing_key_is_a_user_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        get_model("anthropic/claude-test")


def test_rate_limit_and_overload_are_retried():
    faults = [Fault(status=429, retry_after="0.05"), Fault(status=529), Fault(status=500)]
    with FakeAnthropicServer(serve_first(faults, OK)) as server:
        res = run_one("anthropic/claude-test", server)
    assert res.status == "ok" and res.utility is True and len(server.requests) == 5


def test_permanent_overload_is_a_server_error_case():
    with FakeAnthropicServer(lambda req: Fault(status=529)) as server:
        res = run_one("anthropic/claude-test", server, max_retries=1)
    assert res.status == "error" and res.error_category == "server" and len(server.requests) == 2


def test_auth_failure_stops():
    with FakeAnthropicServer(lambda req: Fault(status=401)) as server:
        with pytest.raises(AuthError):
            run_one("anthropic/claude-test", server)
    assert len(server.requests) == 1


def test_bad_tool_input_unknown_tool_and_empty_reply_are_recoverable():
    steps = [[("search_transactions", "not an object")], [("teleport", {})], ""]
    policy = serve_first(steps, OK)
    with FakeAnthropicServer(policy) as server:
        res = run_one("anthropic/claude-test", server)
    assert res.status == "ok" and res.utility is True
    errors = tool_errors(res)
    assert "not a JSON object" in errors[0] and errors[1].startswith("Unknown tool 'teleport'")
    # The tool errors went back flagged as errors.
    flagged = [b for b in tool_results(server.requests[2]) if b.get("is_error")]
    assert len(flagged) == 2
    assert any("empty" in a for a in annotations(res))


def test_cut_off_reply_is_continued():
    policy = serve_first([[("search_transactions", {"query": "Brightwave"})], Cut("They refunded 12")],
                         lambda req: "9.00 EUR.")
    with FakeAnthropicServer(policy) as server:
        res = run_one("anthropic/claude-test", server)
    assert res.status == "ok" and res.utility is True
    # The partial answer went back as the assistant's turn, followed by the request to continue.
    last = server.requests[-1]["messages"]
    assert last[-2] == {"role": "assistant", "content": [{"type": "text", "text": "They refunded 12"}]}
    assert "cut off" in last[-1]["content"][0]["text"]


def test_conversion_merges_turns_and_skips_empty_ones():
    call = ToolCall(id="t1", function="f", args={"a": 1})
    msgs = [Message.system("sys"), Message.user("hi"), Message.assistant("", [call]),
            Message.tool(ToolResult(call_id="t1", function="f", content="out")),
            Message.user("nudge"), Message.assistant(""), Message.user("again")]
    system, out = to_anthropic(msgs)
    assert system == "sys"
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert [b["type"] for b in out[2]["content"]] == ["tool_result", "text", "text"]
