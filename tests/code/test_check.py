from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from randori.code.check import check_task, check_tasks
from tests.code.helpers import invoke


@pytest.mark.slow
def test_every_builtin_task_is_valid(sandbox, builtin):
    """Secure references pass both test groups; insecure ones pass functional and fail security."""
    checks = asyncio.run(check_tasks(sandbox, builtin.tasks, concurrency=6))
    bad = {c.task_id: c.problems for c in checks if not c.ok}
    assert bad == {}


def test_a_broken_task_is_reported(sandbox, builtin):
    task = builtin.select(["sqli-find-user"])[0]
    broken = task.model_copy(update={"insecure_code": task.secure_code})
    res = asyncio.run(check_task(sandbox, broken))
    assert not res.ok
    assert res.problems == ["insecure reference passes security tests (all tests passed)"]


def test_check_cli_builtin_subset():
    res = invoke("check", "--task", "sqli-find-user", "--task", "xss-comment", "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["ok"] == 2 and data["total"] == 2 and data["dataset"].startswith("builtin@")


def test_check_cli_codeseceval_layout(mini_split: Path):
    res = invoke("check", "--dataset", str(mini_split), "--format", "json")
    assert res.exit_code == 0, res.output
    by_id = {t["task"]: t for t in json.loads(res.stdout)["tasks"]}
    assert by_id["CWE-22/01"]["ok"] and by_id["CWE-78_02"]["ok"]
    assert not by_id["CWE-89/03"]["ok"]  # both references pass: it does not separate them
    table = invoke("check", "--dataset", str(mini_split))
    assert table.exit_code == 0 and "2/3 tasks separate" in table.stdout
