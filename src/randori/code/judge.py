"""`randori.code.judge` is documented as the judge's API; the judge lives in `randori.sandbox.judge`."""

from randori.sandbox.judge import NeedsSharedProcess, judge

__all__ = ["NeedsSharedProcess", "judge"]
