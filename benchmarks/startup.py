"""Start-up time of `randori --help` (target under 0.5 s): heavy libraries must be imported lazily.

Prints the median and the best of N runs of the installed console script."""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    exe = shutil.which("randori") or str(__import__("pathlib").Path(sys.executable).with_name("randori"))
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run([exe, "--help"], stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    median = statistics.median(times)
    print(f"randori --help: median {median:.3f} s, best {min(times):.3f} s over {args.runs} runs "
          f"(target < 0.5 s -> {'OK' if median < 0.5 else 'MISSED'})")


if __name__ == "__main__":
    main()
