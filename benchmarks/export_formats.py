"""How long `randori export` takes per format, and how large its output is, on a scripted store.

Builds a store with `randori run` (scripted/gullible and scripted/oracle, defenses none and detector,
every suite unless `--suite`), then times each export in-process (the import of the format's package
included, once) and prints seconds, cases per second and bytes written.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--suite", action="append", default=[], help="suites to run (default: all)")
    args = ap.parse_args()
    from randori.export import FORMATS, export
    from randori.export.source import open_results

    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results"
        run = [sys.executable, "-m", "randori", "run", "-m", "scripted/gullible", "-m", "scripted/oracle",
               "-d", "none", "-d", "detector", "-r", str(results), *(a for s in args.suite for a in ("-s", s))]
        t0 = time.perf_counter()
        subprocess.run(run, check=True, capture_output=True)
        with open_results(results) as loaded:
            n = len(loaded.rows)
        print(f"store: {n} cases, built in {time.perf_counter() - t0:.1f} s")
        print(f"{'format':<10} {'seconds':>8} {'cases/s':>9} {'MB out':>8}")
        for fmt in FORMATS:
            out = Path(tmp) / ("spans.jsonl" if fmt == "otel-json" else fmt)
            t0 = time.perf_counter()
            export(results, fmt, out)
            dt = time.perf_counter() - t0
            print(f"{fmt:<10} {dt:>8.1f} {n / dt:>9.0f} {size(out) / 1e6:>8.1f}")


if __name__ == "__main__":
    main()
