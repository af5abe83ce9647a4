"""No fragment of a key's secret part (6 characters or more) reaches the store, the viewer, the
terminal or a report, wherever a server puts the key in a long error message (error texts are
shortened, and a key cut in two at the limit must not leave its first part behind), and however short
the key. And scrubbing changes nothing else: text and paths that share short pieces with a key (a
low-entropy test key's "test-0" in pytest's "pytest-0") are kept as they are."""

from __future__ import annotations

import json
import random
import string

import httpx
import pytest

from randori import errors
from randori.agents.models.resilience import status_error, transport_error
from randori.bench.store import Store
from randori.errors import FRAGMENT, ModelError, clip, register_secret, scrub_secrets, secret_part
from tests.fakes.openai_server import FakeOpenAIServer, Fault
from tests.helpers import benign_cases, randori

# Random letters, so that none of its 6-character runs turns up by chance in ordinary output.
KEY = "sk-" + "".join(random.Random(19).choices(string.ascii_letters + string.digits, k=37))
SHORT_KEY = "hunter2"
FILLER = ("The request could not be processed because the credentials supplied with it were "
          "rejected by the upstream gateway, which logged the attempt for review. ") * 8


def fragments(key: str) -> list[str]:
    """Every FRAGMENT-long piece of `key`'s secret part (its provider's prefix, "sk-", is public)."""
    secret = secret_part(key)
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
        # One request per case, six repeats of every benign case: more requests than offsets.
        r = randori("run", "-s", "banking", "--no-attack", "--repeats", "6", "-m", "openai/fake-model",
                    "--base-url", server.base_url, "-r", str(results), "--concurrency", "1", env=env)
    assert r.returncode == 0, r.stderr
    assert len(server.requests) == 6 * benign_cases("banking") > len(offsets)
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


# -- scrubbing changes nothing but keys ----------------------------------------------------------

LOW_ENTROPY_KEYS = ["sk-ant-test-0000000000", "sk-test-1111111111111111", "goog-test-0000000000", "hunter2"]
ORDINARY = ["/tmp/pytest-of-root/pytest-0/test_cached_tokens0/p.toml", "pytest-0", "the test-0 run passed",
            "sk-ant-test- keys are fakes", "1000000000 tokens", "the hunter's lodge", "counter2 is up",
            "session goog-test-1 ended", "C:\\Users\\ana\\test-0000\\x"]


@pytest.mark.parametrize("key", LOW_ENTROPY_KEYS)
def test_text_that_shares_short_pieces_with_a_low_entropy_key_is_kept(key):
    for text in ORDINARY:
        assert scrub_secrets(text, [key]) == text
        assert scrub_secrets(json.dumps({"price_source": text}), [key]) == json.dumps({"price_source": text})
    # The key itself is still masked, whole or inside other text and JSON.
    assert scrub_secrets(f"bad key {key}!", [key]) == "bad key ***!"
    assert key not in scrub_secrets(json.dumps({"error": f"key={key}"}), [key])


def test_a_path_the_user_gave_is_kept_even_with_a_piece_of_a_random_key(tmp_path):
    piece = secret_part(KEY)[4:14]
    folder = tmp_path / f"run-{piece}"
    folder.mkdir()
    assert scrub_secrets(f"prices from {folder}/p.toml", [KEY]) == f"prices from {folder}/p.toml"
    # The same piece anywhere else is masked: only a value naming an existing file is the user's.
    assert piece not in scrub_secrets(f"the server said {piece}...", [KEY])
    assert piece not in scrub_secrets(f"prices from /nowhere/run-{piece}/p.toml", [KEY])


def test_pieces_of_a_random_key_are_masked_where_they_can_be_it():
    secret = secret_part(KEY)
    assert secret == KEY[3:]  # "sk-" is the provider's prefix, not part of the secret
    for shown in (f"key {KEY[:12]}****{KEY[-4:]}", f"({secret[3:12]})", f"ends {secret[-9:]}", f"x{KEY[:20]}",
                  f"cut {KEY[:15]}...", f"tail ...{secret[-12:]}", f"glued{KEY}glued"):
        assert not leaks(KEY, scrub_secrets(shown, [KEY])), shown
    # The public prefix alone, and a piece the text around it contradicts, are not the key.
    assert scrub_secrets("keys start with sk-", [KEY]) == "keys start with sk-"
    other = "Q" if secret[2] != "Q" else "R"
    assert scrub_secrets(f"{other}{secret[3:11]}Z", [KEY]) in (f"{other}{secret[3:11]}Z", f"{other}***Z")
