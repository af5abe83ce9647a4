"""How fast are the viewer's pages and the HTML report on a large store?

Builds a store of N cases (default 10,000): one real scripted run of the banking suite, whose cases
and traces are then copied under other model and defense names with varied outcomes, so every page
has realistic rows and traces. Then serves the viewer on 127.0.0.1 with uvicorn and times each main
page over real HTTP, and times `report --format json` and `--html` in process.

    .venv/bin/python benchmarks/viewer_pages.py [--cases 10000] [--repeat 20] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import statistics
import tempfile
import threading
import time
from dataclasses import fields
from pathlib import Path

import httpx

from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, run_cases
from randori.bench.store import CaseResult, Store
from randori.suites import get_suite


def build_store(directory: Path, n_cases: int, seed: int = 7) -> float:
    t0 = time.perf_counter()
    suite = get_suite("banking")
    model = get_model("scripted/gullible", ModelSettings())
    cases = plan(Selection(suites=[suite], model=model, attacks=["important_instructions", "direct"]))
    with Store(directory) as store:
        run_id = store.start_run({"model": model.name, "suites": [f"{suite.name}@{suite.version}"],
                                  "attacks": ["important_instructions", "direct"], "defenses": ["none"],
                                  "argv": ["run", "(benchmark seed run)"]})
        asyncio.run(run_cases(cases, {suite.name: suite}, model, store, run_id))
        store.finish_run(run_id)
        base = store.cases()
        traces = {r["key"]: store.trace(r["key"]) for r in base}
        rng = random.Random(seed)
        names = {f.name for f in fields(CaseResult)}
        copy_run = store.start_run({"model": "bench/*", "suites": [f"{suite.name}@{suite.version}"],
                                    "attacks": ["important_instructions", "direct"],
                                    "defenses": ["none", "delimiters", "tool_filter"],
                                    "argv": ["(synthetic copies for the benchmark)"]})
        batch: list[CaseResult] = []
        i = 0
        while len(base) + i < n_cases:
            src = base[i % len(base)]
            row = {k: v for k, v in src.items() if k in names}
            variant = i // len(base)
            row.update(key=f"{src['key'][:20]}{i:012d}", model=f"bench/model-{variant % 6}",
                       defense=("none", "delimiters", "tool_filter")[variant % 3], repeat=variant,
                       settings={"temperature": 0.0})
            row["attacker_knowledge"] = None
            if row["kind"] == "attacked":
                row["attack_succeeded"] = rng.random() < 0.35
                row["utility"] = rng.random() < 0.6
            if rng.random() < 0.02:
                row.update(status="error", error_category="rate_limit", error_message="429 after 4 retries",
                           utility=None, attack_succeeded=None)
            tr = traces[src["key"]] or {}
            batch.append(CaseResult(**row, messages=tr.get("messages"), diff=tr.get("diff"),
                                    injections=tr.get("injections")))
            i += 1
            if len(batch) >= 1000:
                store.add(copy_run, batch)
                batch = []
        if batch:
            store.add(copy_run, batch)
        store.finish_run(copy_run)
        total = store.conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
    print(f"store: {total} cases in {directory} (built in {time.perf_counter() - t0:.1f} s)")
    return time.perf_counter() - t0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(directory: Path, port: int) -> tuple[object, threading.Thread]:
    import uvicorn

    from randori.viewer.app import create_app

    server = uvicorn.Server(uvicorn.Config(create_app(directory), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    return server, thread


def time_pages(base: str, key: str, repeat: int) -> None:
    pages = {
        "runs (/)": "/",
        "grid, page 1": "/cases",
        "grid, page 5": "/cases?page=5",
        "list, page 50": "/cases?view=list&page=50",
        "filtered grid (model+attack+outcome)": "/cases?model=bench/model-3&attack=direct&outcome=hijacked",
        "filtered list (defense+kind)": "/cases?defense=tool_filter&kind=attacked&view=list&page=3",
        "one case": f"/case/{key}",
        "one case, in a filter": f"/case/{key}?outcome=hijacked",
    }
    print(f"\n{'page':42} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'KiB':>7}")
    with httpx.Client(base_url=base, timeout=30) as client:
        for name, url in pages.items():
            times, size = [], 0
            for _ in range(repeat):
                t0 = time.perf_counter()
                r = client.get(url)
                times.append(1000 * (time.perf_counter() - t0))
                r.raise_for_status()
                size = len(r.content)
            times.sort()
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            print(f"{name:42} {statistics.median(times):10.1f} {p95:8.1f} {times[-1]:8.1f} {size / 1024:7.0f}")


def time_report(directory: Path) -> None:
    from randori.report.html import render_html
    from randori.report.tables import export_tables
    from randori.report.versions import current_rows

    t0 = time.perf_counter()
    with Store(directory, create=False) as store:
        rows = list(store.iter_cases())
        runs = store.runs()
    kept, dropped = current_rows(rows)
    t1 = time.perf_counter()
    tables = export_tables(kept, directory)
    t2 = time.perf_counter()
    html = render_html(kept, results_dir=directory, excluded=dropped, runs=runs, tables=tables)
    t3 = time.perf_counter()
    print(f"\nreport: load {len(rows)} cases {1000 * (t1 - t0):.0f} ms, tables (json/csv) {1000 * (t2 - t1):.0f} ms, "
          f"HTML with figures {1000 * (t3 - t2):.0f} ms ({len(html) // 1024} KiB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=20, help="requests per page")
    ap.add_argument("--keep", type=Path, help="build the store here and keep it (default: a temp dir)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.keep or Path(tmp)
        if not (directory / "randori.sqlite").exists():
            build_store(directory, args.cases)
        with Store(directory, create=False) as store:
            key = store.conn.execute("SELECT key FROM cases WHERE kind = 'attacked' AND attack_succeeded "
                                     "ORDER BY key DESC LIMIT 1").fetchone()[0]
        port = free_port()
        server, thread = serve(directory, port)
        try:
            time_pages(f"http://127.0.0.1:{port}", key, args.repeat)
        finally:
            server.should_exit = True  # type: ignore[attr-defined]
            thread.join(timeout=10)
        time_report(directory)


if __name__ == "__main__":
    main()
