"""Hostile output: a server whose replies, tool names, arguments and error bodies carry terminal
escape sequences and the API key (long with "/", short). Nothing of it may drive the terminal, and no
6-character piece of the key's secret part may appear in any output, store field or viewer page."""

from __future__ import annotations

import json
import os
import random
import re
import string
import subprocess
import sys

import pytest

from randori.bench.store import Store
from randori.errors import FRAGMENT, secret_part
from randori.terminal import printable
from tests.fakes.openai_server import FakeOpenAIServer, Fault

_rng = random.Random(30)
LONG_KEY = "sk-" + "".join(_rng.choices(string.ascii_letters + string.digits, k=20)) + "/" + \
    "".join(_rng.choices(string.ascii_letters + string.digits, k=16)) + "/x"
SHORT_KEY = "hu/nt3r2"
# Clipboard write, clear screen, a hyperlink, a window title, C1 CSI, NUL, BEL, a bidi override.
ESCAPES = ("\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[H\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"
           "\x1b]0;pwned\x07\x9b2J\x00\x07\r\u202e")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def pieces(key: str) -> list[str]:
    secret = secret_part(key)  # its provider's prefix ("sk-") is public
    return [secret[i:i + FRAGMENT] for i in range(len(secret) - FRAGMENT + 1)]


def leaks(key: str, *texts: str) -> list[str]:
    return sorted({p for p in pieces(key) for t in texts if p in t})


def hostile_policy(key: str):
    count = iter(range(10 ** 6))

    def policy(request):
        n = next(count)
        if n % 4 == 0 or "get_weather" in str(request.get("tools")):
            return [(f"get_balance{ESCAPES}{key}", {"note": f"{ESCAPES}{key} {key[2:9]}"})]
        if n % 4 == 1:
            message = f"First error {ESCAPES} bad key {key} ({key[1:8]}...{key[-7:]})"
            return Fault(status=400, body=json.dumps({"error": {"message": message, "code": 400}}))
        return f"Done {ESCAPES} with {key[:7]} and {key[4:13]} and {key}"

    return policy


def cli(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Runs randori and returns its exit status, stdout and stderr decoded from the raw bytes (text
    mode would turn a carriage return into a newline)."""
    full = {**os.environ, "COLUMNS": "200", "RANDORI_RETRY_BASE_DELAY": "0.001", **env}
    full.pop("RANDORI_MODEL", None)
    r = subprocess.run([sys.executable, "-m", "randori", *args], capture_output=True, env=full, timeout=300)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8")


def test_printable_removes_whole_sequences_and_keeps_text():
    assert printable(f"a{ESCAPES}b\n\tc") == "alinkb\n\tc"
    assert printable("\x1b[31mred\x1b[0m \x1bPq#0\x1b\\ok") == "red ok"
    assert printable("unterminated \x1b]52;c;abc") == "unterminated "


@pytest.mark.parametrize("key", [LONG_KEY, SHORT_KEY], ids=["long-with-slash", "short-with-slash"])
def test_models_check_prints_no_escape_and_no_piece_of_the_key(key):
    env = {"OPENAI_API_KEY": key}
    outputs = []
    with FakeOpenAIServer(hostile_policy(key)) as server:
        for fmt in ("table", "json"):
            for _ in range(2):  # the second pair of requests meets the error and the text reply
                code, out, err = cli("models", "check", "openai/fake", "--base-url", server.base_url,
                                     "--format", fmt, env=env)
                assert code in (0, 1), err
                outputs += [out, err]
                if fmt == "json":
                    json.loads(out)
    assert any("get_balance" in o for o in outputs)  # the hostile tool name was shown, made harmless
    assert not [o for o in outputs if CONTROL.search(o)]
    assert not leaks(key, *outputs)


@pytest.mark.parametrize("key", [LONG_KEY, SHORT_KEY], ids=["long-with-slash", "short-with-slash"])
def test_run_report_store_and_viewer_hold_no_escape_and_no_piece_of_the_key(tmp_path, key):
    env = {"OPENAI_API_KEY": key}
    results = tmp_path / "results"
    with FakeOpenAIServer(hostile_policy(key)) as server:
        code, out, err = cli("run", "-s", "banking", "--no-attack", "-m", "openai/fake", "--base-url",
                             server.base_url, "-r", str(results), "--concurrency", "1", env=env)
    assert code == 0, err
    outputs = [out, err]
    terminal = [out, err]
    html = tmp_path / "report.html"
    for args in (["-f", "json"], ["-f", "csv"], [], ["--html", str(html)]):
        code, rout, rerr = cli("report", "-r", str(results), *args, env=env)
        assert code == 0, rerr
        terminal += [rout, rerr]
    outputs += terminal + [html.read_text()]
    with Store(results) as store:
        cases = store.cases()
        traces = [store.trace(c["key"]) for c in cases]
    assert any(c["status"] == "error" for c in cases) and any(c["status"] == "ok" for c in cases)
    assert any("get_balance" in json.dumps(t) for t in traces)
    outputs += [json.dumps(traces), json.dumps(cases)]
    outputs += [f.read_bytes().decode("latin-1") for f in results.iterdir()]
    outputs += viewer_pages(results, [c["key"] for c in cases])
    assert not [t for t in terminal if CONTROL.search(t)]
    assert not leaks(key, *outputs)


def viewer_pages(results, keys):
    pytest.importorskip("starlette", reason="the viewer extra is not installed")
    from starlette.testclient import TestClient

    from randori.viewer.app import create_app

    with TestClient(create_app(results), base_url="http://127.0.0.1") as client:
        pages = [client.get(u).text for u in ("/", "/cases", "/cases?view=list")]
        for k in keys:
            pages += [client.get(f"/case/{k}").text, client.get(f"/case/{k}.json").text]
    return pages
