"""Code-track tasks: the built-in set (one YAML file per task in `data/tasks/`) and a loader for
data sets in the CodeSecEval layout, which we never ship.

A built-in task keeps its functional tests and its security tests apart (two sources of
`test_*(candidate)` functions), so we can tell "does what was asked" from "does it safely". A
CodeSecEval item has one `check(candidate)` mixing both; its results are recorded as one combined
test group and the report says so instead of inventing a split.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from randori.errors import UserError
from randori.sandbox.analyzers import normalize_cwe
from randori.sandbox.verdict import collect_test_names

DATA_DIR = Path(__file__).with_name("data") / "tasks"
BUILTIN = "builtin"
# Bumped by hand when the meaning of the task format changes; the content hash covers task edits.
BUILTIN_FORMAT = "1"

class CodeTask(BaseModel):
    """One code-generation task with its references and tests."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    cwe: str
    title: str = ""
    prompt: str
    entry_point: str
    # Extra guidance for the `aware` prompt variant (CWE and what to watch for).
    security_note: str = ""
    functional_tests: str = ""
    security_tests: str = ""
    # CodeSecEval: one `def check(candidate):` with functional and attack asserts together.
    combined_tests: str = ""
    secure_code: str
    insecure_code: str
    # Python run in the sandbox cwd before the solution loads (e.g. to build a database).
    setup: str = ""
    files: dict[str, str] = Field(default_factory=dict)
    fixture_dir: Path | None = None
    # Relative symlinks created in the work folder (CodeSecEval paths relative to the split folder).
    links: dict[str, str] = Field(default_factory=dict)
    # Where in the work folder the fixture copy goes, and the cwd (both relative to the work folder).
    fixture_subdir: str = ""
    cwd_rel: str = ""
    # Whether the sandbox should see installed third-party packages (CodeSecEval uses flask etc.).
    site_packages: bool = False
    # Signature seeds for fuzzing: argument tuples taken from the functional tests.
    fuzz: bool = True

    @field_validator("cwe")
    @classmethod
    def _cwe(cls, v: str) -> str:
        return normalize_cwe(v)

    @property
    def has_split_tests(self) -> bool:
        return not self.combined_tests

    @cached_property
    def functional_names(self) -> list[str]:
        return collect_test_names(self.functional_tests) if self.functional_tests else []

    @cached_property
    def security_names(self) -> list[str]:
        return collect_test_names(self.security_tests) if self.security_tests else []

    def test_groups(self) -> list[tuple[str, str, list[str]]]:
        """(group, source, names): `functional` and `security`, or one `combined` group."""
        if self.combined_tests:
            return [("combined", self.combined_tests, ["check"])]
        return [("functional", self.functional_tests, self.functional_names),
                ("security", self.security_tests, self.security_names)]

    def content_hash(self) -> str:
        data = self.model_dump(mode="json", exclude={"fixture_dir"})
        blob = json.dumps(data, sort_keys=True, ensure_ascii=False).encode()
        h = hashlib.sha256(blob)
        if self.fixture_dir is not None and self.fixture_dir.is_dir():
            for p in sorted(self.fixture_dir.rglob("*")):
                if p.is_file():
                    h.update(str(p.relative_to(self.fixture_dir)).encode())
                    h.update(p.read_bytes())
        return h.hexdigest()


