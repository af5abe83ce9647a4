"""The program that runs inside the sandbox. `randori.code.sandbox` starts it as
`python -I [-S] _sandbox_child.py --serve FD`, a fork server that handles each job (JSON over a Unix
socket) in a fresh fork, or without `--serve` for one job read from stdin (result on stdout). It
must not import randori (it runs before privileges are dropped, and the code under test must not
see the harness), so it uses the standard library only and keeps its imports few: start-up time
is most of a sandboxed run's cost.

Process layout (namespace mode, the default when running as root or with user namespaces):

    supervisor (this program, outside the new PID namespace, in new mount + network namespaces)
      └── init (PID 1 of a new PID namespace: mounts a private /tmp, /dev/shm, /proc, reaps)
            └── worker (unprivileged uid, rlimits, cwd = fresh copy of the fixtures): runs the
                code and the tests in ONE module namespace, streams outcomes on a pipe

When init exits, the kernel kills every process left in its PID namespace, including daemons that
called setsid() and double-forked: that is what makes clean-up complete. The supervisor enforces
the wall-clock limit by killing init. Without namespaces (process mode) the supervisor makes itself
a child subreaper, so orphaned descendants are re-parented to it and can be found and killed.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import sys
import time

# The child must start fast: `typing` is only imported by type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38
RESULT_FD = 1000  # far from the low fds the code under test is likely to touch
OUTPUT_CAP = 64 * 1024
WORK = "/tmp/work"
UID_BASE = 1_000_000

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    _check(_libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def _prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl {option}")


# -- namespace set-up ---------------------------------------------------------------------------

def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def _map_user(uid: int, gid: int) -> None:
    """In an unprivileged user namespace, become root of the namespace (mapped to our own uid)."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"0 {gid} 1")


