import os
import subprocess
import sys


def randori(*args, env=None, timeout=120, **kw):
    """Run the CLI as a user would, in a child process."""
    full_env = {**os.environ, "COLUMNS": "200"}
    full_env.pop("RANDORI_MODEL", None)  # a developer's own default model must not change what tests run
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "randori", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, **kw)
