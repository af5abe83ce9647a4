"""The fast YAML writer must produce exactly PyYAML's text: the model reads it, and a difference
would change what a benchmark measures. Checked on every tool result the scripted agents see in
every suite (benign and attacked) and on generated data full of YAML's traps."""

import asyncio
import random
import string

import pytest
import yaml

from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, run_case
from randori.tools import runtime, yaml_block
from randori.tools.runtime import pyyaml_render, render


def _fast(plain):
    out = yaml_block.dump(plain)
    return None if out is None else out.rstrip()


def test_matches_pyyaml_on_every_tool_result_of_the_suite(suite, monkeypatch):
    seen = []
    real = yaml_block.dump

    def recording(plain):
        out = real(plain)
        seen.append((plain, out))
        return out

    monkeypatch.setattr(runtime.yaml_block, "dump", recording)
    model = get_model("scripted/gullible", ModelSettings())
    first = sorted(suite.injection_tasks)[:2]
    cases = [c for c in plan(Selection(suites=[suite], model=model, attacks=["important_instructions"]))
             if c.injection_task is None or c.injection_task in first]

    async def go():
        return [await run_case(c, suite, model) for c in cases]

    results = asyncio.run(go())
    assert all(r.status == "ok" for r in results)
    containers = [(p, out) for p, out in seen if isinstance(p, (dict, list)) and p]
    assert len(containers) > 50
    for plain, out in containers:
        if out is not None:
            assert out.rstrip() == pyyaml_render(plain), plain
    fast = sum(out is not None for _, out in containers)
    assert fast / len(containers) > 0.9, f"only {fast} of {len(containers)} results took the fast path"


TRAPS = ["", " ", "yes", "No", "null", "~", "1", "-1", "0x1f", "1.5", ".5", "1e3", "2024-05-01", "2024-05-01 10:00",
         "12:30", "<<", "=", "true", "-", "- a", "-a", "? x", ":x", "a:", "a: b", "a:b", "#x", "a #b", "a#b", "---",
         "...", "'q'", '"dq"', "it's", "[x]", "{a}", "a,b", "&a", "*a", "!t", "|p", ">g", "%p", "@me", "`c`",
         "trailing ", " leading", "tab\there", "ünï", "日本語", "emoji 😀", "nbsp\xa0", "bom\ufeff", "cr\rx",
         "ctl\x01", "line\u2028sep", "a\nb", "a\n", "\na", "a\n\n", "\n", "a  \nb ", " a\n b", "a\n\nb", "a\tb\nc",
         "http://x.y/z?q=1#f", "$12.50", "(555) 010-4477", "+1 555", "50%", "C:\\path", "1_000", "0o17", "1,000",
         "-.inf", ".NaN", "Yes please", "x" * 130, "k" * 99]


def _data(rng, depth=0):
    r = rng.random()
    if depth > 3 or r < 0.45:
        c = rng.random()
        if c < 0.6:
            if rng.random() < 0.7:
                return rng.choice(TRAPS)
            return "".join(rng.choice(string.printable + "äé😀\xa0") for _ in range(rng.randint(0, 12)))
        if c < 0.7:
            return rng.randint(-10**6, 10**6)
        if c < 0.8:
            return rng.choice([0.5, -2.0, 1e20, 1.5e-7, float("inf"), float("-inf"), float("nan"), 100.0])
        if c < 0.9:
            return rng.choice([True, False, None])
        return rng.choice([{}, []])
    if r < 0.75:
        return {(rng.choice(TRAPS) if rng.random() < 0.5 else f"k{i}"): _data(rng, depth + 1)
                for i in range(rng.randint(1, 4))}
    return [_data(rng, depth + 1) for _ in range(rng.randint(1, 4))]


def test_matches_pyyaml_on_generated_data():
    rng = random.Random(7)
    checked = 0
    for _ in range(6000):
        data = _data(rng)
        out = _fast(data)
        if out is None:
            continue
        checked += 1
        assert out == pyyaml_render(data), data
    assert checked > 1000


@pytest.mark.parametrize("text", ["a", "yes", "a: b", "-a", "- a", "#x", "x #y", "it's", "2024-05-01", "", "a\nb",
                                  "\n lead", "end\n", "kept\n\n", "\n", "ünï", "  both  ", "1.0", "'", "a:", "[1]"])
def test_each_kind_of_string_in_each_position(text):
    for data in ({"k": text}, [text], {"k": [text]}, [{"k": text, "n": 1}], {"a": {"b": text}}, [[text, 1]]):
        assert _fast(data) == pyyaml_render(data), data


def test_a_kept_final_blank_line_ends_the_document_as_libyaml_does():
    # An injected text often ends in a blank line: "|+" keeps it, and libyaml then closes the
    # document with "..." unless a later block scalar resets that.
    assert _fast({"a": "x\n\n", "b": 1}) == "a: |+\n  x\n\nb: 1\n..." == pyyaml_render({"a": "x\n\n", "b": 1})
    assert _fast({"a": "x\n\n", "b": "y\nz"}) == pyyaml_render({"a": "x\n\n", "b": "y\nz"})
    assert not _fast({"a": "x\n\n", "b": "y\nz"}).endswith("...")


def test_layout():
    data = {"inbox": [{"id": 7, "to": ["ana@example.com"], "body": "Hi,\n\nsee you at 10.\n", "read": False}],
            "folders": {"work": [], "archive": {}}, "total": 1.5e20, "note": None}
    assert _fast(data) == (
        "inbox:\n"
        "- id: 7\n"
        "  to:\n"
        "  - ana@example.com\n"
        "  body: |\n"
        "    Hi,\n"
        "\n"
        "    see you at 10.\n"
        "  read: false\n"
        "folders:\n"
        "  work: []\n"
        "  archive: {}\n"
        "total: 1.5e+20\n"
        "note: null")
    assert yaml.safe_load(_fast(data)) == data


@pytest.mark.parametrize("data", [{"k": "tab\there"}, ["emoji 😀"], {"k": "cr\rx\nlf"}, {"k" * 120: 1},
                                  {"a\nb": 1}, {1: "int key"}, "a string", [], {"k": b"bytes"}])
def test_what_it_is_unsure_of_goes_to_pyyaml(data):
    assert yaml_block.dump(data) is None
    if isinstance(data, (dict, list)) and data:
        assert render(data) == pyyaml_render(data)


def test_a_container_seen_twice_goes_to_pyyaml():
    shared = {"city": "Lyon"}
    data = {"from": shared, "to": shared}
    assert yaml_block.dump(data) is None
    assert "&id001" in render(data)


def test_without_libyaml_it_stands_aside(monkeypatch):
    monkeypatch.setattr(yaml_block, "_LIBYAML", False)
    assert yaml_block.dump({"a": "x\n\n", "b": 1}) is None
