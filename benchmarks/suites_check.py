"""Wall time of `randori suites check` on every installed suite (target: under 35 s on 2 cores), and
how many variants each validity rule tried across the suites.

Runs the installed console script as a user does and parses its "held/tried" lines."""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    exe = shutil.which("randori") or str(Path(sys.executable).with_name("randori"))
    walls = []
    for _ in range(args.runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        out = subprocess.run([exe, "suites", "check"], capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"suites check: {walls[-1]:.1f} s wall, {cpu:.1f} s CPU, exit {out.returncode}")
    text = " ".join(line.strip() for line in out.stdout.splitlines())
    tried: Counter[str] = Counter()
    held: Counter[str] = Counter()
    for rule, h, t in re.findall(r"(\w+) (\d+)/(\d+)", text):
        held[rule] += int(h)
        tried[rule] += int(t)
    for rule in tried:
        print(f"  {rule:24} {held[rule]:6} held of {tried[rule]:6} tried")
    best = min(walls)
    print(f"best wall time {best:.1f} s (target < 35 s -> {'OK' if best < 35 else 'MISSED'})")


if __name__ == "__main__":
    main()
