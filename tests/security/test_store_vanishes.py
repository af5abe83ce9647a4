"""A store deleted during a run stops the run with status 2 and one line, instead of a run that
ends well, prints a summary and leaves `randori report` with nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.fakes.openai_server import FakeOpenAIServer


def test_a_store_deleted_during_a_run_stops_it_with_one_line(tmp_path):
    results = tmp_path / "results"
    store = results / "randori.sqlite"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "COLUMNS": "200"}
    env.pop("RANDORI_MODEL", None)
    with FakeOpenAIServer(lambda request: "Nothing to do.", latency=0.3) as server:
        proc = subprocess.Popen([sys.executable, "-m", "randori", "run", "-s", "banking", "--no-attack", "-m",
                                 "openai/fake", "--base-url", server.base_url, "-r", str(results),
                                 "--concurrency", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, text=True)
        while not server.requests and proc.poll() is None:
            time.sleep(0.05)
        for f in results.glob("randori.sqlite*"):
            f.unlink()
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, (out, err)
    lines = [ln for ln in err.splitlines() if ln.startswith("randori: error:")]
    assert len(lines) == 1 and "deleted or replaced" in lines[0] and str(store) in lines[0]
    assert "Traceback" not in err and "Next:" not in out
