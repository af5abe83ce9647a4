import os
import subprocess
import sys


def randori(*args, env=None, timeout=120, **kw):
    """Run the CLI as a user would, in a child process."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    full_env.pop("RANDORI_MODEL", None) if "RANDORI_MODEL" not in (env or {}) else None
    return subprocess.run([sys.executable, "-m", "randori", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, **kw)
