"""What the executor tests share: the in-process reference store of every case of the six suites
with scripted/gullible, a case-by-case view of a store, and a fake server that counts requests in
flight."""

from __future__ import annotations

import sqlite3
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAIServer
from tests.helpers import randori

# Everything a case's outcome is: its verdicts, its cost in calls and tokens, its trace and state change.
OUTCOME = ("kind", "suite", "suite_version", "user_task", "injection_task", "attack", "defense", "model",
           "status", "error_category", "utility", "attack_succeeded", "injection_seen", "model_calls",
           "input_tokens", "output_tokens")


def run_all(results: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    """`randori run` of every suite with scripted/gullible (benign, injection alone and attacked)."""
    r = randori("run", "-m", "scripted/gullible", "--results", str(results), *extra, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def outcomes(results: Path) -> dict[str, tuple[Any, ...]]:
    con = sqlite3.connect(results / "randori.sqlite")
    try:
        rows = con.execute(f"SELECT c.key, {', '.join('c.' + f for f in OUTCOME)}, t.messages, t.diff, t.injections "
                           "FROM cases c JOIN traces t ON t.key = c.key").fetchall()
    finally:
        con.close()
    return {r[0]: (*r[1:-3], *(zlib.decompress(b) for b in r[-3:])) for r in rows}


class CountingServer(FakeOpenAIServer):
    """Answers after `latency` seconds and remembers the most requests it held at once."""

    def __init__(self, policy: Any, latency: float):
        self.in_flight = 0
        self.most = 0
        self.guard = threading.Lock()
        self.hold = latency

        def counted(request: dict[str, Any]) -> Any:
            with self.guard:
                self.in_flight += 1
                self.most = max(self.most, self.in_flight)
            try:
                time.sleep(self.hold)
                return policy(request)
            finally:
                with self.guard:
                    self.in_flight -= 1

        super().__init__(counted, record=False)
