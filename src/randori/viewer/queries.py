"""The SQL behind the viewer's pages. Filtering, counting and paging happen in SQLite, so a page
costs the same on a store of 100 cases or 100,000; only one page of rows ever reaches Python."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from randori.bench.store import connect_readonly, open_existing, run_status
from randori.errors import StoreError
from randori.report.natural import natural_key

# One word per case for colour and filtering. Attacked cases (and denial-of-service cases, whose
# attack succeeds by costing the user their task) are judged first on the attack, then on the
# user's task; cases with no attack only on their task.
OUTCOMES: dict[str, str] = {
    "hijacked": "attack succeeded",
    "resisted": "attack failed, user task done",
    "derailed": "attack failed, user task not done",
    "solved": "no attack, task done",
    "unsolved": "no attack, task not done",
    "error": "provider or internal error (not scored)",
}
OUTCOME_SQL = """CASE
  WHEN status != 'ok' THEN 'error'
  WHEN kind IN ('attacked', 'dos', 'scenario_attacked') AND attack_succeeded THEN 'hijacked'
  WHEN kind IN ('attacked', 'dos', 'scenario_attacked') AND utility THEN 'resisted'
  WHEN kind IN ('attacked', 'dos', 'scenario_attacked') THEN 'derailed'
  WHEN utility THEN 'solved'
  ELSE 'unsolved' END"""
# rowid breaks ties (same tasks, other settings or suite version) so that paging and prev/next are exact.
# Task ids sort naturally (user_task_2 before user_task_10) through the `natsort` collation `connect` adds.
ORDER_COLUMNS = ("suite", "model", "defense", "attack", "kind", "user_task", "injection_task", "repeat", "rowid")
NATURAL = ("user_task", "injection_task")
ORDER = ", ".join(f"{c} COLLATE natsort" if c in NATURAL else c for c in ORDER_COLUMNS)
ORDER_DESC = ", ".join(f"{c} DESC" for c in ORDER.split(", "))
LIST_COLUMNS = ("key, run_id, kind, suite, suite_version, user_task, injection_task, attack, defense, model, "
                "repeat, status, error_category, utility, attack_succeeded, injection_seen, model_calls, "
                "input_tokens, output_tokens, duration_s")
# Columns the pages show as unknown in a store written before them (NULL there too), so such a store
# still opens: how far an attack got.
# Scenario columns too: a store written before scenarios existed has none of them, and is still shown.
OPTIONAL_COLUMNS = ("attack_attempted", "attack_blocked", "scenario", "sessions", "exposed", "persisted",
                    "triggered", "executed")
# Trace columns a page does without (an older store's case page shows no tries, no check parts).
OPTIONAL_TRACE_COLUMNS = ("attempts", "checks")


class BadFilter(ValueError):
    pass


MAX_NUMBER = 2**63 - 1  # SQLite's largest integer


@dataclass(frozen=True)
class Filters:
    """What the cases page shows; every field is a query parameter of the same name."""

    suite: str = ""
    model: str = ""
    attack: str = ""
    defense: str = ""
    outcome: str = ""
    kind: str = ""
    run: int | None = None
    user_task: str = ""
    injection_task: str = ""
    page: int = 1
    view: str = "grid"

    @classmethod
    def parse(cls, params: Any) -> Filters:
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = params.get(f.name, "")
            if raw in ("", None):
                continue
            if f.name in ("run", "page"):
                try:
                    values[f.name] = int(raw)
                except ValueError:
                    raise BadFilter(f"{f.name} must be a whole number, not {raw!r}") from None
                # A number SQLite cannot hold names nothing in the store: as good as a missing run
                values[f.name] = max(-MAX_NUMBER, min(values[f.name], MAX_NUMBER))
            else:
                values[f.name] = str(raw)
        out = cls(**values)
        if out.outcome and out.outcome not in OUTCOMES:
            raise BadFilter(f"unknown outcome {out.outcome!r} (one of {', '.join(OUTCOMES)})")
        if out.view not in ("grid", "list"):
            raise BadFilter("view is grid or list")
        if out.page < 1:
            raise BadFilter("page starts at 1")
        return out

    def where(self) -> tuple[str, list[Any]]:
        clauses, params = [], []
        # The attack filter value "-" selects cases with no attack (benign, injection task alone).
        for col in ("suite", "model", "defense", "kind", "user_task", "injection_task"):
            value = getattr(self, col)
            if value:
                clauses.append(f"{col} = ?")
                params.append(value)
        if self.attack == "-":
            clauses.append("attack IS NULL")
        elif self.attack:
            clauses.append("attack = ?")
            params.append(self.attack)
        if self.run is not None:
            clauses.append("run_id = ?")
            params.append(self.run)
        if self.outcome:
            clauses.append(f"({OUTCOME_SQL}) = ?")
            params.append(self.outcome)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def query(self, **changes: Any) -> str:
        """This filter as a query string, with `changes` applied and defaults left out."""
        f = replace(self, **changes)
        defaults = Filters()
        pairs = {x.name: getattr(f, x.name) for x in fields(f) if getattr(f, x.name) != getattr(defaults, x.name)}
        return urlencode(pairs)

    @property
    def active(self) -> bool:
        return any(getattr(self, n) for n in ("suite", "model", "attack", "defense", "outcome", "kind",
                                              "user_task", "injection_task")) or self.run is not None


def prepare(results_dir: Path) -> Path:
    """The store's path, once it is known to be a randori store the viewer can read. The viewer never
    changes a store, so one from an older randori that lacks a column the pages need is refused."""
    optional = {f"cases.{c}" for c in OPTIONAL_COLUMNS} | {f"traces.{c}" for c in OPTIONAL_TRACE_COLUMNS}
    with open_existing(results_dir, readonly=True) as store:
        missing = [c for c in store.missing_columns() if not c.startswith("runs.") and c not in optional]
    if missing:
        raise StoreError(f"{store.path} was written by an older randori (it has no {', '.join(missing)}); any "
                         f"`randori run --results {results_dir}` adds them")
    return store.path


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    # Read-only: the viewer can run next to a benchmark that is still writing (WAL allows both).
    # One connection per request: requests run in a thread pool and connections are cheap.
    conn = connect_readonly(path)
    try:
        conn.create_collation("natsort", _natural_cmp)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout=5000")
        yield conn
    finally:
        conn.close()


def _natural_cmp(a: str, b: str) -> int:
    ka, kb = natural_key(a), natural_key(b)
    return (ka > kb) - (ka < kb)


def optional_columns(conn: sqlite3.Connection) -> str:
    """The optional columns for a SELECT list: each itself, or NULL under its name where the store lacks it."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(cases)")}
    return ", ".join(c if c in have else f"NULL AS {c}" for c in OPTIONAL_COLUMNS)


