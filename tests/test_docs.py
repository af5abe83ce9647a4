"""The documentation: README.md is a short front page whose links resolve, the site under docs/ builds
with `mkdocs build --strict` (every link and anchor checked, offline), and every `randori` command the
pages show names a real command with real options."""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import yaml

from randori.cli import app
from tests.helpers import randori

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def _nav_files(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in _nav_files(item)]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return []


def _config() -> dict:
    # mkdocs.yml may hold !!python tags in other projects; ours is plain YAML.
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def test_the_readme_is_a_front_page_that_starts_with_the_two_commands():
    text = README.read_text()
    assert len(text.encode()) <= 10_500, "README.md is a front page: move details into docs/"
    first_block = text.split("```", 2)[1]
    assert re.search(r"^make demo\b", first_block, re.MULTILINE), first_block
    assert re.search(r"^make test\b", first_block, re.MULTILINE), first_block
    assert "](docs/img/" in text, "the front page shows a picture of the report"


def test_every_readme_link_resolves_and_every_docs_link_is_a_page_of_the_site():
    nav = set(_nav_files(_config()["nav"]))
    into_docs = []
    for target in LINK.findall(README.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path = (ROOT / target.split("#", 1)[0]).resolve()
        assert path.exists(), f"README.md links to {target}, which does not exist"
        if path.is_relative_to(DOCS) and path.suffix == ".md":
            into_docs.append(target)
            assert str(path.relative_to(DOCS)) in nav, f"README.md links to {target}, which is not in the nav"
    assert len(into_docs) >= 20, into_docs


def test_every_page_is_in_the_nav_and_llms_txt_lists_every_page():
    nav = set(_nav_files(_config()["nav"]))
    pages = {str(p.relative_to(DOCS)) for p in _pages()}
    assert pages == nav, (pages - nav, nav - pages)
    listed = set(LINK.findall((DOCS / "llms.txt").read_text()))
    assert {p.removesuffix(".md") + ".html" for p in pages} <= listed


def test_the_api_reference_needs_no_network():
    # An `import:` inventory would be fetched from the network at build time; CI builds offline.
    config = (ROOT / "mkdocs.yml").read_text()
    assert not re.search(r"^\s*import:", config, re.MULTILINE)
    assert "objects.inv" not in config


def _command(words: list[str]):
    """The click command `randori WORDS...` names, and the words that are its arguments."""
    cmd = typer.main.get_command(app)
    for i, word in enumerate(words):
        sub = getattr(cmd, "commands", {}).get(word)
        if sub is None:
            return cmd, words[i:]
        cmd = sub
    return cmd, []


def _shell_lines(text: str) -> list[str]:
    """The lines of the shell blocks (```bash, ```sh, ``` with no language) of a Markdown text."""
    lines, fence = [], None
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = line.strip()[3:] if fence is None else None
            continue
        if fence in ("", "bash", "sh", "console"):
            lines.append(line)
    return lines


def _shown_commands() -> list[tuple[str, str]]:
    """Every `randori ...` line of a shell block in README.md and the docs, with where it is. A
    synopsis (`[OPTION]`, `<placeholder>`, `...`) is left out; a pipe or a redirection is cut off."""
    found = []
    for path in [README, *_pages()]:
        for line in "\n".join(_shell_lines(path.read_text())).replace("\\\n", " ").splitlines():
            line = re.split(r"\s+#|\s[|>]\s|\s2>", line.strip().removeprefix("$ "))[0].strip()
            if line.startswith("randori ") and not any(c in line for c in "[<") and "..." not in line:
                found.append((line, str(path.relative_to(ROOT))))
    return found


def test_every_command_the_docs_show_exists_with_the_options_it_uses():
    shown = _shown_commands()
    assert len(shown) >= 40, shown
    for line, where in shown:
        words = shlex.split(line)[1:]
        cmd, rest = _command(words)
        assert not getattr(cmd, "commands", None) or not rest or rest[0].startswith("-"), (
            f"{where}: `{line}` names no randori command")
        known = {opt for p in cmd.params for opt in (*p.opts, *p.secondary_opts)} | {"--help"}
        for word in rest:
            if word.startswith("-") and word not in ("-", "--"):
                option = word.split("=", 1)[0]
                assert option in known, f"{where}: `{line}`: {cmd.name} has no option {option}"


@pytest.mark.slow
def test_the_site_builds_strictly_with_its_generated_pages(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
                               "NO_MKDOCS_2_WARNING": "1", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-4000:]
    assert (site / "llms.txt").read_text() == (DOCS / "llms.txt").read_text()
    for target in LINK.findall((site / "llms.txt").read_text()):
        assert (site / target).is_file(), f"llms.txt links to {target}, which the site does not have"
    cli = (site / "reference" / "cli.html").read_text()
    for command in ("randori run", "randori report", "randori export", "randori suites check",
                    "randori code run", "randori mcp serve", "randori models check"):
        assert f"$ {command} --help" in cli, command
    assert "--max-cost" in cli and "--executor" in cli
    schema = (site / "reference" / "store-schema.html").read_text()
    for column in ("attack_succeeded", "injection_seen", "heartbeat_at", "verdict_isolation"):
        assert f"<code>{column}</code>" in schema, column
    api = (site / "reference" / "python-api.html").read_text()
    for name in ("randori.tools.tool", "randori.attacks.base.Attack", "randori.agents.defenses.base.Defense",
                 "randori.agents.external.session.AgentCase", "randori.bench.store.Store"):
        assert f'id="{name}"' in api, name
    assert not list(site.rglob("*.py")), "the hook and the screenshot script are not pages"


@pytest.mark.slow
def test_the_readme_quickstart_prints_what_the_readme_shows(tmp_path):
    """The quickstart's output in README.md is the real output of its commands (run offline here)."""
    text = README.read_text()
    quickstart = text.split("## Quickstart", 1)[1]
    commands = [line.split("  #", 1)[0].strip() for line in _shell_lines(quickstart.split("```text", 1)[0])]
    run, compare = (shlex.split(c)[1:] for c in commands if c.startswith(("randori run", "randori compare")))
    shown_run, shown_compare = re.findall(r"```text\n(.*?)```", quickstart, re.DOTALL)[:2]
    outputs = []
    for args in (run, compare):
        done = randori(*args, env={"COLUMNS": "80"}, cwd=tmp_path, timeout=600)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    for shown, printed in zip((shown_run, shown_compare), outputs, strict=True):
        for line in shown.splitlines():
            if line.strip() != "...":
                assert line in printed.splitlines(), f"README shows {line!r}, the command prints:\n{printed}"


@pytest.mark.slow
def test_the_plugin_examples_run_as_an_installed_plugin(tmp_path):
    """The attack and the defense of docs/guides/plugins.md, installed through their entry points,
    run on banking: the attack writes its text, the defense blocks the payment it asks for."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "guides" / "plugins.md").read_text(), re.DOTALL)
    (tmp_path / "my_plugin.py").write_text("\n\n".join(blocks))
    info = tmp_path / "my_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[randori.attacks]\nshout = my_plugin:Shout\n\n"
                                           "[randori.defenses]\ncareful = my_plugin:Careful\n")
    env = {"PYTHONPATH": str(tmp_path)}
    listed = randori("attacks", "list", env=env)
    assert listed.returncode == 0 and "shout" in listed.stdout, listed.stderr
    args = ["run", "-s", "banking", "-m", "scripted/gullible", "-u", "user_task_0", "-i", "injection_task_0",
            "--no-benign", "-r", str(tmp_path / "results")]
    for defense, succeeded in (("none", 1), ("careful", 0)):
        done = randori(*args, "-a", "shout[times=2]", "-d", defense, env=env)
        assert done.returncode == 0, done.stderr
        shown = randori("report", "-r", str(tmp_path / "results"), "-f", "json", env=env)
        rows = [r for r in json.loads(shown.stdout)["rows"]
                if r["defense"] == defense and r["suite"] == "banking" and r["model"] == "scripted/gullible"]
        assert [r["attack"] for r in rows] == ["shout[times=2]"], rows
        assert rows[0]["attack_success"]["successes"] == succeeded, rows
