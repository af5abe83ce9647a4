"""SQLite results store, one file per results directory, in WAL mode.

Every finished case is committed on its own, so a killed run loses no finished case, and the case
key is the primary key, so a resumed run can never store a case twice. Several runs may write to one
store at once: each claims a case before running it (`claims`), and a case another live run has
claimed is left to that run. A run records its process, host and a heartbeat, so a run that was
killed is shown as interrupted and its claims are taken over.

The file is marked as randori's (SQLite `application_id`), so another program's database is never
mistaken for a store, or written to. `report` and the viewer open it read-only.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import randori
from randori.errors import StoreError, scrub_secrets, secret_values

STORE_FILE = "randori.sqlite"
APPLICATION_ID = 0x726E6472  # "rndr": written into the SQLite header of every store
# A run that has not written its heartbeat for this long is dead (killed, or its machine gone).
STALE_AFTER = 300.0
HEARTBEAT_EVERY = 30.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at REAL NOT NULL,
  finished_at REAL,
  randori_version TEXT NOT NULL,
  config TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'running',
  pid INTEGER,
  host TEXT,
  heartbeat_at REAL
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
  attack_tries INTEGER,
  cached_input_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  defense_cached_input_tokens INTEGER NOT NULL DEFAULT 0,
  defense_cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  agent TEXT NOT NULL DEFAULT 'builtin',
  agent_version TEXT,
  detection TEXT,
  attack_attempted INTEGER,
  attack_blocked INTEGER,
  weaknesses TEXT,
  split TEXT,
  scenario TEXT,
  sessions TEXT,
  exposed INTEGER,
  persisted INTEGER,
  triggered INTEGER,
  executed INTEGER,
  attacker_calls INTEGER,
  attacker_input_tokens INTEGER,
  attacker_output_tokens INTEGER,
  data_directed INTEGER,
  approvals_asked INTEGER,
  approvals_refused INTEGER
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
  attempts BLOB,
  checks BLOB
);
-- A case being run right now, and by which run: a second run on the store leaves it alone.
CREATE TABLE IF NOT EXISTS claims (
  key TEXT PRIMARY KEY,
  run_id INTEGER NOT NULL,
  claimed_at REAL NOT NULL
);
"""

