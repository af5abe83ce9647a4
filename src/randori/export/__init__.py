"""`randori export`: a results store in the formats the field already reads.

One module per format; each reads cases only through the store and rates only through the report's
tables, so an exported number is the number `randori report --format json` prints.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from randori.errors import UserError
from randori.export.source import open_results

# format -> module of this package with `export(results, out) -> str` (a one-line summary)
FORMATS = {"inspect": "inspect_logs", "eee": "eee", "parquet": "parquet", "otel-json": "otel"}


def export(results: str | Path, fmt: str, out: str | Path, all_versions: bool = False) -> str:
    """Write the cases in `results` as `fmt` to `out`; returns what was written, in one line."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format '{fmt}' for --format (use {', '.join(FORMATS)})")
    module = importlib.import_module(f"randori.export.{FORMATS[fmt]}")
    with open_results(results, all_versions) as loaded:
        summary = str(module.export(loaded, out))
    if loaded.dropped:
        summary += f"\n({loaded.dropped} cases of other suite versions left out; use --all-versions)"
    return summary
