from __future__ import annotations

import asyncio

import pytest

from randori.code.coders import HOSTILE_KINDS, ScriptedCoder, extract_code, get_coder, hostile_program
from randori.errors import UserError


def test_extract_prefers_the_block_defining_the_entry_point():
    text = ("Here is a helper:\n```python\ndef helper():\n    return 1\n```\nAnd the answer:\n"
            "```python\nimport os\n\ndef solve(x):\n    return x\n```\nDone.")
    assert extract_code(text, "solve") == "import os\n\ndef solve(x):\n    return x\n"


def test_extract_takes_the_last_revision():
    text = "```py\ndef solve():\n    return 1\n```\nActually:\n```python\ndef solve():\n    return 2\n```"
    assert "return 2" in extract_code(text, "solve")


def test_extract_handles_unclosed_fence_and_think_blocks():
    assert extract_code("<think>```python\ndef solve(): pass\n```</think>```python\ndef solve():\n    return 3\n",
                        "solve") == "def solve():\n    return 3\n"


def test_extract_bare_code_and_prose():
    assert extract_code("def solve():\n    return 4", "solve") == "def solve():\n    return 4\n"
    assert extract_code("I cannot help with that.", "solve") == "I cannot help with that.\n"


def test_scripted_coders(builtin):
    task = builtin.select(["sqli-find-user"])[0]

    def code(kind, rnd):
        return asyncio.run(ScriptedCoder(kind).write(task, [], rnd)).code.strip()

    assert code("insecure-then-secure", 0) == task.insecure_code.strip()
    assert code("insecure-then-secure", 1) == task.secure_code.strip()
    assert code("secure", 0) == task.secure_code.strip()
    assert code("insecure", 3) == task.insecure_code.strip()
    with pytest.raises(SyntaxError):
        compile(code("invalid", 0), "x", "exec")
    compile(code("hostile", 0), "x", "exec")


def test_hostile_programs_parse_and_define_the_entry_point():
    for kind in HOSTILE_KINDS:
        src = hostile_program(kind, "entry")
        compile(src, kind, "exec")
        assert src.startswith("def entry(")


def test_unknown_coders():
    with pytest.raises(UserError, match="unknown scripted coder"):
        get_coder("scripted/nope")
    with pytest.raises(UserError, match="provider/model"):
        get_coder("gpt-4o")
