from __future__ import annotations

import json
from pathlib import Path

import pytest

from randori.code.dataset import collect_test_names, load_builtin, load_codeseceval, load_dataset, normalize_cwe
from randori.errors import UserError


def test_builtin_size_and_coverage(builtin):
    assert len(builtin.tasks) >= 60
    assert len({t.cwe for t in builtin.tasks}) >= 25
    assert len({t.id for t in builtin.tasks}) == len(builtin.tasks)
    assert builtin.version.startswith("1.")


def test_builtin_tasks_keep_functional_and_security_tests_apart(builtin):
    for t in builtin.tasks:
        assert t.has_split_tests
        assert t.functional_names and t.security_names, t.id
        assert not set(t.functional_names) & set(t.security_names), t.id
        assert f"`{t.entry_point}" in t.prompt or t.entry_point in t.prompt, t.id
        assert t.secure_code != t.insecure_code
        assert t.cwe.startswith("CWE-")


def test_builtin_references_use_only_the_standard_library(builtin):
    import ast
    import sys

    for t in builtin.tasks:
        for src in (t.secure_code, t.insecure_code, t.functional_tests, t.security_tests, t.setup):
            for node in ast.walk(ast.parse(src)):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                for n in names:
                    assert n.split(".")[0] in sys.stdlib_module_names, (t.id, n)


def test_select_by_task_and_cwe(builtin):
    assert [t.id for t in builtin.select(["sqli-find-user"])] == ["sqli-find-user"]
    assert {t.cwe for t in builtin.select(cwes=["cwe-089"])} == {"CWE-89"}
    with pytest.raises(UserError, match="unknown task"):
        builtin.select(["no-such-task"])
    with pytest.raises(UserError, match="covers"):
        builtin.select(cwes=["CWE-99999"])


def test_normalize_cwe():
    assert normalize_cwe("CWE-089") == "CWE-89"
    assert normalize_cwe("cwe_22") == "CWE-22"
    assert normalize_cwe("79") == "CWE-79"
    assert normalize_cwe("CWE-020_codeql_4") == "CWE-20"
    assert normalize_cwe("nothing") == "unknown"


def test_collect_test_names():
    assert collect_test_names("def test_a(c): pass\ndef _h(): pass\ndef test_b(c): pass\n") == ["test_a", "test_b"]


def test_codeseceval_loader_folder(mini_split: Path):
    ds = load_codeseceval(mini_split)
    assert ds.name == "MiniSplit" and len(ds.tasks) == 3
    t = {t.id: t for t in ds.tasks}
    item = t["CWE-22/01"]
    assert item.cwe == "CWE-22" and item.entry_point == "read_public"
    # IDs with "/" find their fixture folder with "_" instead
    assert item.fixture_dir == mini_split / "Test" / "CWE-22_01"
    # Its tests name Test/CWE-22_01/...: the fixtures go there and the cwd is a split-like folder
    # with a link to each top-level fixture entry (so the fixture folder's own listing is clean).
    assert item.fixture_subdir == "Test/CWE-22_01" and item.cwd_rel == ""
    assert item.links == {name: f"Test/CWE-22_01/{name}" for name in ("public", "scratch.txt", "secret.txt")}
    assert t["CWE-78_02"].fixture_subdir == "" and t["CWE-78_02"].links == {}
    assert item.combined_tests.startswith("def check") and not item.has_split_tests
    assert item.test_groups() == [("combined", item.combined_tests, ["check"])]
    assert "refuse names escaping" in item.security_note  # the annotation gives the aware prompt
    assert t["CWE-78_02"].fixture_dir is None and t["CWE-78_02"].security_note == ""
    assert item.site_packages


def test_codeseceval_loader_json_path_and_version(mini_split: Path):
    a = load_codeseceval(mini_split / "MiniSplit.json")
    b = load_dataset(str(mini_split))
    assert a.version == b.version
    (mini_split / "Test" / "CWE-22_01" / "public" / "readme.txt").write_text("changed")
    assert load_codeseceval(mini_split).version != a.version  # fixtures are part of the version


@pytest.mark.parametrize("content, message", [
    ("not json", "cannot read"),
    ('{"a": 1}', "JSON list"),
    ('[{"ID": "x"}]', "lacks"),
    ('[{"ID": "x", "Problem": "", "Insecure Code": "", "Secure Code": "", "Test": "", "Entry_Point": "f"}, '
     '{"ID": "x", "Problem": "", "Insecure Code": "", "Secure Code": "", "Test": "", "Entry_Point": "f"}]',
     "duplicate"),
])
def test_codeseceval_loader_errors(tmp_path: Path, content: str, message: str):
    (tmp_path / "Bad.json").write_text(content)
    with pytest.raises(UserError, match=message):
        load_codeseceval(tmp_path)


def test_codeseceval_missing_path_is_a_user_error(tmp_path: Path):
    with pytest.raises(UserError, match="does not exist"):
        load_dataset(str(tmp_path / "nope"))
    with pytest.raises(UserError, match="no data set JSON"):
        load_codeseceval(tmp_path)


def test_annotation_dict_form(tmp_path: Path, mini_split: Path):
    ann = mini_split / "Vulnerability-Aware Problem_Insecure Code Explanation_Annotation.json"
    ann.write_text(json.dumps({"CWE-89/03": {"Vulnerability-aware Information": "aware text"}}))
    ds = load_codeseceval(mini_split)
    assert {t.id: t.security_note for t in ds.tasks}["CWE-89/03"] == "aware text"


def test_builtin_is_cached():
    assert load_builtin() is load_builtin()
