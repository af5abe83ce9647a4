"""A real Ray cluster on loopback for the executor tests: `ray start --head --block` in a process
group of its own, every port chosen free (other Ray clusters may run on this machine), its own
temporary directory and authentication token (`auth_env()`: Ray reads it once, so a client process
must have it in its environment before Ray is imported), and stopped by ending that process group
(never `ray stop`, which would end every Ray cluster of the machine)."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_ports(n: int) -> list[int]:
    """`n` different free ports: each stays bound until all are chosen (a port closed at once may be
    handed out again by the next bind, and Ray refuses a port given to two of its components)."""
    held: list[socket.socket] = []
    try:
        for _ in range(n):
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def auth_env() -> dict[str, str]:
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


class RayCluster:
    def __init__(self, env: dict[str, str], cpus: int = 2):
        self.cpus = cpus
        self.proc: subprocess.Popen[bytes] | None = None
        self.temp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
        self.address = ""
        # Its own token (clients need it too), not ~/.ray/auth_token, which other clusters share.
        self.env = env

    def __enter__(self) -> RayCluster:
        port, objects, nodes, agent, agent_grpc, runtime_env, metrics = free_ports(7)
        ray = str(Path(sys.executable).with_name("ray"))
        args = [ray, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
                "--num-cpus", str(self.cpus), "--include-dashboard", "false", "--disable-usage-stats",
                "--temp-dir", self.temp, "--object-manager-port", str(objects), "--node-manager-port", str(nodes),
                "--dashboard-agent-listen-port", str(agent), "--dashboard-agent-grpc-port", str(agent_grpc),
                "--runtime-env-agent-port", str(runtime_env), "--metrics-export-port", str(metrics)]
        env = {**os.environ, **self.env}
        self.log = open(os.path.join(self.temp, "start.log"), "wb")  # noqa: SIM115 (closed in __exit__)
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start failed:\n{Path(self.log.name).read_text()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.5)
        else:
            self.__exit__()
            raise RuntimeError("the Ray cluster did not start within 180 s")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)  # --block: ray start stops the processes it started
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # anything of this cluster still in its group
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        self.log.close()
        shutil.rmtree(self.temp, ignore_errors=True)
