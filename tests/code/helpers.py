"""Running the code track from tests: through the Typer app, as a user would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from randori.cli.code import code_app

# Tasks whose secure reference Bandit does not flag, so the scripted coders finish in one repair.
QUICK_TASKS = ["sqli-find-user", "path-read-document", "cmd-count-lines", "deser-session-pickle",
               "random-api-token", "xss-comment", "jwt-none-alg", "weak-hash-fingerprint"]


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(code_app, list(args), env=env)


def run_json(results: Path, *args: str, tasks: list[str] | None = None, env: dict[str, str] | None = None
             ) -> list[dict[str, Any]]:
    task_args = [a for t in (tasks or []) for a in ("--task", t)]
    res = invoke("run", "--results", str(results), "--format", "json", *task_args, *args, env=env)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def rates(summary: dict[str, Any], field: str) -> list[float | None]:
    return [(r[field] or {}).get("rate") for r in summary["per_round"]]
