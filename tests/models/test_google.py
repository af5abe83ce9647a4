"""google/<model> through google-genai against a fake Gemini API."""

import pytest

pytest.importorskip("google.genai")

from randori.agents.models import ModelSettings, get_model  # noqa: E402
from randori.errors import AuthError, UserError  # noqa: E402
from tests.fakes.google_server import FakeGoogleServer  # noqa: E402
from tests.fakes.openai_server import Fault, scripted_policy, serve_first  # noqa: E402
from tests.models.helpers import REFUND_STEPS, run_one, tool_errors  # noqa: E402

OK = scripted_policy(REFUND_STEPS)


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "goog-test-0000000000")


def test_function_calling_round_trip_and_exact_settings():
    settings = ModelSettings(temperature=0.0, seed=5, max_tokens=256, reasoning_effort="low")
    with FakeGoogleServer(OK) as server:
        res = run_one("google/gemini-test", server, settings=settings)
    assert res.status == "ok" and res.utility is True
    first, second = server.requests
    assert "gemini-test:generateContent" in server.paths[0]
    cfg = first["generationConfig"]
    assert (cfg["temperature"], cfg["seed"], cfg["maxOutputTokens"]) == (0.0, 5, 256)
    # The SDK writes this field in proto field-name form; the API accepts either spelling.
    thinking = cfg["thinkingConfig"]
    assert thinking.get("thinkingLevel", thinking.get("thinking_level")) == "LOW"
    assert first["systemInstruction"]["parts"][0]["text"].startswith("You are the online-banking assistant")
    names = {d["name"] for d in first["tools"][0]["functionDeclarations"]}
    assert {"send_payment", "search_transactions"} <= names
    model_turn, tool_turn = second["contents"][1], second["contents"][2]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0]["functionCall"] == {"name": "search_transactions", "args": {"query": "Brightwave"}}
    response = tool_turn["parts"][0]["functionResponse"]
    assert response["name"] == "search_transactions" and "Brightwave Electronics" in response["response"]["output"]
    assert res.model_calls == 2 and res.input_tokens == 301 + 302 and res.output_tokens == 60
    assert {k.lower(): v for k, v in server.headers[0].items()}["x-goog-api-key"] == "goog-test-0000000000"


def test_faults_are_retried_and_categorised():
    with FakeGoogleServer(serve_first([Fault(status=429, retry_after="0.05"), Fault(status=503)], OK)) as server:
        res = run_one("google/gemini-test", server)
    assert res.status == "ok" and len(server.requests) == 4
    with FakeGoogleServer(lambda req: Fault(status=500)) as server:
        res = run_one("google/gemini-test", server, max_retries=1)
    assert res.status == "error" and res.error_category == "server" and len(server.requests) == 2
    with FakeGoogleServer(lambda req: Fault(status=403)) as server:
        with pytest.raises(AuthError):
            run_one("google/gemini-test", server)


def test_unknown_function_is_a_tool_error():
    with FakeGoogleServer(serve_first([[("teleport", {"to": "mars"})]], OK)) as server:
        res = run_one("google/gemini-test", server)
    assert res.status == "ok" and res.utility is True
    assert tool_errors(res)[0].startswith("Unknown tool 'teleport'")
    assert server.requests[1]["contents"][2]["parts"][0]["functionResponse"]["response"]["error"]


def test_credentials_are_required(monkeypatch):
    monkeypatch.delenv("GOOGLE_API_KEY")
    with pytest.raises(UserError, match="GOOGLE_API_KEY"):
        get_model("google/gemini-test")
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    with pytest.raises(UserError, match="GOOGLE_CLOUD_PROJECT"):
        get_model("google/gemini-test")