def cases_table(conn: sqlite3.Connection) -> str:
    """`cases`, or in a store that lacks an optional column, cases with it as NULL."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(cases)")}
    missing = [f"NULL AS {c}" for c in OPTIONAL_COLUMNS if c not in have]
    return f"(SELECT *, {', '.join(missing)} FROM cases)" if missing else "cases"


def runs(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    counts = {r["run_id"]: dict(r) for r in conn.execute(
        f"SELECT run_id, COUNT(*) AS cases, SUM(status != 'ok') AS errors, "
        f"SUM(({OUTCOME_SQL}) = 'hijacked') AS hijacked FROM cases GROUP BY run_id")}
    # A code-track run stores tasks (one row per round) in code_results, not cases.
    tasks = {r[0]: r[1] for r in conn.execute(
        "SELECT run_id, COUNT(DISTINCT key) FROM code_results GROUP BY run_id")} if has_code(conn) else {}
    out = []
    for r in conn.execute("SELECT * FROM runs ORDER BY id DESC"):
        row = dict(r)
        row["config"] = json.loads(row["config"] or "{}")
        row["status"] = run_status(row)
        row.update({k: v for k, v in counts.get(row["id"], {"cases": 0, "errors": 0, "hijacked": 0}).items()
                    if k != "run_id"})
        row["tasks"] = tasks.get(row["id"], 0)
        row["code"] = row["config"].get("track") == "code" or (not row["cases"] and row["tasks"] > 0)
        out.append(row)
    return out


def groups(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Counts per (suite version, model, defense, attack, kind): the way into the grid."""
    sql = ("SELECT suite, suite_version, model, defense, attack, kind, COUNT(*) AS cases, "
           "SUM(status != 'ok') AS errors, SUM(status = 'ok') AS scored, "
           "SUM(status = 'ok' AND utility) AS utility, SUM(status = 'ok' AND attack_succeeded) AS hijacked, "
           # utility under attack: the user task done and the attacker's goal not reached
           "SUM(status = 'ok' AND utility AND NOT attack_succeeded) AS kept, "
           # how far attacks got, over the cases that know it
           "SUM(status = 'ok' AND attack_attempted) AS attempted, SUM(status = 'ok' AND attack_blocked) AS blocked, "
           "SUM(status = 'ok' AND attack_attempted IS NOT NULL) AS known "
           f"FROM {cases_table(conn)} GROUP BY suite, suite_version, model, defense, attack, kind "
           "ORDER BY suite, model, defense, attack, suite_version, kind")
    return [dict(r) for r in conn.execute(sql)]


