"""Prompt caching: Anthropic requests carry cache breakpoints and a server applying the documented
prefix rule reads each turn's prefix from its cache; OpenAI-compatible requests keep a byte-stable
prefix; every provider's cached tokens are stored per case and priced at their own rates."""

import json
import re

import pytest

pytest.importorskip("anthropic")

from randori.bench.pricing import PRICES_ENV  # noqa: E402
from tests.fakes.anthropic_cache import CachingAnthropicServer  # noqa: E402
from tests.fakes.google_server import FakeGoogleServer, generate_response  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, completion, scripted_policy  # noqa: E402
from tests.fakes.policies import ground_truth_policy  # noqa: E402
from tests.helpers import randori  # noqa: E402
from tests.models.helpers import REFUND_STEPS, run_one  # noqa: E402

EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture(autouse=True)
def keys(monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(PRICES_ENV, raising=False)
    monkeypatch.delenv("RANDORI_ANTHROPIC_CACHE", raising=False)


def test_anthropic_requests_carry_breakpoints_after_tools_system_and_conversation():
    with CachingAnthropicServer(scripted_policy(REFUND_STEPS)) as server:
        res = run_one("anthropic/claude-test", server)
    assert res.status == "ok"
    first, second = server.requests
    for req in (first, second):
        assert req["tools"][-1]["cache_control"] == EPHEMERAL
        assert all("cache_control" not in t for t in req["tools"][:-1])
        [system] = req["system"]
        assert system["cache_control"] == EPHEMERAL and system["text"].startswith("You are the online-banking")
        assert req["messages"][-1]["content"][-1]["cache_control"] == EPHEMERAL
    assert server.breakpoints == [3, 3]
    # Turn 1 wrote its whole prompt; turn 2 read exactly that prefix back and wrote only what was new.
    u1, u2 = server.usages
    assert u1["cache_read_input_tokens"] == 0 and u1["cache_creation_input_tokens"] > 1024
    assert u2["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]
    assert 0 < u2["cache_creation_input_tokens"] < u1["cache_creation_input_tokens"]
    assert res.cached_input_tokens == u2["cache_read_input_tokens"]
    assert res.cache_write_tokens == u1["cache_creation_input_tokens"] + u2["cache_creation_input_tokens"]
    assert res.input_tokens == sum(u["input_tokens"] + u["cache_read_input_tokens"]
                                   + u["cache_creation_input_tokens"] for u in server.usages)


def test_caching_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("RANDORI_ANTHROPIC_CACHE", "off")
    with CachingAnthropicServer(scripted_policy(REFUND_STEPS)) as server:
        res = run_one("anthropic/claude-test", server)
    assert server.breakpoints == [0, 0] and isinstance(server.requests[0]["system"], str)
    assert res.cached_input_tokens == 0 and res.cache_write_tokens == 0


def _run_and_report(tmp_path, server, model, *extra, env=None):
    results = tmp_path / "r"
    run = randori("run", "-s", "banking", "-u", "user_task_1", "-u", "user_task_2", "--no-attack", "-m", model,
                  "--base-url", server.base_url, "-r", str(results), "--concurrency", "1", *extra, env=env)
    assert run.returncode == 0, run.stderr
    rep = randori("report", "-r", str(results), "-f", "json", *extra, env=env)
    assert rep.returncode == 0, rep.stderr
    [row] = json.loads(rep.stdout)["rows"]
    csv = randori("report", "-r", str(results), "-f", "csv", *extra, env=env).stdout
    return run, row, csv


def test_cached_tokens_reach_the_store_report_and_cost(tmp_path):
    # In a folder that shares pieces with the key ("test-0", "-0000"), as pytest's first temporary
    # folder on a machine does (pytest-0): the path is the user's and is stored and shown as given.
    prices = tmp_path / "pytest-0" / "test-0000000000" / "p.toml"
    prices.parent.mkdir(parents=True)
    prices.write_text('["anthropic/claude-test"]\ninput = 1\noutput = 5\ncache_read = 0.1\ncache_write = 1.25\n')
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-0000000000", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    with CachingAnthropicServer(ground_truth_policy(["banking"])) as server:
        run, row, csv = _run_and_report(tmp_path, server, "anthropic/claude-test", "--prices", str(prices), env=env)
    read = sum(u["cache_read_input_tokens"] for u in server.usages)
    written = sum(u["cache_creation_input_tokens"] for u in server.usages)
    total = sum(u["input_tokens"] for u in server.usages) + read + written
    # The second case reads the tools and system prompt the first one wrote.
    assert server.usages[len(server.usages) // 2]["cache_read_input_tokens"] > 1024
    assert (row["cached_input_tokens"], row["cache_write_tokens"], row["input_tokens"]) == (read, written, total)
    expected = ((total - read - written) * 1 + read * 0.1 + written * 1.25 + row["output_tokens"] * 5) / 1e6
    assert row["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert row["price_source"] == str(prices)
    header, line = csv.splitlines()[:2]
    assert "cached_input_tokens" in header.split(",") and "cache_write_tokens" in header.split(",")
    assert f"prices of anthropic/claude-test: {prices}" in run.stdout
    assert "% of input tokens read" in run.stdout
    # The HTML report says the same under its table: where the prices came from, and cache use.
    html = tmp_path / "report.html"
    rep = randori("report", "-r", str(tmp_path / "r"), "--prices", str(prices), "--html", str(html), env=env)
    assert rep.returncode == 0, rep.stderr
    [line] = re.findall(r'<p class="meta" id="prices">(.*?)</p>', html.read_text())
    assert line.startswith(f"prices of anthropic/claude-test: {prices}; prompt cache: ")
    assert "% of input tokens read" in line


def test_openai_and_gemini_cached_token_fields_are_stored(tmp_path):
    class CachingOpenAI(FakeOpenAIServer):
        def render(self, reply, request, path, n, cut):
            out = completion(reply, request.get("model", "fake"), n, cut)
            out["usage"]["prompt_tokens_details"] = {"cached_tokens": 64}
            return out

    with CachingOpenAI(scripted_policy(REFUND_STEPS)) as server:
        res = run_one("openai/fake", server)
    assert res.model_calls == 2 and res.cached_input_tokens == 128 and res.cache_write_tokens == 0

    class CachingGoogle(FakeGoogleServer):
        def render(self, reply, request, path, n, cut):
            out = generate_response(reply, n, cut)
            out["usageMetadata"]["cachedContentTokenCount"] = 50
            return out

    pytest.importorskip("google.genai")
    with CachingGoogle(scripted_policy(REFUND_STEPS)) as server:
        res = run_one("google/gemini-test", server, api_key="goog-test-0000000000")
    assert res.model_calls == 2 and res.cached_input_tokens == 100


def _array(body: str, key: str) -> tuple[int, int]:
    """Where the JSON array under `key` starts and ends in `body`."""
    start = body.index(f'"{key}":') + len(key) + 3
    _, end = json.JSONDecoder().raw_decode(body, start)
    return start, end


def test_openai_requests_keep_a_byte_stable_prefix():
    with FakeOpenAIServer(ground_truth_policy(["banking"])) as server:
        run_one("openai/fake", server, user_task="user_task_3")
        first_case = len(server.raw)
        run_one("openai/fake", server, user_task="user_task_1")
    bodies = [b.decode() for b in server.raw]  # UTF-8 both ways: equal text is equal bytes
    assert first_case >= 2 and len(bodies) - first_case >= 2
    for conv in (bodies[:first_case], bodies[first_case:]):
        for before, after in zip(conv, conv[1:], strict=False):
            _, end = _array(before, "messages")
            # Everything up to the previous turn's last message is resent byte for byte.
            assert after.startswith(before[:end - 1])
    tools = {b[slice(*_array(b, "tools"))] for b in bodies}
    assert len(tools) == 1  # the same tool list bytes on every request of every case
    # Two cases of one suite share their system message byte for byte.
    s1, s2 = (b[slice(*_array(b, "messages"))] for b in (bodies[0], bodies[first_case]))
    system = json.dumps(json.loads(s1)[0], ensure_ascii=False, separators=(",", ":"))
    assert s1.startswith("[" + system) and s2.startswith("[" + system)


def test_a_store_without_the_cache_columns_reads_them_as_zero_and_a_run_adds_them(tmp_path):
    import sqlite3

    from randori.bench.store import STORE_FILE

    results = tmp_path / "r"
    base = ["-s", "banking", "-u", "user_task_1", "--no-attack", "-r", str(results)]
    assert randori("run", *base).returncode == 0
    con = sqlite3.connect(results / STORE_FILE)
    for col in ("cached_input_tokens", "cache_write_tokens", "defense_cached_input_tokens",
                "defense_cache_write_tokens"):
        con.execute(f"ALTER TABLE cases DROP COLUMN {col}")
    con.commit()
    con.close()
    rep = randori("report", "-r", str(results), "-f", "json")
    assert rep.returncode == 0, rep.stderr
    assert {(r["cached_input_tokens"], r["cache_write_tokens"]) for r in json.loads(rep.stdout)["rows"]} == {(0, 0)}
    assert randori("run", *base, "-u", "user_task_2").returncode == 0
    con = sqlite3.connect(results / STORE_FILE)
    cols = {r[1] for r in con.execute("PRAGMA table_info(cases)")}
    con.close()
    assert {"cached_input_tokens", "cache_write_tokens"} <= cols


def test_several_anthropic_servers_share_what_a_conversation_keeps():
    from randori.agents.models import get_model

    model = get_model("anthropic/claude-test", base_url=["http://127.0.0.1:1", "http://127.0.0.1:2"])
    first, second = (s.model for s in model.servers)
    assert first.base_url != second.base_url and first._thinking is second._thinking