# Columns added after a table was first created: added in place to stores written by older versions.
ADDED_COLUMNS = {
    "cases": {"defense_time_s": "REAL NOT NULL DEFAULT 0", "attack_tries": "INTEGER",
              # Prompt-cache reads and writes, parts of input_tokens (and defense_input_tokens).
              "cached_input_tokens": "INTEGER NOT NULL DEFAULT 0", "cache_write_tokens": "INTEGER NOT NULL DEFAULT 0",
              "defense_cached_input_tokens": "INTEGER NOT NULL DEFAULT 0",
              "defense_cache_write_tokens": "INTEGER NOT NULL DEFAULT 0",
              "agent": "TEXT NOT NULL DEFAULT 'builtin'", "agent_version": "TEXT",
              # A detector's verdicts per tool output (JSON; see CaseResult.detection).
              "detection": "TEXT",
              # How far an attack got (randori.tasks.attempts); NULL in rows stored before: unknown.
              "attack_attempted": "INTEGER", "attack_blocked": "INTEGER",
              # Suites of code: the weakness scan of the final state (JSON; see CaseResult.weaknesses).
              "weaknesses": "TEXT",
              # The split a run selected the case by (JSON {"name", "seed"}); NULL: chosen by no split.
              "split": "TEXT",
              # Scenario cases: the scenario, each session's verdict (JSON; see CaseResult.sessions)
              # and the kill chain of an attacked one; NULL for other cases.
              "scenario": "TEXT", "sessions": "TEXT", "exposed": "INTEGER", "persisted": "INTEGER",
              "triggered": "INTEGER", "executed": "INTEGER",
              # Adaptive and search attacks: the attacker model's own calls and tokens over every try
              # (NULL for other attacks, and in rows stored before they were counted).
              "attacker_calls": "INTEGER", "attacker_input_tokens": "INTEGER", "attacker_output_tokens": "INTEGER",
              # Whether the case's user task needs its data (UserTask.data_directed); NULL in older rows.
              "data_directed": "INTEGER",
              # Defenses that ask the user (confirm): approvals asked and refused; NULL for the others.
              "approvals_asked": "INTEGER", "approvals_refused": "INTEGER"},
    "traces": {"attempts": "BLOB", "checks": "BLOB"},
    "runs": {"pid": "INTEGER", "host": "TEXT", "heartbeat_at": "REAL"},
}
# What a database must have to be a store written before stores were marked (older randori).
_REQUIRED = {"runs": {"id", "started_at", "randori_version", "config", "status"},
             "cases": {"key", "run_id", "kind", "suite", "suite_version", "defense", "model", "settings",
                       "repeat", "status"}}


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
    # Adaptive and search attacks: tries run, each one query of the victim agent (the try that
    # succeeded, or the whole budget).
    attack_tries: int | None = None
    # Their attacker model's calls and tokens, summed over the tries (None for other attacks).
    attacker_calls: int | None = None
    attacker_input_tokens: int | None = None
    attacker_output_tokens: int | None = None
    # Of input_tokens (defense_input_tokens): read from the provider's prompt cache, and written to it.
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    defense_cached_input_tokens: int = 0
    defense_cache_write_tokens: int = 0
    # The agent under test ("builtin", a Python callable, an MCP command) and its user-given version.
    agent: str = "builtin"
    agent_version: str | None = None
    # Detector-type defenses: tool outputs judged, by whether they held injected text and whether the
    # defense flagged them (randori.agents.defenses.base.DETECTION_KEYS); None for other defenses.
    detection: dict[str, int] | None = None
    # Attacked cases: the agent made a call the attacker's goal needs with a value the attacker chose
    # (whatever became of it), and a defense stopped such a call. None: unknown or not applicable.
    attack_attempted: bool | None = None
    attack_blocked: bool | None = None
    # Suites of code (TaskSuite.weakness_scan): {"found": {CWE: present?}, "target": CWE the injection
    # asked for, "vectors": vectors that carried attack text}; None for other suites.
    weaknesses: dict[str, Any] | None = None
    # The split the case was selected by ({"name", "seed"}; randori.tasks.splits), None without one.
    split: dict[str, str] | None = None
    # Scenario cases (randori.tasks.scenario): its id; per session, in order, {"task", "utility",
    # "status", "injection_seen"}; and, attacked, the kill chain's four stages (None otherwise).
    scenario: str | None = None
    sessions: list[dict[str, Any]] | None = None
    exposed: bool | None = None
    persisted: bool | None = None
    triggered: bool | None = None
    executed: bool | None = None
    # Whether its user task needs its data (Case.data_directed); None for cases without a user task.
    data_directed: bool | None = None
    # Defenses that ask the user before a call (confirm): approvals asked and refused (None for others).
    approvals_asked: int | None = None
    approvals_refused: int | None = None
    # Stored in `traces`, not in `cases`.
    messages: list[dict[str, Any]] | None = None
    diff: list[dict[str, Any]] | None = None
    injections: dict[str, str] | None = None
    attempts: list[dict[str, Any]] | None = None  # adaptive attacks: every try
    # The parts of the user task's and the attacker's checks that decided them, as sentences
    # (randori.tasks.parts): {"user_task": [...], "injection_task": [...]}; None in older stores.
    checks: dict[str, list[str]] | None = None


_FIELDS = fields(CaseResult)


def _default(decl: str) -> Any:
    """The value a column declared `decl` reads as in a store that lacks it."""
    if "DEFAULT 0" in decl:
        return 0
    _, _, quoted = decl.partition("DEFAULT '")
    return quoted.split("'")[0] if quoted else None


def _pack(obj: Any, secrets: list[str] | None = None) -> bytes:
    text = json.dumps(obj, ensure_ascii=False)
    if secrets:
        text = scrub_secrets(text, secrets)
    return zlib.compress(text.encode(), 3)


def _unpack(blob: bytes | None) -> Any:
    return None if blob is None else json.loads(zlib.decompress(blob))


F = TypeVar("F", bound=Callable[..., Any])


