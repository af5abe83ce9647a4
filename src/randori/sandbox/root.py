"""The root file system sandboxed code sees, built by bubblewrap rather than inherited.

It holds what the interpreter and the allowed libraries need, read-only: /usr (and the /bin, /lib
links of a merged-/usr system), a handful of /etc files (the loader cache, time zone, TLS trust
store with its one-file bundle shown empty: `eager_trust_bundles`, MIME table, our own
passwd/group/hosts), the Python installation at /opt/randori/python, the harness's site-packages at
/opt/randori/venv (a virtual environment made for the sandbox, whose `python` is on PATH), and the
sandbox program itself. Nothing of /work, /home, /root, /run, /var, /mnt or /srv, and no host
sockets. /dev is bubblewrap's minimal one; /tmp, /dev/shm and /proc are made per run by the sandbox
program.

A memory cgroup for the sandboxes is prepared here when the kernel lets us create one below our
own (cgroup v2 with the memory controller delegated, or v1), and bound into the root, so each run
gets a memory limit that shared memory and memfd count against.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import sysconfig
import tempfile
from functools import cache
from pathlib import Path

# find_bwrap moved to randori.sandboxing (the agent track uses it too); kept importable from here.
from randori.sandboxing import find_bwrap as find_bwrap
from randori.sandboxing import system_binds

HERE = Path(__file__).parent
SANDBOX_FILES = ("_sandbox_child.py", "_sandbox_wire.py", "_sandbox_candidate.py", "_sandbox_judge.py",
                 "_sandbox_seccomp.py")
INSIDE = "/opt/randori"
CGROUP_INSIDE = "/sys/fs/cgroup/randori"
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "ssl", "ca-certificates",
             "mime.types", "protocols", "services", "alternatives", "os-release", "gai.conf", "host.conf")
PATH_INSIDE = f"{INSIDE}/venv/bin:/usr/local/bin:/usr/bin:/bin"


@cache
def eager_trust_bundles() -> tuple[str, ...]:
    """The host's CA bundle files (every trusted certificate in one PEM file) that the root shows empty.

    OpenSSL parses its default bundle whole for every verifying context: ~35 ms of CPU, up to a third
    of a coding-suite run whose code or tests make one. Its hashed directory (`/etc/ssl/certs/
    <hash>.0`, the same certificates one per file) is looked up lazily, by the issuer a chain needs,
    and stays: code that verifies certificates trusts what it trusted before (and there is no network
    to reach a public server anyway), code that does not verify still does not. Only where that
    directory holds the certificates is the bundle emptied; elsewhere the root is unchanged."""
    import ssl

    paths = ssl.get_default_verify_paths()
    capath = paths.capath or "/etc/ssl/certs"
    try:
        hashed = any(re.fullmatch(r"[0-9a-f]{8}\.\d+", n) for n in os.listdir(capath))
    except OSError:
        hashed = False
    if not hashed:
        return ()
    found = []
    for p in (paths.cafile, "/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"):
        real = os.path.realpath(p) if p else ""
        if real.startswith(("/etc/ssl/", "/etc/ca-certificates/")) and os.path.isfile(real) and real not in found:
            found.append(real)
    return tuple(found)


class BuiltRoot:
    """bubblewrap arguments for the sandbox's root, for one interpreter."""

    def __init__(self, python: str):
        self.python = python
        self.stage = Path(tempfile.mkdtemp(prefix=temp_prefix("root")))
        atexit.register(shutil.rmtree, self.stage, True)
        info = _interpreter(python)
        self.base_prefix, self.version = info["base_prefix"], info["version"]
        self.site_packages = [p for p in info["site"] if os.path.isdir(p)]
        self.venv = info["prefix"] != info["base_prefix"]
        self.remap = not (self.base_prefix == "/usr" or self.base_prefix.startswith("/usr/"))
        inside_base = f"{INSIDE}/python" if self.remap else self.base_prefix
        real_exe = os.path.realpath(info["executable"])
        rel = os.path.relpath(real_exe, os.path.realpath(self.base_prefix))
        self.inside_base_exe = os.path.join(inside_base, rel) if self.remap else real_exe
        self.inside_python = f"{INSIDE}/venv/bin/python"
        self.lib_dir = os.path.join(inside_base, "lib")
        self._write_stage(os.path.dirname(self.inside_base_exe))

    def _write_stage(self, home: str) -> None:
        files = {
            "pyvenv.cfg": f"home = {home}\ninclude-system-site-packages = false\nversion = {self.version}\n",
            "passwd": "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
                      "sandbox:x:1000:1000:sandbox:/tmp/work:/usr/sbin/nologin\n"
                      "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            "group": "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n",
            "hosts": "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
            "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
            "empty-ca-bundle.pem": "",
        }
        for name, text in files.items():
            (self.stage / name).write_text(text)
        self.stage.chmod(0o755)  # the stage is bound read-only; an unprivileged harness must read it

    def env(self) -> dict[str, str]:
        env = {"PATH": PATH_INSIDE, "LANG": "C.UTF-8", "USER": "sandbox", "LOGNAME": "sandbox"}
        if self.remap and os.path.isdir(os.path.join(self.base_prefix, "lib")):
            # The interpreter may find libpython through an absolute run path of its old location.
            env["LD_LIBRARY_PATH"] = self.lib_dir
        return env

    def argv(self, bwrap: str, site_packages: bool, *, cgroup: str | None, as_root: bool) -> list[str]:
        a = [bwrap]
        if not as_root:
            # Root of a user namespace, with the capabilities to make each run's namespaces. A
            # PID namespace of its own and its own /proc: the kernel lets a user namespace mount
            # a new /proc only where one is already fully visible.
            a += ["--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "ALL", "--unshare-pid", "--proc", "/proc",
                  "--die-with-parent"]
        a += system_binds()
        a += ["--dev", "/dev", "--tmpfs", "/tmp"] + (["--dir", "/proc"] if as_root else [])
        site = f"{INSIDE}/venv/lib/python{self.version}"
        for d in ("/etc", "/opt", INSIDE, f"{INSIDE}/sandbox", f"{INSIDE}/venv", f"{INSIDE}/venv/bin",
                  f"{INSIDE}/venv/lib", site, *(["/sys", "/sys/fs", "/sys/fs/cgroup"] if cgroup else [])):
            a += ["--perms", "0755", "--dir", d]  # bubblewrap would make parents private (0700)
        for name in ETC_FILES:
            p = f"/etc/{name}"
            if os.path.exists(p):
                a += ["--ro-bind", p, p]
        if os.path.isdir("/etc/ssl/private"):
            a += ["--tmpfs", "/etc/ssl/private"]
        for bundle in eager_trust_bundles():
            a += ["--ro-bind", str(self.stage / "empty-ca-bundle.pem"), bundle]
        for name in ("passwd", "group", "hosts", "nsswitch.conf"):
            a += ["--ro-bind", str(self.stage / name), f"/etc/{name}"]
        if self.remap:
            a += ["--ro-bind", self.base_prefix, f"{INSIDE}/python"]
        a += ["--ro-bind", str(self.stage / "pyvenv.cfg"), f"{INSIDE}/venv/pyvenv.cfg"]
        for name in ("python", "python3", f"python{self.version}"):
            a += ["--symlink", self.inside_base_exe, f"{INSIDE}/venv/bin/{name}"]
        if site_packages:
            target = f"{site}/site-packages"
            for i, path in enumerate(self.site_packages):
                if path.startswith("/usr/") and not self.venv:
                    continue  # already visible where the interpreter looks for it
                a += ["--ro-bind", path, target if i == 0 else f"{target}-{i}"]
        for name in SANDBOX_FILES:
            a += ["--ro-bind", str(HERE / name), f"{INSIDE}/sandbox/{name}"]
        if cgroup:
            a += ["--bind", cgroup, CGROUP_INSIDE]
        for key, value in self.env().items():
            a += ["--setenv", key, value]
        a += ["--chdir", "/", "--"]
        python = self.inside_python if (self.venv or site_packages) else self.inside_base_exe
        return [*a, python, "-I", *([] if site_packages else ["-S"]), "-B", f"{INSIDE}/sandbox/_sandbox_child.py"]


