"""Choosing the OpenAI transport, and the direct one's own pieces (its behaviour against every fault of
the fake server is in test_openai_faults.py, on every transport)."""

import pytest

from randori.agents.models import ModelSettings


def test_transport_defaults_to_direct_and_can_be_switched(monkeypatch):
    from randori.agents.models.openai import OpenAIModel
    from randori.errors import UserError

    monkeypatch.delenv("RANDORI_OPENAI_TRANSPORT", raising=False)
    model = OpenAIModel("m", ModelSettings(), base_url="http://x/v1")
    assert model.direct is not None and model.client is None  # the SDK is not used
    monkeypatch.setenv("RANDORI_OPENAI_TRANSPORT", "aiohttp")
    assert "Aio" in type(OpenAIModel("m", ModelSettings(), base_url="http://x/v1")._http).__name__
    monkeypatch.setenv("RANDORI_OPENAI_TRANSPORT", "httpx")
    assert "Aio" not in type(OpenAIModel("m", ModelSettings(), base_url="http://x/v1")._http).__name__
    monkeypatch.setenv("RANDORI_OPENAI_TRANSPORT", "curl")
    with pytest.raises(UserError, match="RANDORI_OPENAI_TRANSPORT must be one of direct, aiohttp, httpx"):
        OpenAIModel("m", ModelSettings(), base_url="http://x/v1")


@pytest.mark.parametrize("env, url, proxy", [
    ({}, "https://api.openai.com/v1", None),
    ({"HTTPS_PROXY": "http://proxy:3128"}, "https://api.openai.com/v1", "http://proxy:3128"),
    ({"HTTPS_PROXY": "http://proxy:3128"}, "http://127.0.0.1:8000/v1", None),  # HTTP_PROXY not set
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "localhost,127.0.0.1"}, "http://127.0.0.1:8000/v1", None),
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "other.example"}, "http://vllm.lab:8000/v1", "http://p:1"),
    ({"ALL_PROXY": "http://all:9"}, "https://api.openai.com/v1", "http://all:9"),
])
def test_the_direct_client_finds_the_proxy_as_httpx_would(env, url, proxy, monkeypatch):
    from randori.agents.models.openai import proxy_for

    for var in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "all_proxy",
                "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert proxy_for(url) == proxy


def test_the_direct_transport_sends_through_the_proxy_the_environment_names(monkeypatch):
    """The fake server plays the proxy: the model's host does not exist, so only the proxy can answer."""
    from tests.fakes.openai_server import FakeOpenAIServer, scripted_policy
    from tests.models.helpers import REFUND_STEPS, run_one

    monkeypatch.setenv("RANDORI_OPENAI_TRANSPORT", "direct")
    with FakeOpenAIServer(scripted_policy(REFUND_STEPS)) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)

        class Behind:  # run_one reads .base_url
            base_url = "http://model.invalid/v1"

        res = run_one("openai/m", Behind)
    assert res.status == "ok" and res.utility is True
    assert proxy.paths and all(p.startswith("http://model.invalid/v1/") for p in proxy.paths)