def _expose(paths: list[str]) -> None:
    """Make each path traversable for an unprivileged uid without exposing its siblings.

    The interpreter may live under a private directory (e.g. /root/.pyenv with /root mode 700);
    after dropping privileges the worker could not import the standard library. For every ancestor
    that others cannot enter, mount an empty tmpfs over it and bind back only the child we need.
    This also hides everything else in that directory (credentials in /root, for instance)."""
    needed: dict[str, set[str]] = {}
    for path in paths:
        parts = os.path.abspath(path).strip("/").split("/")
        for i in range(1, len(parts)):
            parent = "/" + "/".join(parts[:i])
            try:
                mode = os.stat(parent).st_mode
            except OSError:
                break
            if not mode & 0o001:
                needed.setdefault(parent, set()).add(parent + "/" + parts[i])
    # Open every child before mounting anything: a tmpfs over a parent hides the originals.
    fds = {c: os.open(c, os.O_PATH) for kids in needed.values() for c in kids if os.path.exists(c)}
    for parent in sorted(needed, key=len):
        _mount("tmpfs", parent, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        for child in sorted(needed[parent]):
            fd = fds.get(child)
            if fd is None:
                continue
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(child, exist_ok=True)
            else:
                open(child, "w").close()
            _mount(f"/proc/self/fd/{fd}", child, None, MS_BIND | MS_REC)
            _mount(None, child, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)
    for fd in fds.values():
        os.close(fd)


def _lo_up() -> None:
    """Bring up loopback in the empty network namespace so code may use localhost (and only it)."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s.fileno(), 0x8914, struct.pack("16sH14s", b"lo", 0x1 | 0x8 | 0x40, b""))


def _prepare_filesystem(job: dict, fixture_fd: int | None, in_userns: bool) -> None:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    if not in_userns:
        _expose(job.get("expose", []))
    # Everything on the root file system becomes read-only for this sandbox; the only writable
    # places are the private tmpfs mounts below, which vanish with the namespace.
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    size = int(job["limits"]["tmpfs_mb"])
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size}m,mode=1777")
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _populate_workdir(job, WORK, fixture_fd)


def _populate_workdir(job: dict, work: str, fixture_fd: int | None) -> None:
    import shutil

    if fixture_fd is not None:
        shutil.copytree(f"/proc/self/fd/{fixture_fd}", work, symlinks=True)
        os.close(fixture_fd)
    else:
        os.makedirs(work)
    for rel, content in (job.get("files") or {}).items():
        dest = os.path.join(work, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(content)
    for rel, target in (job.get("links") or {}).items():
        dest = os.path.join(work, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if not os.path.lexists(dest):
            os.symlink(target, dest)
    uid = job.get("uid")
    if uid is not None:
        for root, dirs, files in os.walk(work):
            os.lchown(root, uid, uid)
            for name in dirs + files:
                os.lchown(os.path.join(root, name), uid, uid)


# -- the worker ---------------------------------------------------------------------------------

def _drop_privileges(job: dict, in_userns: bool) -> None:
    import resource

    lim = job["limits"]
    mb = 1024 * 1024
    for res, value in ((resource.RLIMIT_CPU, int(lim["cpu_s"])),
                       (resource.RLIMIT_AS, int(lim["memory_mb"]) * mb),
                       (resource.RLIMIT_FSIZE, int(lim["fsize_mb"]) * mb),
                       (resource.RLIMIT_NOFILE, 256),
                       (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(res, (value, value if res != resource.RLIMIT_CPU else value + 1))
    uid = job.get("uid")
    if uid is not None:
        # NPROC counts per real uid, so it only bites after the uid change (root ignores it).
        resource.setrlimit(resource.RLIMIT_NPROC, (int(lim["nproc"]), int(lim["nproc"])))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    elif in_userns:
        _drop_capabilities()
        # Counted against our real uid outside; leave headroom for the user's own processes.
        resource.setrlimit(resource.RLIMIT_NPROC, (int(lim["nproc"]) + _count_own_procs(),) * 2)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def _count_own_procs() -> int:
    return sum(1 for p in os.listdir("/proc") if p.isdigit())


def _drop_capabilities() -> None:
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    hdr = Header(0x20080522, 0)
    data = (Data * 2)()
    _check(_libc.capset(ctypes.byref(hdr), ctypes.byref(data)), "capset")


def _emit(event: dict) -> None:
    line = (json.dumps(event, default=repr) + "\n").encode("utf-8", "replace")
    try:
        os.write(RESULT_FD, line)
    except OSError:
        pass  # the code under test closed our channel: the supervisor reports missing outcomes


def _fail_message(exc: BaseException, tb: object) -> str:
    import traceback

    name = type(exc).__name__
    text = str(exc).strip()
    where = ""
    for frame in reversed(traceback.extract_tb(tb)):  # type: ignore[arg-type]
        if frame.filename in ("<tests>", "<solution>"):
            src = (frame.line or "").strip()
            where = f" ({'test' if frame.filename == '<tests>' else 'solution'} line {frame.lineno}: {src})"
            break
    msg = f"{name}: {text}" if text else name
    return (msg[:600] + where)[:1000]


def _register_source(filename: str, source: str) -> None:
    import linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def _load_solution(job: dict) -> object:
    import types

    if job.get("setup"):
        # Task set-up (e.g. building a database) runs in its own namespace, before the solution.
        _register_source("<setup>", job["setup"])
        exec(compile(job["setup"], "<setup>", "exec"), {"__name__": "setup"})
    mod = types.ModuleType("solution")
    mod.__file__ = os.path.join(WORK, "solution.py")
    # Registered so pickle, dataclasses and inspect find classes the solution defines.
    sys.modules["solution"] = mod
    _register_source("<solution>", job["code"])
    exec(compile(job["code"], "<solution>", "exec"), mod.__dict__)
    return mod


def _run_tests(job: dict, mod: object) -> None:
    ns = mod.__dict__  # type: ignore[attr-defined]
    candidate = ns.get(job["entry_point"])
    if candidate is None:
        _emit({"t": "load", "ok": False, "msg": f"the code defines no `{job['entry_point']}`"})
        return
    _register_source("<tests>", job["tests"])
    try:
        # Tests run in the solution's namespace: they may use its names (`app`, `os`, helpers).
        exec(compile(job["tests"], "<tests>", "exec"), ns)
    except BaseException as e:
        _emit({"t": "load", "ok": False, "msg": "test code failed to load: " + _fail_message(e, e.__traceback__)})
        return
    _emit({"t": "load", "ok": True})
    for name in job["test_names"]:
        fn = ns.get(name)
        _emit({"t": "start", "name": name})
        t0 = time.perf_counter()
        try:
            if not callable(fn):
                raise NameError(f"test {name} was overwritten by the code under test")
            fn(candidate)
            ok, msg = True, ""
        except BaseException as e:  # SystemExit and KeyboardInterrupt from the code are failures too
            ok, msg = False, _fail_message(e, e.__traceback__)
        _emit({"t": "test", "name": name, "ok": ok, "msg": msg, "s": round(time.perf_counter() - t0, 4)})


class _CallTimeout(BaseException):
    """A BaseException so that `except Exception` in the code under test cannot swallow it."""


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__bytes__"}:
            import base64

            return base64.b64decode(value["__bytes__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _run_fuzz(job: dict, mod: object) -> None:
    ns = mod.__dict__  # type: ignore[attr-defined]
    candidate = ns.get(job["entry_point"])
    if candidate is None:
        _emit({"t": "load", "ok": False, "msg": f"the code defines no `{job['entry_point']}`"})
        return
    _emit({"t": "load", "ok": True})
    fuzz = job["fuzz"]
    expected = set(fuzz["expected_exceptions"])

    def on_alarm(signum: int, frame: object) -> None:
        raise _CallTimeout()

    # CPU time, not wall time: a loaded machine must not turn slow calls into findings. Calls that
    # block without using CPU are caught by the run's wall-clock limit instead.
    signal.signal(signal.SIGPROF, on_alarm)

    def call(args: Any, limit: float) -> float:
        t0 = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, limit)
        try:
            candidate(*args)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        return time.process_time() - t0

    baseline = 0.0
    for args in fuzz.get("calibration") or []:
        try:
            baseline = max(baseline, call(_decode(args), 10.0))
        except BaseException:
            continue  # the tests judge the examples; calibration only measures them
    per_call = max(float(fuzz["per_call_s"]), 20 * baseline)
    # Stop before the run's wall-clock limit: a slow but correct function (a password KDF) gets
    # fewer inputs, and a hang at the end of the run is never confused with a slow input.
    deadline = time.monotonic() + float(fuzz.get("budget_s", 1e9))
    for i, args in enumerate(fuzz["inputs"]):
        if time.monotonic() + per_call > deadline:
            _emit({"t": "fuzz-budget", "done": i})
            break
        _emit({"t": "start", "name": f"fuzz-{i}", "input": i})
        try:
            call(_decode(args), per_call)
        except _CallTimeout:
            _emit({"t": "fuzz", "input": i, "kind": "timeout", "msg": f"call used more than {per_call:.2f}s of CPU"})
        except BaseException as e:
            # An exception the solution defines itself, or a documented rejection, is deliberate.
            names = {c.__name__ for c in type(e).__mro__}
            if names & expected or getattr(type(e), "__module__", "") == "solution":
                continue
            _emit({"t": "fuzz", "input": i, "kind": "crash", "exc": type(e).__name__,
                   "msg": _fail_message(e, e.__traceback__)})


def _worker(job: dict, out_w: int, res_w: int, in_userns: bool) -> None:
    """Never returns."""
    code = 0
    try:
        os.dup2(res_w, RESULT_FD)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.closerange(3, RESULT_FD)
        os.closerange(RESULT_FD + 1, 65536)
        os.setsid()
        os.chdir(job["workdir"])
        os.umask(0o022)  # the harness's umask must not change what permission tests observe
        _drop_privileges(job, in_userns)
        os.environ.clear()
        os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": job["workdir"],
                           "TMPDIR": "/tmp" if job["namespaces"] else job["workdir"],
                           "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"})
        sys.argv = ["solution"]
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        try:
            mod = _load_solution(job)
        except BaseException as e:
            _emit({"t": "load", "ok": False, "msg": "the code failed to load: " + _fail_message(e, e.__traceback__)})
        else:
            if job["kind"] == "fuzz":
                _run_fuzz(job, mod)
            else:
                _run_tests(job, mod)
    except BaseException as e:  # a failure of the sandbox set-up itself
        _emit({"t": "setup", "msg": f"{type(e).__name__}: {e}"})
        code = 70
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)


# -- init (PID 1) and supervisor ----------------------------------------------------------------

def _init(job: dict, fixture_fd: int | None, out_w: int, res_w: int, in_userns: bool) -> None:
    """PID 1 of the sandbox's PID namespace. Never returns."""
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _prepare_filesystem(job, fixture_fd, in_userns)
        try:
            _lo_up()
        except OSError:
            pass  # no loopback is still no network
        worker = os.fork()
        if worker == 0:
            _worker(job, out_w, res_w, in_userns)
        os.close(out_w)
        os.close(res_w)
        while True:  # as init we must reap re-parented orphans; we stop when the worker is done
            pid, status = os.wait()
            if pid == worker:
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status)
                         else 128 + os.WTERMSIG(status))
    except BaseException as e:
        _emit_direct(res_w, {"t": "setup", "msg": f"{type(e).__name__}: {e}"})
        os._exit(71)


