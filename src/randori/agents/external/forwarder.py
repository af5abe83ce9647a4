"""`--agent-network none`: the first process of an agent's container, which has loopback only. It
listens on 127.0.0.1:PORT there, forwards each connection to the case's MCP server through the Unix
socket SOCKET (bound into the container), runs the agent's command as its child and exits with the
agent's status. Standard library only; never imports randori.

    python forwarder.py SOCKET PORT -- COMMAND ARGS...
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading


def pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


def main(argv: list[str]) -> int:
    path, port, sep, *command = argv
    assert sep == "--" and command, __doc__
    listener = socket.create_server(("127.0.0.1", int(port)))
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
    agent = subprocess.Popen(command)
    code = agent.wait()
    return 128 + signal.Signals(-code).value if code < 0 else code


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))
