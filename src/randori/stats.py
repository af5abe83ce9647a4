"""A success rate with its Wilson 95% score interval: the statistics every report of either track shows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Rate:
    successes: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.successes / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.successes, self.n)

    def as_dict(self) -> dict[str, Any]:
        lo_hi = self.interval
        return {"rate": self.rate, "low": lo_hi[0] if lo_hi else None,
                "high": lo_hi[1] if lo_hi else None, "successes": self.successes, "n": self.n}


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
