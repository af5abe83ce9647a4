"""Every wrong invocation a user can make ends in one line `randori: error: ...` and a non-zero exit
status: never a traceback, never exit 0 having done the wrong thing.

The table runs the real entry point (`randori.cli.run_cli`, what `main` calls) in process, so an
exception that escaped it would fail the test outright; a few invocations also run as a child
process, as a user would."""

from __future__ import annotations

import random
import socket
import sqlite3
import string

import pytest

from randori.bench.pricing import PRICES_ENV
from randori.bench.store import STORE_FILE, CaseResult, Store
from randori.cli import MAX_REPEATS, run_cli
from tests.helpers import randori

FAST = ["-s", "banking", "-u", "user_task_0", "-i", "injection_task_0"]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def case_result(key: str, text: str = "") -> CaseResult:
    return CaseResult(key=key, kind="benign", suite="banking", suite_version="1.0.0", user_task="user_task_0",
                      injection_task=None, attack=None, defense="none", model="scripted/oracle", settings={},
                      repeat=0, status="ok", utility=True,
                      messages=[{"role": "assistant", "content": text}])


def make_store(results, cases: int = 60) -> None:
    """A real store, a few hundred KB, with incompressible traces so that it spans many pages."""
    rnd = random.Random(7)
    with Store(results) as store:
        run = store.start_run({})
        store.add(run, [case_result(f"k{i}", "".join(rnd.choices(string.ascii_letters, k=4000)))
                        for i in range(cases)])
        store.finish_run(run)


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """Directories that hold something other than a usable store."""
    root = tmp_path_factory.mktemp("places")
    p = {name: root / name for name in ("garbage", "one_byte", "empty", "truncated", "store_is_dir",
                                        "foreign_cases", "foreign_runs", "foreign_app", "good")}
    for d in p.values():
        d.mkdir()
    (root / "a_file").write_text("not a directory")
    p["a_file"] = root / "a_file"
    (p["garbage"] / STORE_FILE).write_bytes(random.Random(1).randbytes(20000))
    (p["one_byte"] / STORE_FILE).write_bytes(b"x")
    (p["empty"] / STORE_FILE).write_bytes(b"")
    make_store(p["truncated"])
    data = (p["truncated"] / STORE_FILE).read_bytes()
    (p["truncated"] / STORE_FILE).write_bytes(data[: len(data) // 3])
    (p["store_is_dir"] / STORE_FILE).mkdir()
    for name, ddl in (("foreign_cases", "CREATE TABLE cases (id INTEGER PRIMARY KEY, title TEXT)"),
                      ("foreign_runs", "CREATE TABLE runs (lap INTEGER, seconds REAL)"),
                      ("foreign_app", "PRAGMA application_id = 1234")):
        con = sqlite3.connect(p[name] / STORE_FILE)
        con.execute(ddl)
        con.commit()
        con.close()
    make_store(p["good"], cases=2)
    bad_toml = root / "bad.toml"
    bad_toml.write_text("[unclosed\n")
    p["bad_toml"] = bad_toml
    return p


def P(name):  # a path from the fixture, filled in when the case runs
    return ("place", name)


# (arguments, extra environment, exit status, text the error line must contain)
MISTAKES = [
    # -- run: names -----------------------------------------------------------------------------
    (["run", "--suite", "nope"], {}, 2, "unknown suite 'nope'"),
    (["run", "-m", "foo/bar"], {}, 2, "unknown model provider 'foo'"),
    (["run", "-m", "gpt-4o"], {}, 2, "must be named provider/model"),
    (["run", "-m", "openai/"], {}, 2, "must be named provider/model"),
    (["run", "-m", "scripted/nope"], {}, 2, "unknown scripted model 'nope'"),
    (["run", "-s", "banking", "-u", "user_task_999"], {}, 2, "no user task user_task_999"),
    (["run", "-s", "banking", "-i", "x"], {}, 2, "no injection task x"),
    (["run", "-s", "banking", "-a", "nope"], {}, 2, "unknown attack 'nope'"),
    (["run", "-s", "banking", "-a", "max"], {}, 2, "'max' is not an attack to run"),
    # -- names a user mistyped: the closest known names ---------------------------------------
    (["run", "--suite", "bankin"], {}, 2, "unknown suite 'bankin' (did you mean 'banking'? known: banking,"),
    (["run", "-s", "banking", "-a", "important_instruction"], {}, 2,
     "unknown attack 'important_instruction' (did you mean 'important_instructions'"),
    (["run", "-s", "banking", "-d", "toolfilter"], {}, 2, "unknown defense 'toolfilter' (did you mean 'tool_filter'?"),
    (["run", "-m", "opneai/gpt-4o"], {}, 2, "unknown model provider 'opneai' (did you mean 'openai'?"),
    (["run", "-m", "scripted/gulible"], {}, 2, "unknown scripted model 'gulible' (did you mean 'gullible'?"),
    (["reprot"], {}, 2, "No such command 'reprot'. Did you mean 'report'"),
    (["code", "rn"], {}, 2, "No such command 'rn'. Did you mean 'run'"),
    (["report", "-r", P("good"), "--format", "jsn"], {}, 2, "unknown format 'jsn' for --format (did you mean 'json'?"),
    (["run", "-s", "banking", "-a", "direct[["], {}, 2, "cannot read 'direct[['"),
    (["run", "-s", "banking", "-a", "direct[x=1]"], {}, 2, "has no parameter 'x'"),
    (["run", "-s", "banking", "-a", "adaptive[budget=lots]"], {}, 2, "parameter 'budget' must be int"),
    (["run", "-s", "banking", "-a", "adaptive[budget=0]"], {}, 2, "the adaptive attack's budget must be from 1"),
    (["run", "-s", "banking", "-a", "search[budget=0]"], {}, 2, "the search attack's budget must be from 1"),
    (["run", "-s", "banking", "-a", "search[k=0]"], {}, 2, "k must be from 1 to 20"),
    (["run", "-s", "banking", "-a", "search[beam=many]"], {}, 2, "parameter 'beam' must be int"),
    (["run", "-s", "banking", "-a", "important_instructions[position=middle]"], {}, 2,
     "position must be replace, start, end"),
    (["run", "-s", "banking", "-a", "bank"], {}, 2, "the bank attack needs a file"),
    (["run", "-s", "banking", "-a", "bank[file=/nonexistent/bank.json]"], {}, 2, "bank: cannot read"),
    (["attacks", "export", "-r", "/nonexistent/dir"], {}, 2, "no results in /nonexistent/dir"),
    (["attacks", "export", "-r", P("garbage")], {}, 2, "is not a randori results store"),
    (["attacks", "export", "-o", "/nonexistent/dir/bank.json"], {}, 2, "directory /nonexistent/dir does not exist"),
    (["run", "-s", "banking", "-a", "adaptive", "--attacker-model", "foo/bar"], {}, 2,
     "unknown model provider 'foo'"),
    (["run", "-s", "banking", "-d", "nope"], {}, 2, "unknown defense 'nope'"),
    (["run", "-s", "banking", "-d", "detector[threshold=7]"], {}, 2, "threshold must be a number from 0 to 1"),
    (["run", "-s", "banking", "-d", "detector[threshold=nan]"], {}, 2, "'threshold' must be float, got 'nan'"),
    (["run", "-s", "banking", "-d", "detector[threshold=-0.5]"], {}, 2, "threshold must be a number from 0 to 1"),
    (["run", "-s", "banking", "-d", "detector[mode=shout]"], {}, 2, "mode must be redact or abort"),
    (["run", "-s", "banking", "-d", "tool_filter+"], {}, 2, "empty defense in 'tool_filter+'"),
    (["run", "-s", "banking", "-d", "+detector"], {}, 2, "empty defense in '+detector'"),
    (["run", "-s", "banking", "-d", "tool_filter++detector"], {}, 2, "empty defense in"),
    (["run", "-s", "banking", "-d", ""], {}, 2, "empty defense name"),
    (["run", "-s", "banking", "-d", "detector[threshold]"], {}, 2, "parameter 'threshold' must be float"),
    # -- run: numbers ---------------------------------------------------------------------------
    (["run", "--temperature", "nan"], {}, 2, "--temperature must be a number from 0 to 2"),
    (["run", "--temperature", "inf"], {}, 2, "--temperature must be a number from 0 to 2"),
    (["run", "--temperature", "-1"], {}, 2, "--temperature must be a number from 0 to 2"),
    (["run", "--temperature", "3"], {}, 2, "--temperature must be a number from 0 to 2"),
    (["run", "--temperature", "hot"], {}, 2, "--temperature must be a number from 0 to 2"),
    (["run", "--timeout", "inf"], {}, 2, "from 0.001 to 86400"),
    (["run", "--timeout", "nan"], {}, 2, "from 0.001 to 86400"),
    (["run", "--timeout", "0"], {}, 2, "from 0.001 to 86400"),
    (["run", "--timeout", "-5"], {}, 2, "from 0.001 to 86400"),
    (["run", "--repeats", "100000000"], {}, 2, f"{MAX_REPEATS}"),
    (["run", "--repeats", "0"], {}, 2, "--repeats"),
    (["run", "--repeats", "many"], {}, 2, "--repeats"),
    (["run", "--concurrency", "0"], {}, 2, "--concurrency"),
    (["run", "--max-steps", "0"], {}, 2, "--max-steps"),
    (["run", "--max-tokens", "0"], {}, 2, "--max-tokens"),
    (["run", "--max-tokens", "-3"], {}, 2, "--max-tokens"),
    (["run", "--max-retries", "-1"], {}, 2, "--max-retries"),
    (["run", "--max-retries", "1000000"], {}, 2, "--max-retries"),
    (["run", "--provider-concurrency", "0"], {}, 2, "--provider-concurrency"),
    (["run", "--attacker-budget", "0"], {}, 2, "--attacker-budget"),
    (["run", "--seed", "abc"], {}, 2, "--seed"),
    # -- run: options and arguments ---------------------------------------------------------------
    (["run", "--nope"], {}, 2, "No such option: --nope"),
    (["run", "--format", "json"], {}, 2, "No such option: --format"),
    (["run", "banking"], {}, 2, "unexpected extra argument"),
    (["run", "--suite"], {}, 2, "requires an argument"),
    (["nope"], {}, 2, "No such command 'nope'"),
    # -- run: models and servers ------------------------------------------------------------------
    (["run", "-m", "openai/gpt-4o-mini"], {"OPENAI_API_KEY": None}, 2, "OPENAI_API_KEY is not set"),
    (["run", "-m", "vllm/qwen"], {"VLLM_BASE_URL": None}, 2, "needs the server's address"),
    (["run", "-m", "openai/x", "--base-url", "localhost:8000/v1"], {}, 2, "--base-url must be an http://"),
    (["run", "-m", "openai/x", "--base-url", "ftp://host/v1"], {}, 2, "--base-url must be an http://"),
    (["run", "-m", "openai/x", "--base-url", "http://host:port/v1"], {}, 2, "--base-url is not a valid URL"),
    (["run", "-m", "scripted/oracle", "--base-url", "127.0.0.1:8000"], {}, 2, "--base-url must be an http://"),
    (["run", "-a", "adaptive", "--attacker-base-url", "gpu:8000"], {}, 2, "--attacker-base-url must be an http://"),
    (["run", "-m", "openai/x"], {"OPENAI_BASE_URL": "localhost:1234/v1", "OPENAI_API_KEY": None}, 2,
     "OPENAI_BASE_URL must be an http://"),
    (["run", "-m", "ollama/qwen"], {"OLLAMA_HOST": "http://[::1"}, 2, "OLLAMA_HOST is not a valid URL"),
    (["run", *FAST, "--no-attack", "-m", "openai/x", "--base-url", ("closed",)],
     {"RANDORI_RETRY_BASE_DELAY": "0.001", "OPENAI_API_KEY": None}, 2, "connection refused"),
    (["run", *FAST, "-m", "openai/x", "--base-url", "http://127.0.0.1:9/v1"],
     {"RANDORI_RETRY_BASE_DELAY": "zero"}, 2, "RANDORI_RETRY_BASE_DELAY must be a number"),
    (["run", "-m", "openai/x", "--base-url", "http://127.0.0.1:9/v1"], {"RANDORI_OPENAI_TRANSPORT": "carrier-pigeon"},
     2, "RANDORI_OPENAI_TRANSPORT must be"),
    (["run"], {"RANDORI_MODEL": "nobody/knows"}, 2, "unknown model provider 'nobody'"),
    (["run", "--prices", "/no/such/prices.toml"], {}, 2, "prices.toml"),
    (["run", "--prices", P("bad_toml")], {}, 2, "bad.toml"),
    (["run"], {PRICES_ENV: "/no/such/prices.toml"}, 2, "prices.toml"),
    # -- run: the results store -----------------------------------------------------------------
    (["run", *FAST, "--results", ""], {}, 2, "--results must name a directory"),
    (["run", *FAST, "--results", "  "], {}, 2, "--results must name a directory"),
    (["run", *FAST, "--results", P("a_file")], {}, 2, "is a file, not a results directory"),
    (["run", *FAST, "--results", P("garbage")], {}, 2, "is not a randori results store"),
    (["run", *FAST, "--results", P("one_byte")], {}, 2, "is not a randori results store"),
    (["run", *FAST, "--results", P("truncated")], {}, 2, "randori.sqlite"),
    (["run", *FAST, "--results", P("store_is_dir")], {}, 2, "is a directory, not a results store"),
    (["run", *FAST, "--results", P("foreign_cases")], {}, 2, "another program's SQLite database (tables: cases)"),
    (["run", *FAST, "--results", P("foreign_runs")], {}, 2, "another program's SQLite database (tables: runs)"),
    (["run", *FAST, "--results", P("foreign_app")], {}, 2, "another program's SQLite database (application id"),
    (["run", *FAST, "--results", "/proc/randori-results"], {}, 2, "cannot create the results directory"),
    # -- report ---------------------------------------------------------------------------------
    (["report", "-r", "/nonexistent/dir"], {}, 2, "no results in /nonexistent/dir"),
    (["report", "-r", ""], {}, 2, "--results must name a directory"),
    (["report", "-r", P("a_file")], {}, 2, "no results in"),
    (["report", "-r", P("garbage")], {}, 2, "is not a randori results store"),
    (["report", "-r", P("one_byte")], {}, 2, "is not a randori results store"),
    (["report", "-r", P("empty")], {}, 2, "is empty: it holds no randori results"),
    (["report", "-r", P("truncated")], {}, 2, "randori.sqlite"),
    (["report", "-r", P("store_is_dir")], {}, 2, "is a directory, not a results store"),
    (["report", "-r", P("foreign_cases")], {}, 2, "another program's SQLite database"),
    (["report", "-r", P("foreign_runs")], {}, 2, "another program's SQLite database"),
    (["report", "-r", P("foreign_app")], {}, 2, "another program's SQLite database"),
    (["report", "-r", P("good"), "--format", "xml"], {}, 2, "unknown format 'xml' for --format"),
    (["report", "-r", P("good"), "-f", "csv", "--table", "nope"], {}, 2, "unknown table 'nope'"),
    (["report", "-r", P("good"), "--html", "/nonexistent/dir/r.html"], {}, 2, "directory /nonexistent/dir"),
    (["report", "-r", P("good"), "--html", P("good")], {}, 2, "--html"),
    (["report", "-r", P("good"), "--prices", P("bad_toml")], {}, 2, "bad.toml"),
    (["report", "--nope"], {}, 2, "No such option: --nope"),
    # -- view -----------------------------------------------------------------------------------
    (["view", "-r", "/nonexistent/dir"], {}, 2, "no results in /nonexistent/dir"),
    (["view", "-r", ""], {}, 2, "--results must name a directory"),
    (["view", "-r", P("garbage")], {}, 2, "is not a randori results store"),
    (["view", "-r", P("foreign_cases")], {}, 2, "another program's SQLite database"),
    (["view", "-r", P("good"), "--port", "0"], {}, 2, "--port"),
    (["view", "-r", P("good"), "--port", "70000"], {}, 2, "--port"),
    # -- suites, attacks, defenses, models ------------------------------------------------------
    (["suites", "list", "--format", "xml"], {}, 2, "unknown format 'xml' for --format (use table, json)"),
    (["suites", "show", "nope"], {}, 2, "unknown suite 'nope'"),
    (["suites", "show"], {}, 2, "Missing argument"),
    (["suites", "check", "nope"], {}, 2, "unknown suite 'nope'"),
    (["suites", "nope"], {}, 2, "No such command 'nope'"),
    (["attacks", "list", "--format", "json"], {}, 2, "No such option: --format"),
    (["defenses", "nope"], {}, 2, "No such command 'nope'"),
    (["models", "--format", "xml"], {}, 2, "unknown format 'xml' for --format (use table, json)"),
]


def _resolve(arg, places, port):
    if isinstance(arg, tuple) and arg[0] == "place":
        return str(places[arg[1]])
    if arg == ("closed",):
        return f"http://127.0.0.1:{port}/v1"
    return arg


@pytest.mark.parametrize("args, env, status, message", MISTAKES,
                         ids=[" ".join(str(a) for a in m[0])[:60] for m in MISTAKES])
def test_mistake_is_one_line_error(args, env, status, message, places, tmp_path, monkeypatch, capfd):
    monkeypatch.delenv(PRICES_ENV, raising=False)  # --prices sets it for the rest of the process
    monkeypatch.delenv("RANDORI_MODEL", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    argv = [_resolve(a, places, closed_port()) for a in args]
    if argv[0] == "run" and "--results" not in argv and "-r" not in argv:
        argv[1:1] = ["--results", str(tmp_path / "results")]
    code = run_cli(argv)
    out, err = capfd.readouterr()
    assert code == status, err
    assert "Traceback" not in out + err
    errors = [ln for ln in err.splitlines() if ln.startswith("randori: error:")]
    assert len(errors) == 1, err
    assert err.rstrip().endswith(errors[0])  # the last thing said
    assert message in errors[0]
    assert "internal error" not in errors[0]


def test_enough_mistakes_are_covered():
    assert len(MISTAKES) >= 60


def test_a_store_that_refuses_is_left_as_it_was(places):
    # Another program's file must never be changed by a run that refuses it.
    path = places["foreign_cases"] / STORE_FILE
    before = path.read_bytes()
    assert run_cli(["run", *FAST, "--results", str(places["foreign_cases"])]) == 2
    assert path.read_bytes() == before
    assert sorted(p.name for p in places["foreign_cases"].iterdir()) == [STORE_FILE]


@pytest.mark.parametrize("args", [
    ["run", "--temperature", "nan"],
    ["run", "-d", "detector[threshold=7]"],
    ["suites", "list", "--format", "xml"],
    ["run", "--repeats", "100000000"],
    ["report", "-r", ""],
])
def test_mistakes_as_a_child_process(args, tmp_path):
    r = randori(*args, cwd=tmp_path)
    assert r.returncode == 2
    assert "Traceback" not in r.stdout + r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("randori: error:")
    assert not (tmp_path / "results").exists() and not (tmp_path / STORE_FILE).exists()
