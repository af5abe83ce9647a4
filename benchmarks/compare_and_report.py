"""How long do `randori compare` and the compact report take on a large store?

Writes a synthetic store (no traces: neither command reads them) of D defenses x M models x S suites
of U user tasks x I injection tasks under one attack, plus benign cases, with outcomes drawn at
random per defense; then times, in process, loading the rows, `compare` by defense (each against
none, Holm), the compact report's text and pivot, and the CLI end to end (`randori compare` and
`randori report`, each a fresh process).

    .venv/bin/python benchmarks/compare_and_report.py [--defenses 5] [--models 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from randori.bench.store import CaseResult, Store
from randori.report.compact import render, render_pivot
from randori.report.compare import Request, compare
from randori.report.metrics import summarize

SUITES = (("workspace", 40, 14), ("travel", 20, 7), ("banking", 16, 9), ("chat", 21, 5))


def build(directory: Path, defenses: int, models: int, seed: int = 3) -> int:
    rng = random.Random(seed)
    names = ["none", *(f"defense_{i}" for i in range(1, defenses))]
    rows: list[CaseResult] = []
    for m in range(models):
        for d, defense in enumerate(names):
            asr = 0.5 / (1 + d)  # each defense a little better than the one before
            for suite, users, injs in SUITES:
                common = {"suite": suite, "suite_version": "1.0.0", "defense": defense, "model": f"bench/m{m}",
                          "settings": {}, "repeat": 0, "status": "ok", "model_calls": 3, "input_tokens": 9000,
                          "output_tokens": 200}
                for u in range(users):
                    rows.append(CaseResult(key=f"{m}-{defense}-{suite}-b{u}", kind="benign",
                                           user_task=f"user_task_{u}", injection_task=None, attack=None,
                                           utility=rng.random() < 0.8, **common))
                    for i in range(injs):
                        hit = rng.random() < asr
                        rows.append(CaseResult(key=f"{m}-{defense}-{suite}-{u}-{i}", kind="attacked",
                                               user_task=f"user_task_{u}", injection_task=f"injection_task_{i}",
                                               attack="important_instructions", utility=rng.random() < 0.7,
                                               attack_succeeded=hit, injection_seen=True, **common))
    with Store(directory) as store:
        run = store.start_run({"model": "bench", "argv": ["(synthetic benchmark store)"]})
        store.add(run, rows)
        store.finish_run(run)
    return len(rows)


def timed(label: str, fn) -> object:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    print(f"  {label:44} {time.perf_counter() - t0:7.3f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--defenses", type=int, default=5)
    ap.add_argument("--models", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="build the store here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.keep or Path(tmp) / "store"
        n = timed("build the store", lambda: build(directory, args.defenses, args.models))
        print(f"  {n:,} cases: {args.models} models x {args.defenses} defenses x {len(SUITES)} suites")
        with Store(directory, readonly=True) as store:
            rows = timed("load every row", lambda: list(store.iter_cases()))
        result = timed("compare by defense (each against none)", lambda: compare(rows, Request("defense")))
        print(f"    {len(result['comparisons'])} comparisons (metric x suite x group x defense)")
        summary = timed("summarize (the report's rates)", lambda: summarize(rows))
        timed("compact table and pivot (text)", lambda: render(summary) + render_pivot(summary))
        env_cmd = [sys.executable, "-m", "randori"]
        timed("`randori compare --by defense` (process)", lambda: subprocess.run(
            [*env_cmd, "compare", "-r", str(directory), "--by", "defense", "--all-versions"], capture_output=True,
            check=True))
        timed("`randori report` (process)", lambda: subprocess.run(
            [*env_cmd, "report", "-r", str(directory), "--all-versions"], capture_output=True, check=True))


if __name__ == "__main__":
    main()
