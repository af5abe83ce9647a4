"""A fake installed distribution for plugin tests: files on PYTHONPATH and an entry_points.txt."""

from __future__ import annotations

import os
from pathlib import Path

NOTES_DATA = {"environment.yaml": "notes:\n  - '{note}'\n",
              "vectors.yaml": "note:\n  description: a note\n  default: hi\n"}


def plugin_site(root: Path, dist: str, entry_points: str, files: dict[str, str]) -> dict[str, str]:
    """Writes `files` (relative path -> text) under `root` and a distribution `dist` registering
    `entry_points` (entry_points.txt text); returns the environment that installs them."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}


def notes_data(folder: str) -> dict[str, str]:
    """A notes suite's data files in `folder`."""
    return {f"{folder}/{name}": text for name, text in NOTES_DATA.items()}
