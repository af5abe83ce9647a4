"""No fragment of a key (6 characters or more) reaches the store, the viewer, the terminal or a
report, wherever a server puts the key in a long error message (error texts are shortened, and a
key cut in two at the limit must not leave its first part behind), and however short the key."""

from __future__ import annotations

import json
import random
import string

import httpx
import pytest

from randori import errors
from randori.agents.models.resilience import status_error, transport_error
from randori.bench.store import Store
from randori.errors import FRAGMENT, ModelError, clip, register_secret, scrub_secrets
from tests.fakes.openai_server import FakeOpenAIServer, Fault
from tests.helpers import randori

# Random letters, so that none of its 6-character runs turns up by chance in ordinary output.
KEY = "sk-" + "".join(random.Random(19).choices(string.ascii_letters + string.digits, k=37))
SHORT_KEY = "hunter2"
FILLER = ("The request could not be processed because the credentials supplied with it were "
          "rejected by the upstream gateway, which logged the attempt for review. ") * 8


def fragments(secret: str) -> list[str]:
    return [secret[i:i + FRAGMENT] for i in range(len(secret) - FRAGMENT + 1)]


def leaks(secret: str, *texts: str) -> list[str]:
    return sorted({f for f in fragments(secret) for t in texts if f in t})


def with_key_at(offset: int, key: str = KEY) -> str:
    return FILLER[:offset] + key + FILLER[offset:]


def openai_status_error(text: str):
    import openai

    from randori.agents.models.openai import map_openai_error

    response = httpx.Response(400, request=httpx.Request("POST", "http://fake/v1/chat/completions"))
    e = openai.BadRequestError(text, response=response, body={"error": {"message": text, "code": 400}})
    return map_openai_error("openai/fake", e)


ERROR_PATHS = {
    "bad_request": lambda t: status_error("openai/fake", 400, t),
    "context_length": lambda t: status_error("openai/fake", 400, "maximum context length " + t),
    "not_found": lambda t: status_error("openai/fake", 404, t),
    "unreadable": lambda t: transport_error("openai/fake", ValueError(t)),
    "other": lambda t: transport_error("openai/fake", RuntimeError(t)),
    "openai_sdk": openai_status_error,
    "clip": lambda t: ModelError("other", clip(t, 250)),
}


