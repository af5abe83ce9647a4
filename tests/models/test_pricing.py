"""Price table, cost in metrics, and the cost column a user sees."""

import json

import pytest

from randori.bench.pricing import PRICES_ENV, Price, load_prices, parse_prices
from randori.errors import UserError
from randori.report.metrics import summarize
from tests.fakes.openai_server import FakeOpenAIServer, scripted_policy
from tests.helpers import randori
from tests.models.helpers import REFUND_STEPS


@pytest.fixture(autouse=True)
def no_user_prices(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(PRICES_ENV, raising=False)


def test_genai_prices_is_the_base_and_the_builtin_table_covers_the_rest():
    p = load_prices()
    mini, source = p.priced("openai/gpt-4o-mini-2024-07-18")
    assert (mini.input, mini.output) == (0.15, 0.60) and source.startswith("genai-prices ")
    assert "(gpt-4o-mini)" in source  # the entry of genai-prices it matched
    haiku = p.lookup("anthropic/claude-haiku-4-5")
    assert haiku.cache_read < haiku.input < haiku.cache_write  # cache reads cheaper, writes dearer
    assert p.priced("scripted/gullible") == (Price(0, 0), "built-in table")
    assert p.priced("openai/some-future-model") == (None, None)
    assert p.cost("openai/gpt-4o-mini", 1_000_000, 2_000_000) == pytest.approx(0.15 + 1.20)
    assert p.cost("vllm/my-model", 10, 10) is None  # unknown is not free


def test_cached_tokens_and_cache_writes_are_priced_at_their_own_rates():
    price = Price(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25)
    # 1M input tokens in all: 600k read from cache, 300k written to it, 100k fresh.
    assert price.cost(1_000_000, 0, cached=600_000, written=300_000) == pytest.approx(0.06 + 0.375 + 0.1)
    assert Price(2.0, 0).cost(1_000_000, 0, cached=500_000) == pytest.approx(2.0)  # no cache rate: input rate
    haiku = load_prices().cost("anthropic/claude-haiku-4-5", 1_000_000, 0, cached=1_000_000)
    assert haiku == pytest.approx(0.1)


def test_a_price_file_overrides_genai_prices_and_may_set_cache_rates(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('["anthropic/claude-haiku-4-5"]\ninput = 2\noutput = 8\ncache_read = 0.5\n')
    table = load_prices(f)
    assert table.priced("anthropic/claude-haiku-4-5") == (Price(2, 8, cache_read=0.5), str(f))
    assert table.source("anthropic/claude-sonnet-4-5").startswith("genai-prices")


def test_user_config_then_env_then_flag_override_in_order(monkeypatch, tmp_path):
    cfg = tmp_path / "config" / "randori" / "prices.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('["openai/gpt-4o-mini*"]\ninput = 1\noutput = 2\n["vllm/*"]\ninput = 0.5\noutput = 0.5\n')
    assert load_prices().lookup("openai/gpt-4o-mini") == Price(1, 2)
    env_file = tmp_path / "env.toml"
    env_file.write_text('["openai/gpt-4o-mini"]\ninput = 3\noutput = 4\n')
    monkeypatch.setenv(PRICES_ENV, str(env_file))
    assert load_prices().lookup("openai/gpt-4o-mini") == Price(3, 4)  # exact beats any pattern
    flag = tmp_path / "flag.toml"
    flag.write_text('["openai/gpt-4o-mini"]\ninput = 5\noutput = 6\n')
    table = load_prices(flag)
    assert table.lookup("openai/gpt-4o-mini") == Price(5, 6)
    assert table.lookup("vllm/x") == Price(0.5, 0.5)  # earlier overrides stay unless replaced


@pytest.mark.parametrize("text, message", [
    ("not toml [", "not valid TOML"),
    ('["gpt-4o"]\ninput = 1\noutput = 1\n', "provider/model"),
    ('["openai/x"]\ninput = "cheap"\noutput = 1\n', "numeric"),
    ('["openai/x"]\ninput = 1\n', "numeric"),
    ('["openai/x"]\ninput = -1\noutput = 1\n', "negative"),
    ('["openai/x"]\ninput = 1\noutput = 1\ncache_read = -1\n', "negative"),
    ('["openai/x"]\ninput = 1\noutput = 1\ncache_write = "x"\n', "numeric"),
])
def test_bad_price_files_are_user_errors(text, message):
    with pytest.raises(UserError, match=message):
        parse_prices(text, "f.toml")


def test_missing_price_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="cannot read price file"):
        load_prices(tmp_path / "nope.toml")


def row(model, defense="none", inp=0, out=0, dinp=0, dout=0):
    return {"kind": "benign", "suite": "s", "suite_version": "1", "model": model, "defense": defense,
            "attack": None, "status": "ok", "utility": 1, "attack_succeeded": None, "injection_seen": None,
            "model_calls": 1, "input_tokens": inp, "output_tokens": out, "defense_calls": 0,
            "defense_input_tokens": dinp, "defense_output_tokens": dout, "duration_s": 0.1}


def test_cost_per_model_and_defense_counts_defense_tokens():
    rows = [row("openai/gpt-4o-mini", inp=1_000_000, out=1_000_000),
            row("openai/gpt-4o-mini", defense="detector", inp=1_000_000, dinp=1_000_000),
            row("vllm/mine", inp=5)]
    out = {(r["model"], r["defense"]): r["cost_usd"] for r in summarize(rows)}
    assert out[("openai/gpt-4o-mini", "none")] == pytest.approx(0.75)
    assert out[("openai/gpt-4o-mini", "detector")] == pytest.approx(0.30)
    assert out[("vllm/mine", "none")] is None


def test_report_shows_cost_and_takes_a_price_file(tmp_path):
    results, env = tmp_path / "r", {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    with FakeOpenAIServer(scripted_policy(REFUND_STEPS)) as server:
        r = randori("run", "-s", "banking", "-u", "user_task_1", "--no-attack", "-m", "openai/fake-model",
                    "--base-url", server.base_url, "-r", str(results), env=env)
    assert r.returncode == 0, r.stderr
    assert "cost unknown (no price)" in r.stdout
    assert "cost (USD)" in randori("report", "-r", str(results), "--wide", env=env).stdout
    prices = tmp_path / "p.toml"
    prices.write_text('["openai/fake-model"]\ninput = 1000000\noutput = 0\n')  # $1 per input token
    for how in (["--prices", str(prices)], []):
        rep = randori("report", "-r", str(results), "-f", "json", *how,
                      env={**env, PRICES_ENV: str(prices)} if not how else env)
        [row] = json.loads(rep.stdout)["rows"]
        assert row["input_tokens"] > 0 and row["cost_usd"] == row["input_tokens"]
    table = randori("report", "-r", str(results), "--prices", str(prices), env=env).stdout
    assert f"${row['input_tokens']:.2f}" in table
    no_price = json.loads(randori("report", "-r", str(results), "-f", "json", env=env).stdout)["rows"]
    assert no_price[0]["cost_usd"] is None
    bad = randori("report", "-r", str(results), "--prices", str(tmp_path / "missing.toml"))
    assert bad.returncode == 2 and bad.stderr.startswith("randori: error: cannot read price file")
