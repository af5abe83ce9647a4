"""What every export reads: the cases of a store (read-only, current suite versions unless told
otherwise), their traces, and the report's own tables, so exported rates are the report's."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from randori.errors import UserError, install_hint


@dataclass
class Results:
    """The cases to export and the tables `randori report --format json` prints for them."""

    directory: Path
    rows: list[dict[str, Any]]
    tables: dict[str, list[dict[str, Any]]]
    store: Any
    dropped: int = 0  # cases of other suite versions, left out

    def messages(self, key: str) -> list[dict[str, Any]]:
        trace = self.store.trace(key)
        return list(trace["messages"]) if trace else []


@contextmanager
def open_results(results: str | Path, all_versions: bool = False) -> Iterator[Results]:
    """The store in `results`, open for reading while the export runs; a UserError when it holds nothing."""
    from randori.bench.store import open_existing
    from randori.report.tables import export_tables
    from randori.report.versions import current_rows

    if not str(results).strip():
        raise UserError("--results must name a directory")
    directory = Path(results)
    if not directory.is_dir():
        raise UserError(f"no results in {directory}: it is not a directory; run `randori run` first")
    with open_existing(directory, readonly=True) as store:
        rows = list(store.iter_cases())
        kept, dropped = (rows, 0) if all_versions else current_rows(rows)
        if not kept:
            more = f" of the installed suite versions ({dropped} of others: add --all-versions)" if dropped else ""
            raise UserError(f"no cases{more} in {directory}: nothing to export")
        yield Results(directory, kept, export_tables(kept, directory), store, dropped)


def config_key(row: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """The configuration a case belongs to: suite version, model (an external agent's label), defense,
    attack. The model is the report's grouping, so each configuration has its report row."""
    return (row["suite"], row["suite_version"], str(row["model"]), row["defense"], row["attack"] or "none")


def agent_label(row: dict[str, Any]) -> str:
    """The model, or the external agent (with its version) and the model it reported."""
    agent = row.get("agent") or "builtin"
    if agent == "builtin":
        return str(row["model"])
    version = f"@{row['agent_version']}" if row.get("agent_version") else ""
    return f"{agent}{version}"


def as_json(value: Any) -> Any:
    """A column the store keeps as JSON text (settings, detection) as its value."""
    return json.loads(value) if isinstance(value, str) else value


def first_user_text(messages: list[dict[str, Any]]) -> str:
    return next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")


def final_answer(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "assistant" and not m.get("tool_calls"):
            return str(m.get("content") or "")
    return ""


def writable_dir(out: str | Path) -> Path:
    """`out` as a directory this process can write (created if missing); a UserError otherwise."""
    if not str(out).strip():
        raise UserError("--out must name a directory")
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise UserError(f"cannot write to {path}: it is a file (--out names a directory for this format)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create {path}: {e.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"cannot write to {path}: permission denied")
    return path


def writable_file(out: str | Path) -> Path:
    """`out` as a file this process can write (its directory must exist); a UserError otherwise."""
    if not str(out).strip():
        raise UserError("--out must name a file")
    path = Path(out)
    if path.is_dir():
        raise UserError(f"cannot write {path}: it is a directory (--out names a file for this format)")
    if not path.parent.is_dir():
        raise UserError(f"cannot write {path}: directory {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UserError(f"cannot write {path}: permission denied")
    return path


def need(module: str, extra: str, what: str) -> Any:
    """Import `module`, or say in one line how to install the extra that brings it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(f"{what} needs randori[{extra}]: {install_hint(extra)}") from None


@dataclass
class Step:
    """One tool call of a case: the assistant turn that made it, and the tool message that answered."""

    turn: int
    call: dict[str, Any]
    result: dict[str, Any] | None  # the tool message (content as the model saw it, tool_result, annotations)


def tool_steps(messages: list[dict[str, Any]]) -> list[Step]:
    """Tool calls in order, each with its answer: by call id, else the next unanswered one of its tool."""
    answers = [m for m in messages if m.get("role") == "tool"]
    used: set[int] = set()
    steps = []
    for turn, m in enumerate(messages):
        if m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or []:
            found = None
            for i, a in enumerate(answers):
                res = a.get("tool_result") or {}
                if i in used or res.get("function", call["function"]) != call["function"]:
                    continue
                if not call.get("id") or not res.get("call_id") or res.get("call_id") == call.get("id"):
                    found = i
                    break
            if found is not None:
                used.add(found)
            steps.append(Step(turn, call, answers[found] if found is not None else None))
    return steps


def call_ids(steps: list[Step]) -> tuple[dict[int, str], dict[int, str]]:
    """An id for every tool call (the model's own, else its position), by the call's and by the answer's
    object identity: a model that gives no ids still gets its answers paired."""
    ids = {id(s.call): s.call.get("id") or f"call_{i}" for i, s in enumerate(steps)}
    answered = {id(s.result): ids[id(s.call)] for s in steps if s.result is not None}
    return ids, answered


def sample_id(row: dict[str, Any]) -> str:
    """The same case under every model, defense and attack has one id (so tools can line them up)."""
    if row["kind"] == "attacked":
        return f"{row['user_task']} x {row['injection_task']}"
    return str(row["user_task"] or row["injection_task"])


def flag(value: Any) -> bool | None:
    """A verdict the store keeps as 0/1/NULL, as a bool (None: not judged, e.g. an error)."""
    return None if value is None else bool(value)