@pytest.mark.parametrize("path", sorted(ERROR_PATHS))
def test_key_at_every_offset_of_a_long_error_leaves_no_fragment(path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    make = ERROR_PATHS[path]
    for offset in range(len(FILLER) // 2):  # past every limit a message is cut at (200, 300)
        message = str(make(with_key_at(offset)))
        assert not leaks(KEY, message), (offset, message)
    assert "***" in str(make(with_key_at(10)))  # scrubbed, not dropped


def test_short_keys_and_registered_keys_are_scrubbed(monkeypatch):
    monkeypatch.setattr(errors, "_registered", set())
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("VLLM_API_KEY", SHORT_KEY)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")  # a setting, not a secret
    text = scrub_secrets(f"bad key {SHORT_KEY}; is it false?")
    assert SHORT_KEY not in text and "is it false?" in text
    register_secret("pw-from-a-url-Zq81")  # a provider given a key directly, a password in a URL
    assert "Zq81" not in scrub_secrets("http://ana:pw-from-a-url-Zq81@host")
    # Parts of a key that a server quotes (some show its first characters) are masked too.
    assert not leaks(KEY, scrub_secrets(f"Incorrect API key provided: {KEY[:9]}********{KEY[-4:]}"))


def policy_with_key_at_every_offset(key: str, offsets: range):
    """Answers every 10th request; the rest get an error whose message holds `key` at the next offset,
    alternately a plain 400 (kept to 300 characters) and a context overflow (kept to 200)."""
    count = iter(range(10 ** 6))

    def policy(request):
        n = next(count)
        if n % 10 == 9:
            return "Nothing to do."
        offset = offsets[n % len(offsets)]
        text = ("maximum context length exceeded: " if n % 2 else "") + with_key_at(offset, key)
        status = 400
        return Fault(status=status, body=json.dumps({"error": {"message": text, "code": status}}))

    return policy


def viewer_pages(results, keys):
    pytest.importorskip("starlette", reason="the viewer extra is not installed")
    from starlette.testclient import TestClient

    from randori.viewer.app import create_app

    pages = []
    with TestClient(create_app(results), base_url="http://127.0.0.1") as client:
        for url in ("/", "/cases", "/cases?view=list", "/cases?outcome=error&view=list"):
            pages.append(client.get(url).text)
        for key in keys:
            pages.append(client.get(f"/case/{key}").text)
            pages.append(client.get(f"/case/{key}.json").text)
    return pages


def everything_written(results, run, html):
    """Terminal output of the run and of every report format, the HTML report, the store's files
    byte for byte, every stored trace and row, and every viewer page."""
    env = run.env
    outputs = [run.result.stdout, run.result.stderr]
    for args in (["-f", "json"], ["-f", "csv"], [], ["--html", str(html)]):
        rep = randori("report", "-r", str(results), *args, env=env)
        assert rep.returncode == 0, rep.stderr
        outputs += [rep.stdout, rep.stderr]
    outputs.append(html.read_text())
    with Store(results) as store:
        cases = store.cases()
        outputs += [json.dumps(store.trace(c["key"])) for c in cases]
        outputs += [json.dumps(cases), json.dumps(store.runs())]
    for f in results.iterdir():  # the database, its WAL and anything else written there
        outputs.append(f.read_bytes().decode("latin-1"))
    outputs += viewer_pages(results, [c["key"] for c in cases])
    return cases, outputs


class _Run:
    def __init__(self, result, env):
        self.result, self.env = result, env


def test_no_fragment_of_a_key_anywhere_after_a_run(tmp_path):
    # Offsets 150-319 put the key across both places a message is cut (200 and 300 characters).
    offsets = range(150, 320)
    env = {"OPENAI_API_KEY": KEY, "RANDORI_RETRY_BASE_DELAY": "0.001"}
    results = tmp_path / "results"
    with FakeOpenAIServer(policy_with_key_at_every_offset(KEY, offsets)) as server:
        # 33 cases per repeat, one request each: 198 requests, 179 of them errors.
        r = randori("run", "-s", "banking", "--no-attack", "--repeats", "6", "-m", "openai/fake-model",
                    "--base-url", server.base_url, "-r", str(results), "--concurrency", "1", env=env)
    assert r.returncode == 0, r.stderr
    assert len(server.requests) == 198
    cases, outputs = everything_written(results, _Run(r, env), tmp_path / "report.html")
    errors = [c for c in cases if c["status"] == "error"]
    assert len(errors) >= len(offsets)
    assert {c["error_category"] for c in errors} == {"bad_request", "context_length"}
    # Where the key fell inside what is kept, it is masked, not dropped with the rest of the text.
    assert sum("***" in c["error_message"] for c in errors) >= 40
    assert not leaks(KEY, *outputs)


@pytest.mark.parametrize("model, variable, key", [("openai/fake-model", "OPENAI_API_KEY", KEY),
                                                   ("vllm/fake", "VLLM_API_KEY", SHORT_KEY)])
def test_a_key_the_server_echoes_is_nowhere(model, variable, key, tmp_path):
    env = {variable: key, "RANDORI_RETRY_BASE_DELAY": "0.001"}
    results = tmp_path / "results"
    answered = iter(range(10 ** 6))

    def policy(request):  # some cases meet a server that quotes the credentials it got in its error
        return "Nothing to do." if next(answered) % 3 == 0 else Fault(status=400, echo_auth=True)

    with FakeOpenAIServer(policy) as server:
        r = randori("run", "-s", "banking", "--no-attack", "-m", model, "--base-url", server.base_url,
                    "-r", str(results), "--concurrency", "1", env=env)
    assert r.returncode == 0, r.stderr
    auth = {h.get("Authorization") or h.get("authorization") for h in server.headers}
    assert auth == {f"Bearer {key}"}  # the key was really in play
    cases, outputs = everything_written(results, _Run(r, env), tmp_path / "report.html")
    errors = [c for c in cases if c["status"] == "error"]
    assert errors and all("***" in c["error_message"] for c in errors)  # scrubbed, not lost
    assert not [o for o in outputs if key in o]
    assert not leaks(key, *outputs)