def _explain(path: Path, e: sqlite3.Error) -> StoreError:
    """One line naming the file and what is wrong with it."""
    text = str(e)
    if isinstance(e, sqlite3.DatabaseError) and "not a database" in text:
        return StoreError(f"{path} is not a randori results store (it is not an SQLite database)")
    if "malformed" in text or "corrupt" in text:
        return StoreError(f"{path} is damaged ({text}); move it away and run again, or restore a copy")
    if "unable to open" in text and path.is_dir():
        return StoreError(f"{path} is a directory, not a results store")
    if "readonly" in text or "read-only" in text or (
            "unable to open" in text and not (os.access(path.parent, os.W_OK) and os.access(path, os.W_OK))):
        return StoreError(f"{path} is read-only; `randori run` must write to it and its directory (`randori "
                          "report` and `randori view` can read it as it is)")
    if "locked" in text or "busy" in text:
        return StoreError(f"{path} is locked by another process ({text}); try again when it is done")
    if "unable to open" in text:
        return StoreError(f"cannot open {path} ({text})")
    if "no such table" in text or "no such column" in text:
        return StoreError(f"{path} is not a complete randori store ({text})")
    return StoreError(f"{path}: {text}")


def _guarded(method: F) -> F:
    """SQLite errors from a store method become one StoreError line naming the file."""
    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise _explain(self.path, e) from None
    return wrapper  # type: ignore[return-value]


