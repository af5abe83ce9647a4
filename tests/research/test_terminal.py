"""Terminal and newcomer fit: version, wrapped listings, help in panels, the closing hint."""

import re

import pytest

import randori as pkg
from tests.helpers import randori


def test_version():
    r = randori("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"randori {pkg.__version__}"


@pytest.mark.parametrize("command", [("attacks", "list"), ("defenses", "list"), ("suites", "show", "banking")])
@pytest.mark.parametrize("width", [40, 60, 80, 140])
def test_listings_wrap_at_word_boundaries_at_any_width(command, width):
    r = randori(*command, env={"COLUMNS": str(width)})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # Only a single word longer than the line (a long attack name) may exceed the width.
    assert all(len(line) <= width or " " not in line.strip() for line in lines)
    wide = randori(*command, env={"COLUMNS": "1000"}).stdout
    # The same words in the same order: nothing was cut inside a word.
    assert r.stdout.split() == wide.split()


def test_run_help_is_in_panels_with_every_name_and_default_whole_at_80_columns():
    from typer.main import get_command

    from randori.cli import app

    r = randori("run", "--help", env={"COLUMNS": "80"})
    assert r.returncode == 0
    panels = re.findall(r"^(\S.*):$", r.stdout, re.MULTILINE)
    assert panels == ["What to run", "Model settings", "Attacks and defenses", "Limits and spend", "Output",
                      "Options"]
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in r.stdout
    assert not re.search(r"<(bool|str|int|float|list|path)", r.stdout)  # no type labels
    words = r.stdout.split()
    for param in get_command(app).commands["run"].params:  # type: ignore[attr-defined]
        for name in param.opts + param.secondary_opts:
            assert name in words or f"{name}," in words, name
    assert "[default: inprocess]" in r.stdout and "--max-cost USD" in r.stdout


def test_models_fits_80_columns_and_cuts_no_name():
    r = randori("models", env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= 80 and "…" not in r.stdout
    for name in ("GOOGLE_CLOUD_LOCATION", "OPENAI_API_KEY", "vllm/Qwen/Qwen2.5-7B-Instruct", "scripted/gullible"):
        assert name in r.stdout.split() or f"{name}," in r.stdout.split() or f"{name};" in r.stdout.split()


def test_top_level_help_lists_commands_in_one_line_each():
    r = randori("--help", env={"COLUMNS": "100"})
    for command in ("run", "report", "compare", "view", "models"):
        assert re.search(rf"│ {command} +\S", r.stdout)


@pytest.mark.slow
def test_the_progress_line_of_a_whole_run_fits_80_columns(tmp_path):
    # Every suite, scripted/gullible: the largest default run (four-digit counts on both sides).
    r = randori("run", "-r", str(tmp_path), env={"COLUMNS": "80"}, timeout=300)
    assert r.returncode == 0, r.stderr
    [line] = [ln for ln in (r.stdout + r.stderr).splitlines() if "━" in ln]
    n = re.search(r" (\d+)/(\d+) ", line)
    assert n and n.group(1) == n.group(2) and int(n.group(1)) > 1000, line  # the count is not cut
    assert "…" not in line and len(line) <= 80 and "attacks succeeded" in line