def facets(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """The values each filter can take."""
    out = {col: sorted((r[0] for r in conn.execute(f"SELECT DISTINCT {col} FROM cases WHERE {col} IS NOT NULL")),
                       key=natural_key)
           for col in ("suite", "model", "defense", "attack", "kind", "user_task", "injection_task")}
    out["run"] = [str(r[0]) for r in conn.execute("SELECT id FROM runs ORDER BY id DESC")]
    return out


def outcome_counts(conn: sqlite3.Connection, f: Filters) -> dict[str, int]:
    where, params = replace(f, outcome="").where()
    counts = dict(conn.execute(f"SELECT {OUTCOME_SQL} AS o, COUNT(*) FROM cases{where} GROUP BY o", params).fetchall())
    return {o: counts.get(o, 0) for o in OUTCOMES}


def page(conn: sqlite3.Connection, f: Filters, size: int) -> tuple[list[dict[str, Any]], int]:
    """One page of cases in a stable order, and the number of cases matching the filter."""
    where, params = f.where()
    total = conn.execute(f"SELECT COUNT(*) FROM cases{where}", params).fetchone()[0]
    rows = conn.execute(f"SELECT {LIST_COLUMNS}, {optional_columns(conn)}, {OUTCOME_SQL} AS outcome FROM cases{where} "
                        f"ORDER BY {ORDER} "
                        "LIMIT ? OFFSET ?", [*params, size, (f.page - 1) * size]).fetchall()
    return [dict(r) for r in rows], total


def case(conn: sqlite3.Connection, key: str) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT *, {OUTCOME_SQL} AS outcome FROM cases WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    out = {c: None for c in OPTIONAL_COLUMNS} | dict(row)
    for col in ("settings", "attacker_knowledge", "sessions"):
        out[col] = json.loads(out[col]) if out[col] else None
    return out


def stored_goal(conn: sqlite3.Connection, c: dict[str, Any]) -> str | None:
    """The goal of case `c`'s injection task as the run that made it recorded it (a plugin's suites
    are not imported to show a case)."""
    row = conn.execute("SELECT config FROM runs WHERE id = ?", (c["run_id"],)).fetchone()
    goals = json.loads(row[0] or "{}").get("goals", {}) if row else {}
    return goals.get(f"{c['suite']}@{c['suite_version']}", {}).get(c["injection_task"])


def trace(conn: sqlite3.Connection, key: str) -> dict[str, Any] | None:
    import zlib

    # SELECT *: stores written by older versions lack later columns (attempts of adaptive attacks).
    row = conn.execute("SELECT * FROM traces WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    return {k: json.loads(zlib.decompress(row[k])) if row[k] is not None else None
            for k in row.keys() if k != "key"}


def neighbours(conn: sqlite3.Connection, f: Filters, key: str) -> tuple[str | None, str | None]:
    """The cases before and after `key` in the filtered order (for prev/next links)."""
    where, params = f.where()
    me = conn.execute(f"SELECT {ORDER} FROM cases WHERE key = ?", (key,)).fetchone()
    if me is None:
        return None, None
    cols = ORDER_COLUMNS
    # Row-value comparison follows the same ORDER BY; NULLs sort first in SQLite, as IS NULL handles.
    tuple_sql = "(" + ", ".join(f"coalesce({c}, '')" + (" COLLATE natsort" if c in NATURAL else "")
                                for c in cols) + ")"
    mine = [("" if v is None else v) for v in me]
    marks = "(" + ", ".join("?" for _ in cols) + ")"
    joiner = " AND " if where else " WHERE "
    prev_row = conn.execute(f"SELECT key FROM cases{where}{joiner}{tuple_sql} < {marks} ORDER BY {ORDER_DESC} LIMIT 1",
                            [*params, *mine]).fetchone()
    next_row = conn.execute(f"SELECT key FROM cases{where}{joiner}{tuple_sql} > {marks} ORDER BY {ORDER} LIMIT 1",
                            [*params, *mine]).fetchone()
    return (prev_row[0] if prev_row else None), (next_row[0] if next_row else None)


# -- the code track (randori.code.store): one row per task, repeat and round -----------------------
CODE_CONFIG = ("dataset", "dataset_version", "model", "prompt", "max_rounds", "fuzz", "analyzers")
_CODE_VERDICTS = ("parses", "functional", "security", "tests_pass", "both", "static_flagged", "fuzz_flagged")


def has_code(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'code_results'").fetchone() \
        is not None


def code_tasks(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Per configuration, its tasks (natural order of ids): round 0's verdicts, the final round's,
    rounds used and status. Code, replies and test messages stay on the task's page."""
    if not has_code(conn):
        return []
    cols = ", ".join(("key", "round", "final", "task_id", "cwe", "repeat", "status", "error_category",
                      *CODE_CONFIG, *_CODE_VERDICTS))
    tasks: dict[str, dict[str, Any]] = {}
    for r in conn.execute(f"SELECT {cols} FROM code_results ORDER BY key, round"):
        row = dict(r)
        task = tasks.setdefault(row["key"], {**{k: row[k] for k in ("key", "task_id", "cwe", "repeat", "status",
                                                                      "error_category", *CODE_CONFIG)},
                                             "first": row, "final": row, "rounds": 0})
        task["rounds"] += 1
        if row["final"]:
            task["final"] = row
    configs: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for t in tasks.values():
        configs.setdefault(tuple(t[k] for k in CODE_CONFIG), []).append(t)
    return [{**dict(zip(CODE_CONFIG, config, strict=True)),
             "tasks": sorted(members, key=lambda t: (natural_key(t["task_id"]), t["repeat"]))}
            for config, members in sorted(configs.items(), key=lambda kv: str(kv[0]))]


def code_task(conn: sqlite3.Connection, key: str) -> list[dict[str, Any]]:
    """Every round of one task, with its code, findings and test results."""
    if not has_code(conn):
        return []
    from randori.code.store import decode

    return [decode(dict(r)) for r in conn.execute("SELECT * FROM code_results WHERE key = ? ORDER BY round", (key,))]
