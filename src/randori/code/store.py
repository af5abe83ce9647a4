"""Code-track tables in the shared results store (`randori.bench.store.Store`).

One row per task, repeat and round. All rounds of a task are written in one transaction when the
task finishes, so a killed run loses no finished task and never leaves half a task behind; the
key is a content hash of everything that affects the result, so re-running skips finished tasks
and a changed task, model setting or prompt variant never reuses a stale result.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from randori.bench.store import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS code_results (
  key TEXT NOT NULL,
  round INTEGER NOT NULL,
  run_id INTEGER NOT NULL,
  dataset TEXT NOT NULL,
  dataset_version TEXT NOT NULL,
  task_id TEXT NOT NULL,
  cwe TEXT NOT NULL,
  model TEXT NOT NULL,
  settings TEXT NOT NULL,
  prompt TEXT NOT NULL,
  max_rounds INTEGER NOT NULL,
  fuzz INTEGER NOT NULL,
  analyzers TEXT NOT NULL,
  repeat INTEGER NOT NULL,
  status TEXT NOT NULL,
  error_category TEXT,
  error_message TEXT,
  final INTEGER NOT NULL DEFAULT 0,
  parses INTEGER,
  functional INTEGER,
  security INTEGER,
  tests_pass INTEGER,
  both INTEGER,
  static_flagged INTEGER,
  bandit_flagged INTEGER,
  fuzz_flagged INTEGER,
  parse_error TEXT,
  findings TEXT,
  fuzz_findings TEXT,
  tests TEXT,
  verdict_isolation TEXT,
  unscanned TEXT,
  harness_error TEXT,
  code TEXT,
  reply TEXT,
  isolation TEXT,
  model_calls INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  duration_s REAL NOT NULL DEFAULT 0,
  created_at REAL NOT NULL,
  PRIMARY KEY (key, round)
);
CREATE INDEX IF NOT EXISTS code_results_group ON code_results(model, dataset, prompt);
CREATE TABLE IF NOT EXISTS code_reference_checks (
  dataset TEXT NOT NULL,
  dataset_version TEXT NOT NULL,
  environment TEXT NOT NULL,
  task_id TEXT NOT NULL,
  separates INTEGER NOT NULL,
  reason_class TEXT,
  reason TEXT,
  verdict_isolation TEXT,
  checked_at REAL NOT NULL,
  PRIMARY KEY (dataset, dataset_version, environment, task_id)
);
"""
# Columns added after the first release; added to older stores when they are opened for writing.
LATER_COLUMNS = {"verdict_isolation": "TEXT", "unscanned": "TEXT", "harness_error": "TEXT"}


def task_key(*, dataset: str, dataset_version: str, task_id: str, task_hash: str, model: str,
             settings: dict[str, Any], prompt: str, max_rounds: int, fuzz: dict[str, Any] | None,
             analyzers: str, repeat: int) -> str:
    payload = {"dataset": dataset, "version": dataset_version, "task": task_id, "task_hash": task_hash,
               "model": model, "settings": settings, "prompt": prompt, "rounds": max_rounds,
               "fuzz": fuzz, "analyzers": analyzers, "repeat": repeat}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


@dataclass
class RoundRow:
    round: int
    parses: bool
    functional: bool | None
    security: bool | None
    tests_pass: bool
    both: bool
    static_flagged: bool
    bandit_flagged: bool
    fuzz_flagged: bool | None
    parse_error: str | None
    findings: list[dict[str, Any]]
    fuzz_findings: list[dict[str, Any]] | None
    tests: list[dict[str, Any]]
    code: str
    reply: str
    isolation: dict[str, Any]
    # separate: the tests ran in their own process; shared: in the code's (the data set needs its
    # namespace), so the code could have forged the outcome.
    verdict_isolation: str | None = None
    # Analyzers that could not scan the code, and why (counted as flagged).
    unscanned: str | None = None
    # Why the harness failed on this code, when it did (the sample fails).
    harness_error: str | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    duration_s: float = 0.0


@dataclass
class TaskRecord:
    key: str
    dataset: str
    dataset_version: str
    task_id: str
    cwe: str
    model: str
    settings: dict[str, Any]
    prompt: str
    max_rounds: int
    fuzz: bool
    analyzers: str
    repeat: int
    status: str = "ok"  # ok | error
    error_category: str | None = None
    error_message: str | None = None
    rounds: list[RoundRow] = field(default_factory=list)


