"""What `randori export` says when it cannot do what was asked: one line, exit status 2, no traceback."""

import subprocess
import sys

import pytest

from randori.bench.store import Store
from tests.helpers import randori


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    root = tmp_path_factory.mktemp("mistakes")
    (root / "empty_dir").mkdir()
    with Store(root / "no_cases") as store:
        store.finish_run(store.start_run({"argv": ["run"]}))
    (root / "a_file").write_text("x")
    return root


def _error(r):
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("randori: error: "), r.stderr
    return lines[0]


@pytest.mark.parametrize("args, says", [
    (["-f", "parquet", "-r", "/nonexistent/results", "-o", "{out}"], "no results in /nonexistent/results"),
    (["-f", "parquet", "-r", "{root}/empty_dir", "-o", "{out}"], "no results in {root}/empty_dir (expected"),
    (["-f", "parquet", "-r", "{root}/no_cases", "-o", "{out}"], "no cases in {root}/no_cases: nothing to export"),
    (["-f", "parquet", "-r", "", "-o", "{out}"], "--results must name a directory"),
    (["-f", "xml", "-r", "{two_by_two}", "-o", "{out}"],
     "unknown format 'xml' for --format (use inspect, eee, parquet, otel-json)"),
    (["-f", "parquet", "-r", "{two_by_two}", "-o", "{root}/a_file"], "it is a file"),
    (["-f", "parquet", "-r", "{two_by_two}", "-o", "/proc/randori-export"], "cannot create /proc/randori-export"),
    (["-f", "eee", "-r", "{two_by_two}", "-o", ""], "--out must name a directory"),
    (["-f", "otel-json", "-r", "{two_by_two}", "-o", "{root}"], "it is a directory"),
    (["-f", "otel-json", "-r", "{two_by_two}", "-o", "/nonexistent/dir/spans.jsonl"],
     "directory /nonexistent/dir does not exist"),
])
def test_bad_input_is_one_clear_line(places, two_by_two, tmp_path, args, says):
    fill = {"root": places, "two_by_two": two_by_two, "out": tmp_path / "out"}
    line = _error(randori("export", *(a.format(**fill) for a in args)))
    assert says.format(**fill) in line


def test_missing_format_is_a_usage_error():
    r = randori("export", "-r", "results", "-o", "out")
    assert r.returncode == 2 and "--format" in r.stderr


@pytest.mark.skipif(sys.platform != "linux" or __import__("os").geteuid() == 0,
                    reason="root may write into a read-only directory")
def test_a_read_only_out_directory_is_refused(two_by_two, tmp_path):
    out = tmp_path / "ro"
    out.mkdir(mode=0o500)
    assert "permission denied" in _error(randori("export", "-f", "parquet", "-r", str(two_by_two), "-o", str(out)))


@pytest.mark.parametrize("fmt, module, extra", [("parquet", "pyarrow", "parquet"), ("inspect", "inspect_ai", "inspect"),
                                                ("eee", "jsonschema", "eee"),
                                                ("otel-json", "opentelemetry.sdk", "otel")])
def test_a_format_without_its_extra_says_how_to_install_it(two_by_two, tmp_path, fmt, module, extra):
    code = (f"import sys; sys.modules[{module!r}] = None; from randori.cli import main; "
            f"main(['export', '-f', {fmt!r}, '-r', {str(two_by_two)!r}, '-o', {str(tmp_path / 'x')!r}])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    line = _error(r)
    assert f"needs randori[{extra}]" in line and f"pip install -e '.[{extra}]'" in line  # a checkout install


def test_run_otel_without_the_extra_stops_before_any_case(tmp_path):
    code = ("import sys; sys.modules['opentelemetry.sdk.trace'] = None; from randori.cli import main; "
            f"main(['run', '-s', 'banking', '-u', 'user_task_2', '-r', {str(tmp_path / 'r')!r}, "
            f"'--otel', {str(tmp_path / 's.jsonl')!r}])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "--otel needs randori[otel]" in _error(r)
    assert not (tmp_path / "s.jsonl").exists()


@pytest.mark.parametrize("target, says", [
    ("http:///v1/traces", "no host in this address"),
    ("/nonexistent/dir/spans.jsonl", "directory /nonexistent/dir does not exist")])
def test_run_otel_with_a_bad_target_stops_before_any_case(tmp_path, target, says):
    r = randori("run", "-s", "banking", "-u", "user_task_2", "-r", str(tmp_path / "r"), "--otel", target)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "r").exists()
