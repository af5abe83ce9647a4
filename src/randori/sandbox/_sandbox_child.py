"""The program that runs the sandbox (standard library only). `randori.sandbox.runner` starts it,
inside a root file system that bubblewrap built for it, as `python -I [-S] _sandbox_child.py
--serve FD`: a fork server that handles each job in a fresh fork; or without `--serve` for one job
read from stdin (result on stdout). It must not import randori: the code under test must not see
the harness. It keeps its imports few, since start-up time is most of a sandboxed run's cost.

A job arrives as two length-prefixed JSON messages on one stream. The first (code, fixtures,
limits) is read here; the second (the tests) is left in the stream and read only by the judge, after
the code under test has been forked off: the code's process never holds the tests.

Process layout (namespace mode):

    supervisor (new mount, PID, network, IPC and UTS namespaces; memory cgroup where available)
      └── init (PID 1: private /tmp, /dev/shm and /proc, IPC limits, the work folder; reaps)
            ├── judge (unprivileged uid, seccomp): set-up, then the tests; sole writer of results
            └── nest (PID 1 of a nested PID namespace, own /proc: cannot see or signal the judge)
                  └── candidate (same uid, seccomp): loads the code, answers calls as plain data

When init exits, the kernel kills every process left in its PID namespace, including daemons that
called setsid() and double-forked. The supervisor enforces the wall-clock limit by killing init.
Without namespaces (process mode) the supervisor is a child subreaper that finds and kills every
descendant, and the judge is protected only by seccomp and by not being dumpable.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _sandbox_wire as wire  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38
RESULT_FD = 1000  # far from the low fds tests are likely to touch
OUTPUT_CAP = 64 * 1024
RESULT_CAP = 1024 * 1024
WORK = "/tmp/work"
UID_BASE = 1_000_000
CGROUP_MOUNT = "/sys/fs/cgroup/randori"
# SysV IPC inside the sandbox's own IPC namespace: 16 MiB of shared memory in all.
IPC_LIMITS = {"shmmax": 16 << 20, "shmall": 4096, "shmmni": 16, "msgmnb": 64 << 10, "msgmni": 16}

PRELOAD = ("json", "re", "hashlib", "hmac", "base64", "secrets", "sqlite3", "subprocess", "pathlib", "shutil",
           "tempfile", "datetime", "string", "random", "html", "urllib.parse", "ipaddress", "zlib", "gzip",
           "functools", "collections", "itertools", "io", "csv", "dataclasses", "typing", "xml.etree.ElementTree",
           "logging", "uuid", "decimal", "enum", "ssl", "socket", "urllib.request", "http.client", "argparse",
           "unittest", "email.message", "importlib.util")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    _check(_libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def _prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl {option}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


# -- set-up as root of the namespaces -----------------------------------------------------------

def _lo_up() -> None:
    """Bring up loopback in the empty network namespace so code may use localhost (and only it)."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s.fileno(), 0x8914, struct.pack("16sH14s", b"lo", 0x1 | 0x8 | 0x40, b""))


def _ipc_limits() -> bool:
    try:
        for name, value in IPC_LIMITS.items():
            with open(f"/proc/sys/kernel/{name}", "w") as f:
                f.write(str(value))
        return True
    except OSError:
        return False


def _prepare_filesystem(job: dict, fixture_fd: int | None) -> None:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    if os.path.isdir(CGROUP_MOUNT):
        _check(_libc.umount2(CGROUP_MOUNT.encode(), MNT_DETACH), "umount cgroup")
    size = int(job["limits"]["tmpfs_mb"])
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size}m,mode=1777")
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _populate_workdir(job, job["workdir"], fixture_fd)


def _populate_workdir(job: dict, work: str, fixture_fd: int | None) -> None:
    import shutil

    fixtures = os.path.join(work, job.get("fixture_subdir") or "")
    if fixture_fd is not None:
        shutil.copytree(f"/proc/self/fd/{fixture_fd}", fixtures, symlinks=True)
        os.close(fixture_fd)
    os.makedirs(fixtures, exist_ok=True)
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
    dirs_seen, files_seen = [], []
    for root, dirs, files in os.walk(work):
        dirs_seen.append(root)
        files_seen += [os.path.join(root, n) for n in files if not os.path.islink(os.path.join(root, n))]
        if uid is not None:
            os.lchown(root, uid, uid)
            for name in dirs + files:
                os.lchown(os.path.join(root, name), uid, uid)
    # The task's files, which tests read: read-only for the code (see `_protect_fixtures`).
    job["fixture_dirs"], job["fixture_files"] = dirs_seen, files_seen