def _emit_direct(fd: int, event: dict) -> None:
    try:
        os.write(fd, (json.dumps(event) + "\n").encode())
    except OSError:
        pass


def _descendants(root: int) -> list[int]:
    """Pids whose parent chain reaches `root` (as subreaper, orphans are re-parented to us)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        parents[int(entry)] = int(fields[1])
    out = []
    for pid in parents:
        p, hops = parents.get(pid), 0
        while p is not None and p > 1 and hops < 4096:
            if p == root:
                out.append(pid)
                break
            p, hops = parents.get(p), hops + 1
    return out


def _kill_descendants() -> None:
    me = os.getpid()
    for _ in range(200):
        pids = _descendants(me)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.002)
                break


def _supervise(job: dict) -> dict:
    t0 = time.perf_counter()
    mode = job["mode"]
    if job.get("drop_uid"):
        # Our pid is unique among live sandboxes, so is this uid: RLIMIT_NPROC (counted per uid)
        # and kill(-1) then only ever reach this one sandbox's processes.
        job["uid"] = UID_BASE + os.getpid()
    isolation = {"mode": mode, "network": False, "pid_namespace": False, "mount_namespace": False,
                 "readonly_root": False, "uid": job.get("uid")}
    fixture_fd = None
    if job.get("fixture_dir"):
        fixture_fd = os.open(job["fixture_dir"], os.O_RDONLY | os.O_DIRECTORY)
    in_userns = mode == "userns"
    if mode in ("namespaces", "userns"):
        flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
        uid, gid = os.getuid(), os.getgid()
        _unshare(flags | (CLONE_NEWUSER if in_userns else 0))
        if in_userns:
            _map_user(uid, gid)
        isolation.update(network=True, pid_namespace=True, mount_namespace=True, readonly_root=True)
        job["workdir"], job["namespaces"] = WORK, True
    else:
        import tempfile

        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        base = tempfile.mkdtemp(prefix="randori-sbx-")
        job["workdir"], job["namespaces"] = os.path.join(base, "work"), False
        _populate_workdir(job, job["workdir"], fixture_fd)
        fixture_fd = None
        if job.get("uid") is not None:
            os.chown(base, job["uid"], job["uid"])
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(out_r)
        os.close(res_r)
        if job["namespaces"]:
            _init(job, fixture_fd, out_w, res_w, in_userns)
        _worker(job, out_w, res_w, in_userns)
    if fixture_fd is not None:
        os.close(fixture_fd)
    os.close(out_w)
    os.close(res_w)
    output, results = bytearray(), bytearray()
    deadline = t0 + float(job["limits"]["wall_s"])
    status, exit_code = "completed", None
    try:
        pidfd: int | None = os.pidfd_open(child)
    except (AttributeError, OSError):
        pidfd = None
    watch = [fd for fd in (pidfd, out_r, res_r) if fd is not None]
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            status = "timeout"
            os.kill(child, signal.SIGKILL)
            break
        ready, _, _ = select.select(watch, [], [], min(remaining, 0.05 if pidfd is None else remaining))
        for fd in ready:
            if fd in (out_r, res_r):
                chunk = os.read(fd, 65536)
                if not chunk:
                    watch.remove(fd)
                elif fd == out_r:
                    if len(output) < OUTPUT_CAP:
                        output += chunk[: OUTPUT_CAP - len(output)]
                else:
                    results += chunk
        pid, wstatus = os.waitpid(child, os.WNOHANG)
        if pid == child:
            exit_code = os.waitstatus_to_exitcode(wstatus)
            break
    if exit_code is None:
        _, wstatus = os.waitpid(child, 0)
    if not job["namespaces"]:
        _kill_descendants()
    # Whatever the worker wrote before it ended is still in the pipes.
    for fd in (out_r, res_r):
        os.set_blocking(fd, False)
        while True:
            try:
                chunk = os.read(fd, 65536)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            if fd == out_r:
                if len(output) < OUTPUT_CAP:
                    output += chunk[: OUTPUT_CAP - len(output)]
            else:
                results += chunk
    if not job["namespaces"]:
        import shutil

        shutil.rmtree(os.path.dirname(job["workdir"]), ignore_errors=True)
    events = []
    for line in results.decode("utf-8", "replace").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # something else wrote to our channel: ignore it
    return {"status": status, "exit_code": exit_code, "events": events,
            "output": output.decode("utf-8", "replace"), "isolation": isolation,
            "duration_s": round(time.perf_counter() - t0, 4)}


def _run_job(job: dict) -> dict:
    try:
        return _supervise(job)
    except BaseException as e:
        return {"status": "setup_error", "error": f"{type(e).__name__}: {e}", "events": [],
                "output": "", "exit_code": None, "isolation": {"mode": job.get("mode")}}


def _serve(listen_fd: int) -> None:
    """Fork server ("zygote"): interpreter start-up and imports are paid once; each job is handled
    by a fork of this pristine process (it never runs untrusted code itself). Exits when the
    harness closes our stdin."""
    # Everything a supervisor, init and worker import, loaded before forking.
    import fcntl  # noqa: F401
    import linecache  # noqa: F401
    import resource  # noqa: F401
    import shutil  # noqa: F401
    import socket
    import struct  # noqa: F401
    import traceback  # noqa: F401
    import types  # noqa: F401

    listener = socket.socket(fileno=listen_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked handlers are reaped by the kernel
    lfd = listener.fileno()
    while True:
        ready, _, _ = select.select([lfd, 0], [], [])
        if 0 in ready and not os.read(0, 4096):
            os._exit(0)
        if lfd in ready:
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            if os.fork() == 0:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                listener.close()
                _handle(conn)
            conn.close()


def _handle(conn: Any) -> None:
    """One job on one connection, in a fork of the server. Never returns."""
    code = 0
    try:
        os.setsid()  # its own process group, so the harness can kill the whole job at once
        conn.sendall(f"{os.getpid()}\n".encode())
        chunks = []
        while True:
            chunk = conn.recv(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        result = _run_job(json.loads(b"".join(chunks)))
        conn.sendall(json.dumps(result).encode())
    except BaseException:
        code = 1
    finally:
        try:
            conn.close()
        except OSError:
            pass
    os._exit(code)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        _serve(int(sys.argv[2]))
    result = _run_job(json.loads(sys.stdin.buffer.read()))
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
