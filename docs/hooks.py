"""MkDocs hook: pages that are generated from randori itself when the site is built.

`<!-- randori:cli -->` becomes the help of every command, as `randori COMMAND --help` prints it;
`<!-- randori:store-schema -->` becomes the tables and columns of a freshly created results store.
So the reference cannot drift from the code: change an option or a column, and the next build shows it.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from typing import Any

CLI_MARK = "<!-- randori:cli -->"
SCHEMA_MARK = "<!-- randori:store-schema -->"
WIDTH = 100


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if CLI_MARK in markdown:
        markdown = markdown.replace(CLI_MARK, cli_reference())
    if SCHEMA_MARK in markdown:
        markdown = markdown.replace(SCHEMA_MARK, store_schema())
    return markdown


def _commands() -> list[tuple[list[str], Any]]:
    """Every command of the CLI, depth first, as (words after `randori`, click command)."""
    import typer

    from randori.cli import app

    def walk(words: list[str], cmd: Any) -> list[tuple[list[str], Any]]:
        found = [(words, cmd)]
        for name in getattr(cmd, "commands", {}) or {}:
            sub = cmd.commands[name]
            if not getattr(sub, "hidden", False):
                found += walk([*words, name], sub)
        return found

    return walk([], typer.main.get_command(app))


def _help(words: list[str]) -> str:
    from typer.testing import CliRunner

    from randori.cli import app

    env = {"COLUMNS": str(WIDTH), "TERM": "dumb", "NO_COLOR": "1", "_TYPER_FORCE_DISABLE_TERMINAL": "1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        result = CliRunner().invoke(app, [*words, "--help"], prog_name="randori", terminal_width=WIDTH)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if result.exit_code != 0:
        raise RuntimeError(f"randori {' '.join(words)} --help failed: {result.output}")
    return "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())


def cli_reference() -> str:
    parts = []
    for words, _cmd in _commands():
        title = " ".join(["randori", *words])
        parts.append(f"## `{title}`\n\n```text\n$ {title} --help\n{_help(words)}\n```\n")
    return "\n".join(parts)


def store_schema() -> str:
    from randori.bench.store import Store
    from randori.code.store import CodeStore

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        CodeStore(store)
        conn = sqlite3.connect(store.path)
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
        parts = []
        for table in tables:
            rows = ["| column | type | not null | default | key |", "| --- | --- | --- | --- | --- |"]
            for _cid, name, kind, notnull, default, pk in conn.execute(f"PRAGMA table_info({table})"):
                rows.append(f"| `{name}` | {kind or ''} | {'yes' if notnull else ''} | "
                            f"{'' if default is None else f'`{default}`'} | {'primary' if pk else ''} |")
            parts.append(f"### `{table}`\n\n" + "\n".join(rows) + "\n")
        conn.close()
        store.conn.close()
    return "\n".join(parts)