def _interpreter(python: str) -> dict:
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return {"prefix": sys.prefix, "base_prefix": sys.base_prefix, "executable": sys.executable,
                "version": f"{sys.version_info[0]}.{sys.version_info[1]}",
                "site": sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})}
    import json
    import subprocess

    probe = ("import json,sys,sysconfig;print(json.dumps({'prefix':sys.prefix,'base_prefix':sys.base_prefix,"
             "'executable':sys.executable,'version':'%d.%d'%sys.version_info[:2],'site':sorted({"
             "sysconfig.get_path('purelib'),sysconfig.get_path('platlib')})}))")
    out = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, timeout=30, check=True)
    return json.loads(out.stdout)


# -- memory cgroup ------------------------------------------------------------------------------

@cache
def memory_cgroup() -> str | None:
    """A cgroup directory below ours in which the sandbox may create one memory-limited child per
    run, or None where the kernel or the container does not allow it."""
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        sep = fields.index("-")
        fstype, options = fields[sep + 1], fields[sep + 3] if len(fields) > sep + 3 else ""
        root, mountpoint = fields[3], fields[4]
        if fstype == "cgroup2":
            path = next((entry.split(":", 2)[2] for entry in own if entry.startswith("0::")), None)
            made = _make_dir(mountpoint, root, path, v2=True)
        elif fstype == "cgroup" and "memory" in options.split(","):
            path = next((entry.split(":", 2)[2] for entry in own if "memory" in entry.split(":", 2)[1].split(",")),
                        None)
            made = _make_dir(mountpoint, root, path, v2=False)
        else:
            continue
        if made:
            return made
    return None


