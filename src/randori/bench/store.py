"""SQLite results store, one file per results directory, in WAL mode.

Every finished case is committed on its own, so a killed run loses no finished case, and the case
key is the primary key, so a resumed run can never store a case twice.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import randori

STORE_FILE = "randori.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at REAL NOT NULL,
  finished_at REAL,
  randori_version TEXT NOT NULL,
  config TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'running'
);
CREATE TABLE IF NOT EXISTS cases (
  key TEXT PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  kind TEXT NOT NULL,
  suite TEXT NOT NULL,
  suite_version TEXT NOT NULL,
  user_task TEXT,
  injection_task TEXT,
  attack TEXT,
  defense TEXT NOT NULL,
  model TEXT NOT NULL,
  settings TEXT NOT NULL,
  repeat INTEGER NOT NULL,
  status TEXT NOT NULL,
  error_category TEXT,
  error_message TEXT,
  utility INTEGER,
  attack_succeeded INTEGER,
  injection_seen INTEGER,
  model_calls INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  defense_calls INTEGER NOT NULL DEFAULT 0,
  defense_input_tokens INTEGER NOT NULL DEFAULT 0,
  defense_output_tokens INTEGER NOT NULL DEFAULT 0,
  duration_s REAL NOT NULL DEFAULT 0,
  attacker_knowledge TEXT,
  created_at REAL NOT NULL,
  defense_time_s REAL NOT NULL DEFAULT 0,
  attack_tries INTEGER
);
CREATE INDEX IF NOT EXISTS cases_group ON cases(model, defense, attack, suite);
-- The viewer lists cases in this order page by page; the index lets LIMIT/OFFSET walk it unsorted.
CREATE INDEX IF NOT EXISTS cases_order ON cases(suite, model, defense, attack, kind, user_task, injection_task, repeat);
CREATE INDEX IF NOT EXISTS cases_run ON cases(run_id);
CREATE TABLE IF NOT EXISTS traces (
  key TEXT PRIMARY KEY REFERENCES cases(key),
  injections BLOB,
  messages BLOB NOT NULL,
  diff BLOB NOT NULL,
  attempts BLOB
);
"""

# Columns added after a table was first created: added in place to stores written by older versions.
ADDED_COLUMNS = {
    "cases": {"defense_time_s": "REAL NOT NULL DEFAULT 0", "attack_tries": "INTEGER"},
    "traces": {"attempts": "BLOB"},
}


@dataclass
class CaseResult:
    key: str
    kind: str
    suite: str
    suite_version: str
    user_task: str | None
    injection_task: str | None
    attack: str | None
    defense: str
    model: str
    settings: dict[str, Any]
    repeat: int
    status: str  # "ok" or "error"
    error_category: str | None = None
    error_message: str | None = None
    utility: bool | None = None
    attack_succeeded: bool | None = None
    injection_seen: bool | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    defense_calls: int = 0
    defense_input_tokens: int = 0
    defense_output_tokens: int = 0
    duration_s: float = 0.0
    attacker_knowledge: dict[str, Any] | None = None
    # Wall time spent inside the defense's hooks (its own model calls included).
    defense_time_s: float = 0.0
    # Adaptive attacks: tries run (the try that succeeded, or the whole budget).
    attack_tries: int | None = None
    # Stored in `traces`, not in `cases`.
    messages: list[dict[str, Any]] | None = None
    diff: list[dict[str, Any]] | None = None
    injections: dict[str, str] | None = None
    attempts: list[dict[str, Any]] | None = None  # adaptive attacks: every try


_FIELDS = fields(CaseResult)


def _pack(obj: Any) -> bytes:
    return zlib.compress(json.dumps(obj, ensure_ascii=False).encode(), 3)


def _unpack(blob: bytes | None) -> Any:
    return None if blob is None else json.loads(zlib.decompress(blob))


class Store:
    def __init__(self, results_dir: str | Path, *, create: bool = True):
        self.dir = Path(results_dir)
        self.path = self.dir / STORE_FILE
        if create:
            self.dir.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a killed process (not a power cut) and is much faster than FULL.
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.executescript(SCHEMA)
        for table, columns in ADDED_COLUMNS.items():
            have = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
            for name, decl in columns.items():
                if name not in have:
                    self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs -----------------------------------------------------------------------------------
    def start_run(self, config: dict[str, Any]) -> int:
        cur = self.conn.execute(
            "INSERT INTO runs (started_at, randori_version, config) VALUES (?, ?, ?)",
            (time.time(), randori.__version__, json.dumps(config, sort_keys=True)))
        return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, status: str = "finished") -> None:
        self.conn.execute("UPDATE runs SET finished_at = ?, status = ? WHERE id = ?",
                          (time.time(), status, run_id))

    def runs(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT r.*, (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.id) AS cases "
            "FROM runs r ORDER BY r.id").fetchall()
        return [dict(r) | {"config": json.loads(r["config"])} for r in rows]

    # -- cases ----------------------------------------------------------------------------------
    def done_keys(self, keys: Iterable[str] | None = None) -> set[str]:
        """Keys already stored (cases with an error are not done: a resumed run retries them)."""
        rows = self.conn.execute("SELECT key FROM cases WHERE status = 'ok'").fetchall()
        done = {r[0] for r in rows}
        return done if keys is None else done & set(keys)

    def add(self, run_id: int, results: list[CaseResult]) -> None:
        """Store finished cases in one transaction. A retried error case replaces its old row."""
        now = time.time()
        with self.conn:
            self.conn.execute("BEGIN")
            for r in results:
                row = {f.name: getattr(r, f.name) for f in _FIELDS}  # asdict would deep-copy traces
                messages, diff, injections = row.pop("messages"), row.pop("diff"), row.pop("injections")
                attempts = row.pop("attempts")
                row["settings"] = json.dumps(row["settings"], sort_keys=True)
                row["attacker_knowledge"] = (json.dumps(row["attacker_knowledge"])
                                             if row["attacker_knowledge"] is not None else None)
                row["run_id"], row["created_at"] = run_id, now
                cols = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                self.conn.execute(f"INSERT OR REPLACE INTO cases ({cols}) VALUES ({marks})",
                                  tuple(row.values()))
                self.conn.execute("INSERT OR REPLACE INTO traces (key, injections, messages, diff, attempts) "
                                  "VALUES (?, ?, ?, ?, ?)",
                                  (r.key, _pack(injections or {}), _pack(messages or []), _pack(diff or []),
                                   None if attempts is None else _pack(attempts)))

    def cases(self, where: str = "", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        sql = "SELECT * FROM cases" + (f" WHERE {where}" if where else "")
        return [dict(r) for r in self.conn.execute(sql, params)]

    def iter_cases(self) -> Iterator[dict[str, Any]]:
        for r in self.conn.execute("SELECT * FROM cases"):
            yield dict(r)

    def trace(self, key: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM traces WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return {"injections": _unpack(row["injections"]), "messages": _unpack(row["messages"]),
                "diff": _unpack(row["diff"]), "attempts": _unpack(row["attempts"])}


def open_existing(results_dir: str | Path) -> Store:
    from randori.errors import UserError

    path = Path(results_dir) / STORE_FILE
    if not path.exists():
        raise UserError(f"no results in {results_dir} (expected {path}); run `randori run` first")
    return Store(results_dir, create=False)
