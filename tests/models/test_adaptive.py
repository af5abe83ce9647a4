"""Adaptive concurrency (AIMD under the --provider-concurrency ceiling), pacing by rate-limit
headers, and several servers of one model behind a repeated --base-url."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

import pytest

from randori.agents.models import ModelSettings, get_model
from randori.agents.models.limits import SLOW_START, Pacer, Window, parse_duration, rate_limits
from randori.bench.runner import Selection, plan, run_cases
from randori.bench.store import Store
from randori.suites.banking import suite as banking
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.policies import ground_truth_policy
from tests.fakes.ratelimit import RateLimitedOpenAIServer
from tests.helpers import randori
from tests.models.test_connectivity import closed_port

KEY = {"OPENAI_API_KEY": "sk-test-adaptive-000000", "OPENAI_BASE_URL": ""}


@pytest.mark.parametrize("text, seconds", [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5),
                                           ("0.5", 0.5), ("soon", None), ("5x", None)])
def test_reset_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_openai_and_anthropic_headers_are_read():
    openai = rate_limits({"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499",
                          "x-ratelimit-reset-requests": "120ms", "x-ratelimit-limit-tokens": "30000",
                          "x-ratelimit-remaining-tokens": "29000", "x-ratelimit-reset-tokens": "2s",
                          "content-type": "application/json"})
    assert set(openai) == {"requests", "tokens"}
    assert (openai["requests"].limit, openai["requests"].remaining, openai["requests"].reset_s) == (500, 499, 0.12)
    now = time.time()
    reset = (datetime.fromtimestamp(now, timezone.utc) + timedelta(seconds=30)).isoformat().replace("+00:00", "Z")
    anthropic = rate_limits({"anthropic-ratelimit-input-tokens-limit": "40000",
                             "anthropic-ratelimit-input-tokens-remaining": "39000",
                             "anthropic-ratelimit-input-tokens-reset": reset,
                             "anthropic-ratelimit-requests-limit": "50"}, now)  # no remaining: not usable
    assert set(anthropic) == {"input-tokens"} and anthropic["input-tokens"].reset_s == pytest.approx(30, abs=0.01)


def test_a_window_starts_at_the_providers_own_concurrency_under_a_higher_ceiling():
    """The first window is what randori sends such a server at once when told nothing (`randori
    models`): a ceiling raised above it is reached by doubling from there, not from 4."""
    async def first(name, **options):
        model = get_model(name, ModelSettings(), api_key="sk-test-start-0000000", base_url="http://127.0.0.1:9/v1",
                          **options)
        window = model._window(model.servers[0])
        await model.aclose()
        return window.limit, window.ceiling

    assert asyncio.run(first("openai/m", concurrency=128)) == (16, 128)
    assert asyncio.run(first("vllm/m", concurrency=256)) == (32, 256)
    assert asyncio.run(first("ollama/m", concurrency=64)) == (2, 64)
    assert asyncio.run(first("openai/m", concurrency=8)) == (8, 8)  # a ceiling below it: the ceiling
    assert asyncio.run(first("openai/m")) == (16, 16)  # the default ceiling is that number itself
    assert asyncio.run(first("openai/m", concurrency=128, adaptive=False)) == (128, 128)
    assert Window(64).limit == SLOW_START  # a server whose provider names no concurrency of its own
    assert Window(64, start=0).limit == 1 and Window(64, adaptive=False, start=16).limit == 64


def test_window_slow_start_then_halves_once_per_round_and_grows_back_additively():
    async def go():
        w = Window(ceiling=64)
        assert w.limit == SLOW_START
        for _ in range(8):  # slow start: one more per success
            await w.acquire()
            w.release(time.monotonic(), "ok")
        assert w.limit == SLOW_START + 8
        sent = time.monotonic()
        for _ in range(3):  # three rate limits of one round: a single cut
            await w.acquire()
        for _ in range(3):
            w.release(sent, "congested")
        assert w.limit == (SLOW_START + 8) // 2 and w.rate_limited == 3
        before = w.size
        for _ in range(w.limit):  # one round of successes: one more
            await w.acquire()
            w.release(time.monotonic(), "ok")
        assert w.size == pytest.approx(before + 1, abs=0.1)
        for _ in range(5000):
            await w.acquire()
            w.release(time.monotonic(), "ok")
        assert w.limit == 64  # never above the ceiling
        fixed = Window(ceiling=7, adaptive=False)
        await fixed.acquire()
        fixed.release(time.monotonic(), "congested", retry_after=5)
        assert fixed.limit == 7 and fixed.paused_until == 0  # --no-adaptive: today's behaviour

    asyncio.run(go())


def test_window_bounds_requests_in_flight_and_hands_places_on_in_order():
    async def go():
        w = Window(ceiling=2, adaptive=False)
        order, peak = [], [0]

        async def request(i):
            await w.acquire()
            peak[0] = max(peak[0], w.in_flight)
            order.append(i)
            await asyncio.sleep(0.01)
            w.release(time.monotonic(), "ok")

        await asyncio.gather(*(request(i) for i in range(10)))
        return order, peak[0], w.in_flight

    order, peak, left = asyncio.run(go())
    assert peak == 2 and left == 0 and order == list(range(10))


def test_pacer_spaces_requests_at_the_rate_the_headers_imply():
    async def go():
        p = Pacer()
        ticket = await p.admit(0)
        # 10 requests per bucket, 5 used, full again in 0.5 s: 10 per second.
        p.observe(rate_limits({"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "5",
                               "x-ratelimit-reset-requests": "500ms"}), ticket, time.monotonic())
        t0 = time.monotonic()
        for _ in range(15):
            await p.admit(0)
        return time.monotonic() - t0

    elapsed = asyncio.run(go())
    assert elapsed > 0.9  # 5 at once, then 10 more at 10 per second, no sooner (how much later depends on load)


def run_against(urls, *, adaptive=True, ceiling=64, repeats=1, max_retries=4):
    model = get_model("openai/fake-model", ModelSettings(), base_url=urls if len(urls) > 1 else urls[0],
                      api_key="sk-test-adaptive-000000", concurrency=ceiling, adaptive=adaptive,
                      retry_base_delay=0.05, max_retries=max_retries)
    cases = plan(Selection(suites=[banking], model=model, attacks=[], repeats=repeats))

    async def go(store):
        try:
            await run_cases(cases, {"banking": banking}, model, store, store.start_run({}), concurrency=ceiling)
        finally:
            await model.aclose()

    return model, cases, go


def test_a_run_far_above_the_limit_adapts_and_makes_no_error_cases(tmp_path):
    policy = ground_truth_policy(["banking"])
    # A burst of one second of the limit (20 requests): OpenAI enforces its per-minute limits over
    # periods as short as a second. The first window (OpenAI's 16) fits in it; what follows is paced.
    with RateLimitedOpenAIServer(policy, rpm=1200, tpm=10_000_000, window=1.0, latency=0.05) as server:
        model, cases, go = run_against([server.base_url], repeats=2)
        with Store(tmp_path / "a") as store:
            asyncio.run(go(store))
            rows = store.cases()
        status = model.status()
    assert len(rows) == len(cases) and all(r["status"] == "ok" for r in rows)
    assert server.rejected <= 5  # paced by the headers, not by 429s
    assert server.throughput()["rpm"] > 0.8 * 1200
    assert status.startswith("concurrency ") and "/64" in status and "paced" in status
    with RateLimitedOpenAIServer(policy, rpm=1200, tpm=10_000_000, window=1.0, latency=0.05) as fixed:
        _, _, go = run_against([fixed.base_url], adaptive=False, repeats=2)
        with Store(tmp_path / "f") as store:
            asyncio.run(go(store))
    assert fixed.rejected > 5 * max(1, server.rejected)  # a fixed 64 in flight runs into the limit


def test_without_headers_429s_still_shrink_the_window(tmp_path):
    policy = ground_truth_policy(["banking"])
    with RateLimitedOpenAIServer(policy, rpm=1200, tpm=10_000_000, window=0.5, send_headers=False,
                                 latency=0.1) as server:
        # Without headers the window is found by 429s alone, and each 429 is retried after its
        # Retry-After, when every request refused in that moment retries too: on a loaded machine one
        # request can lose that race more often than the default four retries allow. What is tested
        # is that the window shrinks and the run ends without error cases, so retries are not the limit.
        model, cases, go = run_against([server.base_url], max_retries=20)
        with Store(tmp_path) as store:
            asyncio.run(go(store))
            failed = [(r["status"], r.get("error_message")) for r in store.cases() if r["status"] != "ok"]
            assert not failed
        status = model.status()
    assert server.rejected > 0 and "rate-limited" in status and "paced" not in status


def test_two_servers_share_the_work_and_keys_do_not_depend_on_servers(tmp_path):
    policy = ground_truth_policy(["banking"])
    results = str(tmp_path / "r")
    run = ["run", "-s", "banking", "--no-attack", "-m", "openai/fake-model", "-r", results]
    with FakeOpenAIServer(policy, latency=0.02) as a, FakeOpenAIServer(policy, latency=0.02) as b:
        one = randori(*run, "--base-url", a.base_url, "-u", "user_task_1", env=KEY)
        assert one.returncode == 0, one.stderr
        before = a.count
        both = randori(*run, "--base-url", b.base_url, "--base-url", a.base_url, env=KEY)
    assert both.returncode == 0, both.stderr
    # The case run against one server is not run again against two: keys name the model, not servers.
    first = int(one.stderr.split(" cases planned")[0].split()[-1])
    assert f"{first} already in" in both.stderr
    assert a.count - before > 10 and b.count > 10  # both servers served
    again = randori(*run, "--base-url", a.base_url, env=KEY)
    assert "0 to run" in again.stderr


def test_a_dead_server_is_taken_out_and_the_run_goes_on(tmp_path):
    policy = ground_truth_policy(["banking"])
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    with FakeOpenAIServer(policy) as alive:
        model, cases, go = run_against([dead, alive.base_url])
        with Store(tmp_path) as store:
            asyncio.run(go(store))
            rows = store.cases()
        status = model.status()
    assert all(r["status"] == "ok" for r in rows) and len(rows) == len(cases)
    assert "1/2 servers up" in status or "2/2 servers up" in status
    dead_server = next(s for s in model.servers if s.url == dead)
    assert dead_server.failures >= 1 and dead_server.answered == 0


def test_no_server_reachable_still_stops_the_run(tmp_path):
    urls = [f"http://127.0.0.1:{closed_port()}/v1", f"http://127.0.0.1:{closed_port()}/v1"]
    r = randori("run", "-s", "banking", "--no-attack", "-m", "openai/fake-model", "-r", str(tmp_path),
                *[x for u in urls for x in ("--base-url", u)], env={**KEY, "RANDORI_RETRY_BASE_DELAY": "0.001"})
    assert r.returncode == 2 and "cannot reach" in r.stderr and urls[0] in r.stderr and urls[1] in r.stderr