class Store:
    """`readonly`: open for reading only (report, viewer): nothing is created or changed, and a file
    that is not a store is refused. Otherwise the directory and the store are created if needed
    (unless `create` is false) and a store from an older randori gets its new tables and columns."""

    def __init__(self, results_dir: str | Path, *, create: bool = True, readonly: bool = False):
        self.dir = Path(results_dir)
        self.path = self.dir / STORE_FILE
        self.readonly = readonly
        self._missing: dict[str, dict[str, Any]] = {}
        if not readonly:
            _make_dir(self.dir, create)
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a results store")
        _check_header(self.path)
        try:
            self.conn = connect_readonly(self.path) if readonly else sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as e:
            raise _explain(self.path, e) from None
        self._identity = _file_identity(self.path)
        try:
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA busy_timeout=10000")
            tables = _identify(self.conn, self.path)
            if readonly:
                self._note_missing(tables)
            else:
                self._prepare()
        except BaseException as e:
            self.conn.close()
            if isinstance(e, sqlite3.Error):
                raise _explain(self.path, e) from None
            raise

    def _check_still_there(self) -> None:
        """SQLite goes on writing into a store file that was deleted or replaced under it, and the
        cases would be lost without a word: stop instead."""
        if _file_identity(self.path) != self._identity:
            raise StoreError(f"{self.path} was deleted or replaced during the run; stopping (the cases "
                             "of this run since then are lost: run again to redo them)")

    def _prepare(self) -> None:
        self.conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a killed process (not a power cut) and is much faster than FULL.
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        for table, columns in ADDED_COLUMNS.items():
            have = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
            for name, decl in columns.items():
                if name not in have:
                    self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
        self.conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        self._settle_dead_runs()

    def _note_missing(self, tables: set[str]) -> None:
        """Columns a store from an older randori lacks read as their default (it is not altered)."""
        if not tables:
            raise StoreError(f"{self.path} is empty: it holds no randori results")
        for table, columns in ADDED_COLUMNS.items():
            have = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
            self._missing[table] = {name: _default(decl) for name, decl in columns.items() if name not in have}

    def missing_columns(self) -> list[str]:
        return [f"{t}.{c}" for t, cols in self._missing.items() for c in cols]

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _row(self, table: str, row: sqlite3.Row) -> dict[str, Any]:
        out = dict(row)
        for name, default in self._missing.get(table, {}).items():
            out.setdefault(name, default)
        return out

    # -- runs -----------------------------------------------------------------------------------
    @_guarded
    def start_run(self, config: dict[str, Any]) -> int:
        now = time.time()
        text = scrub_secrets(json.dumps(config, sort_keys=True))
        cur = self.conn.execute(
            "INSERT INTO runs (started_at, randori_version, config, pid, host) VALUES (?, ?, ?, ?, ?)",
            (now, randori.__version__, text, os.getpid(), socket.gethostname()))
        return int(cur.lastrowid or 0)

    @_guarded
    def heartbeat(self, run_id: int) -> None:
        """This run is alive. A run that writes heartbeats is judged dead when they stop (STALE_AFTER)."""
        self.conn.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (time.time(), run_id))

    @_guarded
    def finish_run(self, run_id: int, status: str = "finished") -> None:
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("UPDATE runs SET finished_at = ?, status = ? WHERE id = ?", (time.time(), status, run_id))
            self.conn.execute("DELETE FROM claims WHERE run_id = ?", (run_id,))

    @_guarded
    def runs(self) -> list[dict[str, Any]]:
        """Every run, oldest first; a run that says `running` but whose process is gone (killed) or
        silent for too long shows as `interrupted`."""
        rows = self.conn.execute(
            "SELECT r.*, (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.id) AS cases "
            "FROM runs r ORDER BY r.id").fetchall()
        out = []
        for r in rows:
            row = self._row("runs", r)
            row["config"] = json.loads(row["config"])
            row["status"] = run_status(row)
            out.append(row)
        return out

    def _settle_dead_runs(self) -> None:
        rows = self.conn.execute("SELECT id, status, pid, host, heartbeat_at FROM runs WHERE status = 'running'")
        for r in rows.fetchall():
            if run_status(dict(r)) == "interrupted":
                self.conn.execute("UPDATE runs SET status = 'interrupted', finished_at = COALESCE(heartbeat_at, "
                                  "finished_at) WHERE id = ? AND status = 'running'", (r["id"],))
        self.conn.execute("DELETE FROM claims WHERE run_id NOT IN (SELECT id FROM runs WHERE status = 'running')")

    # -- cases ----------------------------------------------------------------------------------
    @_guarded
    def done_keys(self, keys: Iterable[str] | None = None) -> set[str]:
        """Keys already stored (cases with an error are not done: a resumed run retries them)."""
        rows = self.conn.execute("SELECT key FROM cases WHERE status = 'ok'").fetchall()
        done = {r[0] for r in rows}
        return done if keys is None else done & set(keys)

    @_guarded
    def label_split(self, keys: Iterable[str], split: dict[str, str]) -> None:
        """Record `split` on stored cases that a run with no split stored: a run with --split that finds
        them done does not run them again, and its split is still said of every row it reports."""
        self._check_still_there()
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany("UPDATE cases SET split = ? WHERE key = ? AND split IS NULL",
                                  [(json.dumps(split, sort_keys=True), k) for k in keys])

    @_guarded
    def claim(self, run_id: int, key: str) -> bool:
        """Take case `key` for this run: false if it is done, or another live run has claimed it."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            if self.conn.execute("SELECT 1 FROM cases WHERE key = ? AND status = 'ok'", (key,)).fetchone():
                return False
            holder = self.conn.execute("SELECT run_id FROM claims WHERE key = ?", (key,)).fetchone()
            if holder is not None and holder[0] != run_id and self._alive(holder[0]):
                return False
            self.conn.execute("INSERT OR REPLACE INTO claims (key, run_id, claimed_at) VALUES (?, ?, ?)",
                              (key, run_id, time.time()))
            return True

    def _alive(self, run_id: int) -> bool:
        row = self.conn.execute("SELECT status, pid, host, heartbeat_at FROM runs WHERE id = ?", (run_id,)).fetchone()
        return row is not None and run_status(dict(row)) == "running"

    @_guarded
    def add(self, run_id: int, results: list[CaseResult]) -> None:
        """Store finished cases in one transaction (and release their claims). A retried error case
        replaces its old row. Secrets are scrubbed from every text that is stored."""
        self._check_still_there()
        now = time.time()
        secrets = secret_values()
        with self.conn:
            self.conn.execute("BEGIN")
            for r in results:
                row = {f.name: getattr(r, f.name) for f in _FIELDS}  # asdict would deep-copy traces
                messages, diff, injections = row.pop("messages"), row.pop("diff"), row.pop("injections")
                attempts, checks = row.pop("attempts"), row.pop("checks")
                row["settings"] = json.dumps(row["settings"], sort_keys=True)
                row["attacker_knowledge"] = (json.dumps(row["attacker_knowledge"])
                                             if row["attacker_knowledge"] is not None else None)
                row["detection"] = json.dumps(row["detection"], sort_keys=True) if row["detection"] else None
                row["weaknesses"] = json.dumps(row["weaknesses"], sort_keys=True) if row["weaknesses"] else None
                row["split"] = json.dumps(row["split"], sort_keys=True) if row["split"] else None
                row["sessions"] = json.dumps(row["sessions"]) if row["sessions"] is not None else None
                if row["error_message"] and secrets:
                    row["error_message"] = scrub_secrets(row["error_message"], secrets)
                row["run_id"], row["created_at"] = run_id, now
                cols = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                self.conn.execute(f"INSERT OR REPLACE INTO cases ({cols}) VALUES ({marks})",
                                  tuple(row.values()))
                self.conn.execute("INSERT OR REPLACE INTO traces (key, injections, messages, diff, attempts, checks) "
                                  "VALUES (?, ?, ?, ?, ?, ?)",
                                  (r.key, _pack(injections or {}, secrets), _pack(messages or [], secrets),
                                   _pack(diff or [], secrets), None if attempts is None else _pack(attempts, secrets),
                                   None if checks is None else _pack(checks, secrets)))
                self.conn.execute("DELETE FROM claims WHERE key = ?", (r.key,))

    @_guarded
    def cases(self, where: str = "", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        sql = "SELECT * FROM cases" + (f" WHERE {where}" if where else "")
        return [self._row("cases", r) for r in self.conn.execute(sql, params)]

    def iter_cases(self) -> Iterator[dict[str, Any]]:
        try:
            for r in self.conn.execute("SELECT * FROM cases"):
                yield self._row("cases", r)
        except sqlite3.Error as e:
            raise _explain(self.path, e) from None

    @_guarded
    def trace(self, key: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM traces WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        have = row.keys()
        return {"injections": _unpack(row["injections"]), "messages": _unpack(row["messages"]),
                "diff": _unpack(row["diff"]), "attempts": _unpack(row["attempts"] if "attempts" in have else None),
                "checks": _unpack(row["checks"] if "checks" in have else None)}


def run_status(run: dict[str, Any], now: float | None = None) -> str:
    """A run's status as it stands: `running` only while its process lives (same host) and its
    heartbeat, if it writes one, is recent; otherwise `interrupted`."""
    status = str(run.get("status"))
    if status != "running":
        return status
    now = time.time() if now is None else now
    beat = run.get("heartbeat_at")
    if beat is not None and now - beat > STALE_AFTER:
        return "interrupted"
    if run.get("host") == socket.gethostname() and run.get("pid") and not _process_alive(int(run["pid"])):
        return "interrupted"
    return status


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


SQLITE_HEADER = b"SQLite format 3\x00"


def _check_header(path: Path) -> None:
    # SQLite takes a file shorter than its header for an empty database and would write over it.
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as e:
        raise StoreError(f"cannot read {path}: {e.strerror}") from None
    if head and head != SQLITE_HEADER:
        raise StoreError(f"{path} is not a randori results store (it is not an SQLite database)")


def _make_dir(path: Path, create: bool) -> None:
    if path.exists() and not path.is_dir():
        raise StoreError(f"{path} is a file, not a results directory")
    if not create:
        return
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create the results directory {path}: {e.strerror}") from None


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A connection that can only read `path` (and works in a directory we may not write to)."""
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    # A WAL store in a directory we may not write to: SQLite cannot create its shared-memory file
    # there ("unable to open", or "readonly database" when it cannot even read the WAL index).
    # Immutable mode reads the file as it is (a run writing into it meanwhile is not seen); a file
    # that cannot be read at all fails there with its own message.
    return sqlite3.connect(f"{uri}?immutable=1", uri=True)


def _identify(conn: sqlite3.Connection, path: Path) -> set[str]:
    """The tables of a store; a StoreError for a database that is not randori's."""
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if app not in (0, APPLICATION_ID):
        raise StoreError(f"{path} is another program's SQLite database (application id {app:#x}), not a "
                         "randori store; use another --results directory")
    if app == APPLICATION_ID or not tables:
        return tables
    for table, required in _REQUIRED.items():
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")} if table in tables else set()
        if not required <= have:
            shown = ", ".join(sorted(t for t in tables if not t.startswith("sqlite_"))[:6])
            raise StoreError(f"{path} is another program's SQLite database (tables: {shown}), not a randori "
                             "store; use another --results directory")
    return tables


def open_existing(results_dir: str | Path, *, readonly: bool = False) -> Store:
    """The store in `results_dir` (never created here); a StoreError when there is none."""
    path = Path(results_dir) / STORE_FILE
    if not path.exists():
        raise StoreError(f"no results in {results_dir} (expected {path}); run `randori run` first")
    return Store(results_dir, create=False, readonly=readonly)