def _make_dir(mountpoint: str, root: str, path: str | None, *, v2: bool) -> str | None:
    if path is None:
        return None
    rel = os.path.relpath(path, root) if path.startswith(root) else None
    if rel is None:
        return None
    parent = os.path.normpath(os.path.join(mountpoint, rel))
    if v2 and "memory" not in _read(os.path.join(parent, "cgroup.subtree_control")).split():
        try:
            # Only possible when our cgroup holds no processes of its own; usually it does.
            Path(parent, "cgroup.subtree_control").write_text("+memory")
        except OSError:
            return None
    _sweep_cgroups(parent)
    mine = os.path.join(parent, f"randori-{os.getpid()}")
    try:
        os.makedirs(mine, exist_ok=True)
        if v2:
            Path(mine, "cgroup.subtree_control").write_text("+memory")
    except OSError:
        _rmdir_tree(mine)
        return None
    _MADE.append(mine)
    return mine


_MADE: list[str] = []


def remove_memory_cgroup(grace_s: float = 5.0) -> None:
    """Remove the cgroups this process made (once their processes are gone: at exit). A sandbox's
    processes leave its cgroup a moment after its supervisor exits (the kernel tears the PID namespace
    down asynchronously, later on a loaded machine), so a busy cgroup is retried for up to `grace_s`;
    what still stays is swept by the next start."""
    import time

    end = time.monotonic() + grace_s
    while _MADE:
        path = _MADE[-1]
        _rmdir_tree(path)
        if os.path.isdir(path) and time.monotonic() < end:
            time.sleep(0.05)
            continue
        _MADE.pop()


# -- what a killed harness left behind --------------------------------------------------------------

_STALE_TEMP = re.compile(r"randori-(?:root|zygote|sbx)-(\d+)-")
_STALE_CGROUP = re.compile(r"randori-(\d+)")
_swept = False


def temp_prefix(kind: str) -> str:
    """Temporary folders carry their owner's pid, so the next start can tell a killed owner's."""
    return f"randori-{kind}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale() -> None:
    """Remove the temporary folders of sandboxes whose harness was killed (normal exits remove
    their own); their cgroups go when this process first makes its own (`memory_cgroup`)."""
    global _swept
    if _swept:
        return
    _swept = True
    # /tmp and /var/tmp too: a zygote's socket folder goes there when TMPDIR is too deep for a socket.
    for tmp in dict.fromkeys((tempfile.gettempdir(), "/tmp", "/var/tmp")):
        try:
            names = os.listdir(tmp)
        except OSError:
            continue
        for name in names:
            m = _STALE_TEMP.match(name)
            if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)


def _sweep_cgroups(parent: str) -> None:
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        m = _STALE_CGROUP.fullmatch(name)
        if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            _rmdir_tree(os.path.join(parent, name))


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _rmdir_tree(path: str) -> None:
    if not os.path.isdir(path):
        return
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            _rmdir_tree(entry.path)
    try:
        os.rmdir(path)
    except OSError:
        pass