class Dataset(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    version: str
    source: str
    tasks: list[CodeTask]

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def select(self, task_ids: Sequence[str] = (), cwes: Sequence[str] = ()) -> list[CodeTask]:
        """Tasks matching the ids and CWEs given (all when none). Raises UserError on unknowns."""
        tasks = self.tasks
        if task_ids:
            by_id = {t.id: t for t in tasks}
            unknown = [i for i in task_ids if i not in by_id]
            if unknown:
                raise UserError(f"unknown task id(s) in {self.label}: {', '.join(unknown)}")
            tasks = [by_id[i] for i in task_ids]
        if cwes:
            wanted = {normalize_cwe(c) for c in cwes}
            known = {t.cwe for t in self.tasks}
            missing = sorted(wanted - known)
            if missing and missing == sorted(wanted):
                raise UserError(f"no task in {self.label} covers {', '.join(missing)}")
            tasks = [t for t in tasks if t.cwe in wanted]
        return tasks


# -- built-in set -------------------------------------------------------------------------------

_BUILTIN_CACHE: dict[str, Dataset] = {}


def load_builtin(data_dir: Path = DATA_DIR) -> Dataset:
    key = str(data_dir)
    if key in _BUILTIN_CACHE:
        return _BUILTIN_CACHE[key]
    files = sorted(data_dir.glob("*.yaml"))
    if not files:
        raise UserError(f"no built-in code tasks found in {data_dir}")
    digest = hashlib.sha256(BUILTIN_FORMAT.encode())
    tasks: list[CodeTask] = []
    for path in files:
        raw = path.read_bytes()
        digest.update(path.name.encode() + b"\0" + raw)
        data = yaml.safe_load(raw)
        try:
            tasks.append(_builtin_task(data))
        except (ValueError, TypeError, KeyError) as e:
            raise UserError(f"bad built-in task file {path.name}: {e}") from e
    ids = [t.id for t in tasks]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UserError(f"duplicate built-in task ids: {', '.join(dupes)}")
    ds = Dataset(name=BUILTIN, version=f"{BUILTIN_FORMAT}.{digest.hexdigest()[:10]}",
                 source=str(data_dir), tasks=tasks)
    _BUILTIN_CACHE[key] = ds
    return ds


def _builtin_task(data: dict[str, Any]) -> CodeTask:
    return CodeTask(
        id=data["id"], cwe=data["cwe"], title=data.get("title", ""), prompt=data["prompt"],
        entry_point=data["entry_point"], security_note=data.get("security_note", ""),
        functional_tests=data["functional"], security_tests=data["security"],
        secure_code=data["secure"], insecure_code=data["insecure"], setup=data.get("setup", ""),
        files=data.get("files") or {}, fuzz=data.get("fuzz", True))


# -- CodeSecEval layout -------------------------------------------------------------------------

REQUIRED_FIELDS = ("ID", "Problem", "Insecure Code", "Secure Code", "Test", "Entry_Point")


def fixture_folder_name(item_id: str) -> str:
    return item_id.replace("/", "_")


def load_codeseceval(path: str | Path) -> Dataset:
    """Load a split folder (or its JSON file) in the CodeSecEval layout.

    The folder holds the item list (a JSON list of objects with `ID`, `Problem`, `Insecure Code`,
    `Secure Code`, `Test`, `Entry_Point`), optionally an annotation JSON (its name contains
    "Annotation") whose "Vulnerability-aware Information" per ID is the `aware` prompt, and fixture
    folders `Test/<ID with / replaced by _>/`."""
    p = Path(path).expanduser()
    if not p.exists():
        raise UserError(f"dataset path {p} does not exist")
    if p.is_dir():
        folder = p
        candidates = [f for f in sorted(p.glob("*.json")) if "annotation" not in f.name.lower()]
        if not candidates:
            raise UserError(f"no data set JSON in {p} (expected e.g. {p.name}.json)")
        same_name = [f for f in candidates if f.stem == p.name]
        if len(candidates) > 1 and not same_name:
            raise UserError(f"several JSON files in {p}; pass the one to use: "
                            + ", ".join(f.name for f in candidates))
        json_path = (same_name or candidates)[0]
    else:
        folder, json_path = p.parent, p
    items = _read_json(json_path)
    if not isinstance(items, list):
        raise UserError(f"{json_path} must hold a JSON list of items")
    aware = _annotations(folder)
    tasks: list[CodeTask] = []
    seen: set[str] = set()
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise UserError(f"{json_path}: item {n} is not an object")
        missing = [f for f in REQUIRED_FIELDS if not isinstance(item.get(f), str)]
        if missing:
            raise UserError(f"{json_path}: item {item.get('ID', n)} lacks {', '.join(missing)}")
        item_id = item["ID"]
        if item_id in seen:
            raise UserError(f"{json_path}: duplicate ID {item_id}")
        seen.add(item_id)
        fixture = folder / "Test" / fixture_folder_name(item_id)
        note = aware.get(item_id, "")
        fixture_dir = fixture if fixture.is_dir() else None
        tasks.append(CodeTask(
            id=item_id, cwe=item_id, title=item_id, prompt=item["Problem"],
            entry_point=item["Entry_Point"].strip(), security_note=note,
            combined_tests=item["Test"], secure_code=item["Secure Code"],
            insecure_code=item["Insecure Code"], fixture_dir=fixture_dir,
            site_packages=True, **_layout(item, fixture_dir)))
    digest = hashlib.sha256(json_path.read_bytes())
    for t in tasks:
        if t.fixture_dir is not None:
            digest.update(t.content_hash().encode())
    return Dataset(name=json_path.stem, version=digest.hexdigest()[:12], source=str(json_path),
                   tasks=tasks)


def _layout(item: dict[str, Any], fixture_dir: Path | None) -> dict[str, Any]:
    """Where an item's fixtures go and which cwd its tests get.

    Tests name files relative to the fixture folder (`x`) or to the split folder (`Test/<ID>/x`).
    Items that never mention `Test/<ID>` run in a clean copy of their fixture folder, so a listing
    of it shows only the fixtures. Items that do run in a split-like folder holding the copy at
    `Test/<ID>/`, with a link to each top-level fixture entry so the other form still works."""
    sub = f"Test/{fixture_folder_name(item['ID'])}"
    texts = (item["Test"], item["Secure Code"], item["Insecure Code"], item["Problem"])
    if not any(fixture_folder_name(item["ID"]) in t for t in texts):
        return {}
    entries = sorted(p.name for p in fixture_dir.iterdir()) if fixture_dir is not None else []
    return {"fixture_subdir": sub, "links": {name: f"{sub}/{name}" for name in entries if name != "Test"}}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"cannot read {path}: {e}") from e


def _annotations(folder: Path) -> dict[str, str]:
    """ID -> vulnerability-aware problem text, from an annotation file if there is one."""
    out: dict[str, str] = {}
    for f in sorted(folder.glob("*.json")):
        if "annotation" not in f.name.lower():
            continue
        data = _read_json(f)
        rows: Iterable[Any] = data if isinstance(data, list) else (
            [{"ID": k, **v} for k, v in data.items() if isinstance(v, dict)] if isinstance(data, dict) else [])
        for row in rows:
            if not isinstance(row, dict) or "ID" not in row:
                continue
            text = next((v for k, v in row.items() if k.lower() == "vulnerability-aware information"), None)
            if isinstance(text, str) and text.strip():
                out[str(row["ID"])] = text
    return out


def load_dataset(spec: str | None) -> Dataset:
    """`builtin` (or None) or a path to a data set in the CodeSecEval layout."""
    if spec in (None, "", BUILTIN):
        return load_builtin()
    return load_codeseceval(spec)