def _protect_fixtures(job: dict) -> None:
    """In the code's own mount namespace, make the task's files read-only and its folders
    immovable: a folder that is a mount point cannot be renamed or removed, and a file bound
    read-only cannot be written, replaced, renamed, removed or chmod-ed. The code may still add
    files of its own; the judge, in another mount namespace, sees the same files writable."""
    for d in job.get("fixture_dirs") or []:  # folders first: a later folder bind would hide file binds
        _mount(d, d, None, MS_BIND)
    for f in job.get("fixture_files") or []:
        _mount(f, f, None, MS_BIND)
        _mount(None, f, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _join_cgroup() -> bool:
    """Move this process (the fork server) into the memory cgroup the harness made for it, once:
    every job it forks is then born inside, and no per-run migration (which waits for an RCU grace
    period) is paid."""
    try:
        with open(os.path.join(CGROUP_MOUNT, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        return True
    except OSError:
        return False


def _limit_memory(job: dict) -> bool:
    """Set this job's memory limit on the fork server's cgroup (it runs one job at a time)."""
    if not _IN_CGROUP:
        return False
    limit = str(int(job["limits"]["memory_mb"]) << 20)
    v2 = os.path.exists(os.path.join(CGROUP_MOUNT, "memory.max"))
    memsw = "memory.memsw.limit_in_bytes"
    steps = [("memory.max", limit), ("memory.swap.max", "0")] if v2 else \
        [(memsw, "-1"), ("memory.limit_in_bytes", limit), (memsw, limit)]
    ok = False
    for name, value in steps:
        try:
            with open(os.path.join(CGROUP_MOUNT, name), "w") as f:
                f.write(value)
            ok = ok or name in ("memory.max", "memory.limit_in_bytes")
        except OSError:
            pass
    return ok


_IN_CGROUP = False
CANDIDATE_CGROUP = os.path.join(CGROUP_MOUNT, "cand")


def _candidate_cgroup(job: dict) -> bool:
    """Open the code's own cgroup (below the fork server's) for this job: `join_fd` for the code's
    first process to enter, `peak_fd` for the judge to read the tree's peak memory from. The peak
    is reset first (one job at a time per fork server)."""
    if not _IN_CGROUP or not os.path.isdir(CANDIDATE_CGROUP):
        return False
    v1 = os.path.join(CANDIDATE_CGROUP, "memory.max_usage_in_bytes")
    v2 = os.path.join(CANDIDATE_CGROUP, "memory.peak")
    try:
        if os.path.exists(v1):
            peak = os.open(v1, os.O_RDWR | os.O_CLOEXEC)
            os.write(peak, b"0")
        elif os.path.exists(v2):
            peak = os.open(v2, os.O_RDWR | os.O_CLOEXEC)
            os.write(peak, b"reset")  # per-descriptor reset (Linux 6.12+); an older kernel refuses it
        else:
            return False
    except OSError:
        return False
    try:
        job["join_fd"] = os.open(os.path.join(CANDIDATE_CGROUP, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        os.close(peak)
        return False
    job["peak_fd"] = peak
    return True


# -- the two processes that run code ------------------------------------------------------------

def _drop_capabilities() -> None:
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    hdr = Header(0x20080522, 0)
    data = (Data * 2)()
    _check(_libc.capset(ctypes.byref(hdr), ctypes.byref(data)), "capset")


def _restrict(job: dict, *, judge: bool) -> None:
    """Rlimits, an unprivileged uid (or no capabilities), no new privileges, seccomp."""
    import resource

    import _sandbox_seccomp

    lim = job["limits"]
    mb = 1024 * 1024
    # The CPU rlimit is a backstop per process at the supervisor's longest deadline (four times the
    # limit, given back time spent waiting for a CPU): on a loaded machine the run must end as a
    # timeout the supervisor sees, not as a process killed mid-test by SIGXCPU.
    for res, value in ((resource.RLIMIT_CPU, 4 * int(lim["cpu_s"])),
                       (resource.RLIMIT_AS, int(lim["memory_mb"]) * mb),
                       (resource.RLIMIT_FSIZE, int(lim["fsize_mb"]) * mb),
                       (resource.RLIMIT_NOFILE, 256),
                       (resource.RLIMIT_MSGQUEUE, 512 << 10),
                       (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(res)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(res, (value, value if res != resource.RLIMIT_CPU or value == hard else value + 1))
    if not judge:
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")  # under memory pressure the code under test goes first, not the judge
        except OSError:
            pass
    uid = job.get("uid")
    if uid is not None:
        # NPROC counts per real uid, so it only bites after the uid change (root ignores it).
        resource.setrlimit(resource.RLIMIT_NPROC, (int(lim["nproc"]), int(lim["nproc"])))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    elif job["mode"] == "userns":
        _drop_capabilities()
        # Counted against the user's real uid, whose other processes we cannot see from here:
        # generous headroom, so legitimate subprocesses work and a fork bomb still stops.
        resource.setrlimit(resource.RLIMIT_NPROC, (int(lim["nproc"]) + 1024,) * 2)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if judge:
        _prctl(PR_SET_DUMPABLE, 0)  # no /proc/<pid>/mem, fd or ptrace access for same-uid processes
    job["seccomp"] = _sandbox_seccomp.install()


def _enter(job: dict, out_w: int, keep: dict[int, int]) -> None:
    """Common start of judge and candidate: fds, session, cwd, environment."""
    for src, dst in keep.items():
        os.dup2(src, dst)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    high = sorted(keep.values())
    lo = 3
    for fd in high:
        os.closerange(lo, fd)
        lo = fd + 1
    os.closerange(lo, 65536)
    os.setsid()
    os.chdir(job["cwd"])
    os.umask(0o022)  # the harness's umask must not change what permission tests observe


def _set_environment(job: dict, *, judge: bool) -> None:
    os.environ.clear()
    os.environ.update(job.get("env") or {})
    os.environ.update({"HOME": job["workdir"], "TMPDIR": "/tmp" if job["namespaces"] else job["workdir"],
                       "PYTHONDONTWRITEBYTECODE": "1"})
    sys.argv = ["solution"]
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    if not judge:
        # As for any program run from a shell; the judge keeps Python's default, so a vanished
        # candidate is an error it reports, not a signal that kills it.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def _emit(event: dict) -> None:
    line = (json.dumps(event, default=repr) + "\n").encode("utf-8", "replace")
    try:
        os.write(RESULT_FD, line)
    except OSError:
        pass


def _finish(code: int) -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)


JUDGE_STREAM_FD, JUDGE_PEER_FD, CANDIDATE_FD, JUDGE_PID_FD, JUDGE_PEAK_FD = 1001, 1002, 1003, 1004, 1005


def _judge(job: dict, out_w: int, res_w: int, stream_fd: int, peer_fd: int | None) -> None:
    """Runs set-up and tests; the only process holding the result channel. Never returns."""
    code = 0
    try:
        keep = {res_w: RESULT_FD, stream_fd: JUDGE_STREAM_FD}
        if peer_fd is not None:
            keep[peer_fd] = JUDGE_PEER_FD
            keep[job["pid_fd"]] = JUDGE_PID_FD
            if job.get("peak_fd") is not None:
                keep[job["peak_fd"]] = JUDGE_PEAK_FD
        _enter(job, out_w, keep)
        _restrict(job, judge=True)
        _set_environment(job, judge=True)
        part2 = wire.recv(JUDGE_STREAM_FD, cap=1 << 30)
        os.close(JUDGE_STREAM_FD)
        job.update(part2)
        _emit({"t": "seccomp", "on": bool(job.get("seccomp"))})
        import _sandbox_judge as judge

        if job["verdict_isolation"] == "shared":
            judge.run_setup(job)
            judge.run_shared(job, _emit)
        else:
            cand = judge.Candidate(JUDGE_PEER_FD, JUDGE_PID_FD,
                                   JUDGE_PEAK_FD if job.get("peak_fd") is not None else None)
            try:
                judge.run_setup(job)
            except BaseException as e:
                _emit({"t": "setup-failed", "msg": "task set-up failed: " + judge.fail_message(e, e.__traceback__)})
                raise
            if job["kind"] == "fuzz":
                judge.run_fuzz(job, cand, _emit)
            else:
                judge.run_separate(job, cand, _emit)
    except BaseException as e:  # a failure of the sandbox set-up itself
        _emit({"t": "setup", "msg": wire.cap_text(f"{type(e).__name__}: {e}", 500)})
        code = 70
    _finish(code)


def _candidate(job: dict, out_w: int, sock: int) -> None:
    """Loads the code under test and answers calls. Never returns."""
    try:
        _enter(job, out_w, {sock: CANDIDATE_FD})
        _restrict(job, judge=False)
        _set_environment(job, judge=False)
        import _sandbox_candidate

        sys.path[:] = [p for p in sys.path if p != os.path.dirname(os.path.abspath(__file__))]
        _sandbox_candidate.serve(CANDIDATE_FD, job["code"], job["workdir"])
    except BaseException as e:
        _write_direct(2, f"sandbox: the code's process could not start: {type(e).__name__}: {e}\n")
    _finish(71)


def _nest(job: dict, out_w: int, sock: int) -> None:
    """PID 1 of the candidate's own PID namespace, with a /proc that shows only that namespace.
    Never returns."""
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if job.get("join_fd") is not None:
            # The code's whole process tree is born in a memory cgroup of its own: its peak is the tree's.
            os.write(job["join_fd"], b"0")
        _unshare(CLONE_NEWNS)
        _protect_fixtures(job)
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        worker = os.fork()
        if worker == 0:
            _candidate(job, out_w, sock)
        os.close(sock)
        os.close(out_w)
        _reap_until(worker)
    except BaseException:
        os._exit(72)


def _reap_until(pid: int) -> None:
    while True:
        try:
            done, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        if done == pid:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def _start_processes(job: dict, out_w: int, res_w: int, stream_fd: int, *, nest: bool) -> int:
    """Fork the judge and (in separate mode) the candidate. Returns the judge's pid."""
    import socket

    peer = None
    if job["verdict_isolation"] != "shared":
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        peer, cand_sock = a.detach(), b.detach()
        # Tells the judge where the candidate's process is, so it can measure its CPU time itself.
        pid_r, pid_w = os.pipe()
    judge = os.fork()
    if judge == 0:
        if peer is not None:
            os.close(cand_sock)
            os.close(pid_w)
            job["pid_fd"] = pid_r
        _judge(job, out_w, res_w, stream_fd, peer)
    if peer is not None:
        os.close(peer)
        os.close(pid_r)
        # Forked from this process, which never reads the second message: the tests stay with the
        # judge. The first fork after unshare(CLONE_NEWPID) is PID 1 of the nested namespace.
        if nest:
            _unshare(CLONE_NEWPID)
        child = os.fork()
        if child == 0:
            os.close(res_w)
            os.close(stream_fd)
            if nest:
                _nest(job, out_w, cand_sock)
            _candidate(job, out_w, cand_sock)
        os.close(cand_sock)
        _write_direct(pid_w, f"{'nest' if nest else 'direct'} {child}\n")
        os.close(pid_w)
    return judge


def _init(job: dict, fixture_fd: int | None, out_w: int, res_w: int, stream_fd: int) -> None:
    """PID 1 of the sandbox's PID namespace. Never returns."""
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _prepare_filesystem(job, fixture_fd)
        job["ipc_limits"] = _ipc_limits()
        try:
            _lo_up()
        except OSError:
            pass  # no loopback is still no network
        _emit_direct(res_w, {"t": "init", "ipc_limits": job["ipc_limits"]})
        judge = _start_processes(job, out_w, res_w, stream_fd, nest=True)
        os.close(out_w)
        os.close(res_w)
        os.close(stream_fd)
        # As init we reap re-parented orphans; the run ends when the judge is done.
        _reap_until(judge)
    except BaseException as e:
        _emit_direct(res_w, {"t": "setup", "msg": wire.cap_text(f"{type(e).__name__}: {e}", 500)})
        os._exit(71)


def _write_direct(fd: int, text: str) -> None:
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    except OSError:
        pass


def _emit_direct(fd: int, event: dict) -> None:
    try:
        os.write(fd, (json.dumps(event) + "\n").encode())
    except OSError:
        pass


# -- supervisor ---------------------------------------------------------------------------------

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


def _waited_for_cpu(namespaces: bool) -> float:
    """The longest time any thread of this run has spent runnable but waiting for a CPU
    (schedstat's run delay), in seconds. With namespaces our /proc is the one the run's init
    mounted (we share its mount namespace): every process in it is the run's."""
    worst = 0
    pids = [int(e) for e in os.listdir("/proc") if e.isdigit()] if namespaces else _descendants(os.getpid())
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    worst = max(worst, int(f.read().split()[1]))
            except (OSError, ValueError, IndexError):
                continue
    return worst / 1e9


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


class _Capped:
    """A buffer that keeps the first `cap` bytes and counts the rest."""

    def __init__(self, cap: int):
        self.cap, self.data, self.dropped = cap, bytearray(), 0

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))


def _supervise(job: dict, stream_fd: int, fixture_fd: int | None) -> dict:
    t0 = time.perf_counter()
    mode = job["mode"]
    if job.get("drop_uid"):
        # Our pid is unique among live sandboxes, so is this uid: RLIMIT_NPROC (counted per uid)
        # and kill(-1) then only ever reach this one sandbox's processes.
        job["uid"] = UID_BASE + os.getpid()
    isolation = {"mode": mode, "network": False, "pid_namespace": False, "mount_namespace": False,
                 "readonly_root": False, "root": "host", "seccomp": False, "memory_cgroup": False,
                 "ipc_limits": False, "uid": job.get("uid"), "verdict_isolation": job["verdict_isolation"],
                 "fixtures_read_only": False}
    namespaces = mode in ("namespaces", "userns")
    if namespaces:
        isolation["memory_cgroup"] = _limit_memory(job)
        isolation["tree_memory"] = job["verdict_isolation"] != "shared" and _candidate_cgroup(job)
        _unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
        isolation.update(network=True, pid_namespace=True, mount_namespace=True, readonly_root=True,
                         root="built" if job.get("built_root") else "host",
                         fixtures_read_only=job["verdict_isolation"] != "shared")
        job["namespaces"], job["workdir"] = True, WORK
        job["cwd"] = os.path.join(WORK, job.get("cwd_rel") or "")
    else:
        import tempfile

        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        base = tempfile.mkdtemp(prefix=f"randori-sbx-{os.getpid()}-")  # the pid: swept if we are killed
        job["workdir"] = os.path.join(base, "work")
        job["cwd"] = os.path.join(job["workdir"], job.get("cwd_rel") or "")
        job["namespaces"] = False
        _populate_workdir(job, job["workdir"], fixture_fd)
        fixture_fd = None
        if job.get("uid") is not None:
            os.chown(base, job["uid"], job["uid"])
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()
    if namespaces:
        child = os.fork()
        if child == 0:
            os.close(out_r)
            os.close(res_r)
            _init(job, fixture_fd, out_w, res_w, stream_fd)
    else:
        child = _start_processes(job, out_w, res_w, stream_fd, nest=False)
    if fixture_fd is not None:
        os.close(fixture_fd)
    os.close(out_w)
    os.close(res_w)
    output, results = _Capped(OUTPUT_CAP), _Capped(RESULT_CAP)
    deadline = t0 + float(job["limits"]["wall_s"])
    status, exit_code = "completed", None
    try:
        pidfd: int | None = os.pidfd_open(child)
    except (AttributeError, OSError):
        pidfd = None
    watch = [fd for fd in (pidfd, out_r, res_r) if fd is not None]
    # The limit is on the run's own time: time its processes spent waiting for a CPU on a loaded
    # machine is given back (up to three times the limit), so load does not turn a verdict into a timeout.
    hard_deadline = t0 + 4 * float(job["limits"]["wall_s"])
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            deadline = min(hard_deadline, t0 + float(job["limits"]["wall_s"]) + _waited_for_cpu(namespaces))
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
                else:
                    (output if fd == out_r else results).add(chunk)
        pid, wstatus = os.waitpid(child, os.WNOHANG)
        if pid == child:
            exit_code = os.waitstatus_to_exitcode(wstatus)
            break
    if exit_code is None:
        os.waitpid(child, 0)
    if not namespaces:
        _kill_descendants()
    # Whatever was written before the end is still in the pipes (writers that outlived the judge
    # are dead by now, so this ends).
    for fd in (out_r, res_r):
        os.set_blocking(fd, False)
        while True:
            try:
                chunk = os.read(fd, 65536)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            (output if fd == out_r else results).add(chunk)
    if not namespaces:
        import shutil

        shutil.rmtree(os.path.dirname(job["workdir"]), ignore_errors=True)
    events = []
    for line in results.data.decode("utf-8", "replace").splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if type(ev) is not dict:
            continue
        if ev.get("t") == "init":
            isolation["ipc_limits"] = bool(ev.get("ipc_limits"))
        elif ev.get("t") == "seccomp":
            isolation["seccomp"] = bool(ev.get("on"))
        else:
            events.append(ev)
    import resource

    return {"status": status, "exit_code": exit_code, "events": events,
            "output": output.data.decode("utf-8", "replace"), "output_dropped": output.dropped,
            "results_dropped": results.dropped, "isolation": isolation,
            "supervisor_peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "duration_s": round(time.perf_counter() - t0, 4)}


def _run_job(job: dict, stream_fd: int, fixture_fd: int | None) -> dict:
    try:
        return _supervise(job, stream_fd, fixture_fd)
    except BaseException as e:
        return {"status": "setup_error", "error": wire.cap_text(f"{type(e).__name__}: {e}", 500), "events": [],
                "output": "", "exit_code": None, "isolation": {"mode": job.get("mode")}}


# -- fork server --------------------------------------------------------------------------------

def _serve(listen_fd: int) -> None:
    """Fork server ("zygote"): interpreter start-up and imports are paid once; each job is handled
    by a fork of this pristine process (it never runs untrusted code itself). Exits when the
    harness closes our stdin."""
    # Everything a supervisor, init, judge and candidate import, loaded before forking.
    import fcntl  # noqa: F401
    import linecache  # noqa: F401
    import resource  # noqa: F401
    import shutil  # noqa: F401
    import socket
    import struct  # noqa: F401
    import tempfile  # noqa: F401
    import traceback  # noqa: F401
    import types  # noqa: F401

    import _sandbox_candidate  # noqa: F401
    import _sandbox_judge  # noqa: F401
    import _sandbox_seccomp  # noqa: F401

    # Standard modules tasks and tests commonly import, loaded once here rather than in every run.
    # (Modules with per-process state re-seed or re-check their pid after a fork: random, tempfile.)
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:  # a module missing from this build only costs its import later
            continue

    # Every job is a fork of this process: with its objects frozen, no collection in a fork walks
    # them, which would write to (and so copy) nearly every page the fork shares with this process.
    import gc

    gc.collect()
    gc.freeze()
    global _IN_CGROUP
    _IN_CGROUP = os.path.isdir(CGROUP_MOUNT) and _join_cgroup()
    listener = socket.socket(fileno=listen_fd)
    lfd = listener.fileno()
    while True:
        ready, _, _ = select.select([lfd, 0], [], [], 1.0)
        while True:  # reap finished handlers (waited for, their CPU time counts as ours)
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if 0 in ready and not os.read(0, 4096):
            os._exit(0)
        if lfd in ready:
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            if os.fork() == 0:
                listener.close()
                _handle(conn)
            conn.close()


def _handle(conn: Any) -> None:
    """One job on one connection, in a fork of the server. Never returns."""
    import socket

    code = 0
    try:
        os.setsid()  # its own process group, so the harness can kill the whole job at once
        conn.sendall(f"{os.getpid()}\n".encode())
        _, fds, _, _ = socket.recv_fds(conn, 1, 4)
        job = wire.recv(conn.fileno(), cap=1 << 30)
        fixture_fd = fds[0] if fds else None
        for extra in fds[1:]:
            os.close(extra)
        result = _run_job(job, conn.fileno(), fixture_fd)
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
    job = wire.recv(0, cap=1 << 30)
    fixture_fd = job.get("fixture_fd")
    result = _run_job(job, 0, fixture_fd)
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