class CodeStore:
    def __init__(self, store: Store):
        self.store = store
        self.conn = store.conn
        self.conn.executescript(SCHEMA)
        have = {r[1] for r in self.conn.execute("PRAGMA table_info(code_results)")}
        for name, kind in LATER_COLUMNS.items():
            if name not in have:
                self.conn.execute(f"ALTER TABLE code_results ADD COLUMN {name} {kind}")

    # -- reference checks of external data sets (cached per data set version and environment) --
    def cached_check(self, dataset: str, version: str, environment: str
                     ) -> dict[str, tuple[bool, str, str, str]] | None:
        """task id -> (separates, reason class, reason, verdict isolation)."""
        rows = self.conn.execute(
            "SELECT task_id, separates, reason_class, reason, verdict_isolation FROM code_reference_checks "
            "WHERE dataset = ? AND dataset_version = ? AND environment = ?", (dataset, version, environment)).fetchall()
        if not rows:
            return None
        return {r[0]: (bool(r[1]), r[2] or "", r[3] or "", r[4] or "separate") for r in rows}

    def save_check(self, dataset: str, version: str, environment: str,
                   results: dict[str, tuple[bool, str, str, str]]) -> None:
        now = time.time()
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.execute("DELETE FROM code_reference_checks WHERE dataset = ? AND dataset_version = ? "
                              "AND environment = ?", (dataset, version, environment))
            self.conn.executemany(
                "INSERT INTO code_reference_checks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(dataset, version, environment, tid, int(ok), cls or None, why or None, mode, now)
                 for tid, (ok, cls, why, mode) in results.items()])

    def exclusions(self, dataset: str, version: str) -> dict[str, Any] | None:
        """The latest reference check of a data set version: how many items it left out, and why."""
        latest = self.conn.execute(
            "SELECT environment FROM code_reference_checks WHERE dataset = ? AND dataset_version = ? "
            "ORDER BY checked_at DESC LIMIT 1", (dataset, version)).fetchone()
        if latest is None:
            return None
        rows = self.conn.execute(
            "SELECT reason_class, reason FROM code_reference_checks WHERE dataset = ? AND dataset_version = ? "
            "AND environment = ? AND separates = 0", (dataset, version, latest[0])).fetchall()
        total = self.conn.execute(
            "SELECT COUNT(*) FROM code_reference_checks WHERE dataset = ? AND dataset_version = ? AND "
            "environment = ?", (dataset, version, latest[0])).fetchone()[0]
        shared = self.conn.execute(
            "SELECT COUNT(*) FROM code_reference_checks WHERE dataset = ? AND dataset_version = ? AND "
            "environment = ? AND separates = 1 AND verdict_isolation = 'shared'", (dataset, version, latest[0])
        ).fetchone()[0]
        by: dict[str, int] = {}
        for cls, why in rows:
            key = f"{cls} {why}" if cls == "missing package" else cls
            by[key] = by.get(key, 0) + 1
        return {"left_out": len(rows), "checked": total, "by_reason": dict(sorted(by.items(), key=lambda kv: -kv[1])),
                "separating_but_shared": shared}

    def done_keys(self) -> set[str]:
        rows = self.conn.execute("SELECT key FROM code_results WHERE status = 'ok' AND final = 1")
        return {r[0] for r in rows}

    def add(self, run_id: int, rec: TaskRecord) -> None:
        now = time.time()
        common = {
            "key": rec.key, "run_id": run_id, "dataset": rec.dataset, "dataset_version": rec.dataset_version,
            "task_id": rec.task_id, "cwe": rec.cwe, "model": rec.model,
            "settings": json.dumps(rec.settings, sort_keys=True), "prompt": rec.prompt,
            "max_rounds": rec.max_rounds, "fuzz": int(rec.fuzz), "analyzers": rec.analyzers,
            "repeat": rec.repeat, "status": rec.status, "error_category": rec.error_category,
            "error_message": rec.error_message, "created_at": now,
        }
        rows: list[dict[str, Any]] = []
        if rec.status != "ok" or not rec.rounds:
            rows.append(common | {"round": 0, "final": 1})
        else:
            for i, r in enumerate(rec.rounds):
                d = asdict(r)
                for k in ("findings", "fuzz_findings", "tests", "isolation"):
                    d[k] = json.dumps(d[k], ensure_ascii=False) if d[k] is not None else None
                for k in ("parses", "functional", "security", "tests_pass", "both", "static_flagged",
                          "bandit_flagged", "fuzz_flagged"):
                    d[k] = None if d[k] is None else int(d[k])
                rows.append(common | d | {"final": int(i == len(rec.rounds) - 1)})
        with self.conn:
            self.conn.execute("BEGIN")
            # A retried task (after an error, or with fewer rounds) replaces everything it had.
            self.conn.execute("DELETE FROM code_results WHERE key = ?", (rec.key,))
            for row in rows:
                cols = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                self.conn.execute(f"INSERT INTO code_results ({cols}) VALUES ({marks})", tuple(row.values()))

    def rows(self, where: str = "", params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        sql = "SELECT * FROM code_results" + (f" WHERE {where}" if where else "") + \
              " ORDER BY dataset, model, prompt, task_id, repeat, round"
        return [decode(dict(r)) for r in self.conn.execute(sql, tuple(params))]


JSON_COLUMNS = ("findings", "fuzz_findings", "tests", "isolation", "settings")


def decode(row: dict[str, Any]) -> dict[str, Any]:
    """A stored row with its JSON columns parsed (used by the viewer too, on a read-only connection)."""
    for k in JSON_COLUMNS:
        if row.get(k) is not None:
            row[k] = json.loads(row[k])
    return row
