"""Programs written to forge a verdict or to reach the host, each as the "secure" reference of a
data set item whose test passes only if the trick worked. `randori code check` must report every
one of them as not passing, the harness must stay small, and nothing may reach the host."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from randori.code import dataset as dataset_module
from randori.sandbox.runner import Limits, Sandbox, TestJob

WRONG = "def f(*args):\n    return 'wrong'\n"
RIGHT = "the right answer"


def _tricks(host_secret: Path, shared_dirs: list[Path], unix_path: str, abstract_name: str
            ) -> dict[str, tuple[str, str]]:
    """id -> (the trick, the test). Every test passes only if its trick succeeded."""
    harness_file = Path(dataset_module.__file__).resolve()
    expected_harness = harness_file.read_text()[:200]
    expects_right = f"def check(candidate):\n    assert candidate() == {RIGHT!r}\n"
    return {
        "TRICK/result-channel": (
            "import json, os\n"
            "FAKE = (json.dumps({'t': 'test', 'name': 'check', 'ok': True, 'msg': '', 's': 0.0}) + '\\n').encode()\n"
            "def forge():\n"
            "    for fd in range(3, 1100):\n"
            "        try:\n"
            "            os.write(fd, FAKE)\n"
            "        except OSError:\n"
            "            pass\n"
            "    os._exit(0)\n"
            "def f():\n"
            "    forge()\n",
            expects_right),
        "TRICK/patched-reporter": (
            "import builtins, gc, sys\n"
            "def _all_pass(ns, names, candidate, emit):\n"
            "    for n in names:\n"
            "        emit({'t': 'test', 'name': n, 'ok': True, 'msg': '', 's': 0.0})\n"
            "for m in list(sys.modules.values()):\n"
            "    if hasattr(m, '_run_named'):\n"
            "        m._run_named = _all_pass\n"
            "class _Quiet(Exception):\n"
            "    pass\n"
            "builtins.AssertionError = _Quiet\n"
            "def f():\n"
            "    for o in gc.get_objects():\n"
            "        if callable(o) and getattr(o, '__name__', '') == 'check':\n"
            "            o.__code__ = (lambda candidate: None).__code__\n"
            "    return 'wrong'\n",
            expects_right),
        "TRICK/permissive-eq": (
            "class Anything(str):\n"
            "    def __eq__(self, other):\n        return True\n"
            "    def __ne__(self, other):\n        return False\n"
            "    def __hash__(self):\n        return 0\n"
            "    def __bool__(self):\n        return True\n"
            "class Whatever:\n"
            "    __eq__ = Anything.__eq__\n    __ne__ = Anything.__ne__\n"
            "    __hash__ = Anything.__hash__\n    __bool__ = Anything.__bool__\n"
            "def f(kind='str'):\n"
            "    return Anything('wrong') if kind == 'str' else Whatever()\n",
            f"def check(candidate):\n    assert candidate('obj') == {RIGHT!r}\n    assert candidate('obj')\n"
            f"    assert candidate() == {RIGHT!r}\n"),
        "TRICK/flood": (
            "import os\n"
            "def f():\n"
            "    chunk = b'x' * (1 << 20)\n"
            "    for _ in range(1024):\n"  # 1 GiB on stdout and on the channel to the tests
            "        for fd in (1, 2, 1003):\n"
            "            try:\n"
            "                os.write(fd, chunk)\n"
            "            except OSError:\n"
            "                pass\n"
            "    return 'y' * (200 << 20)\n",
            expects_right),
        "TRICK/huge-failure": (
            "def f():\n"
            "    raise AssertionError('z' * (32 << 20))\n",
            expects_right),
        "TRICK/read-outside": (
            "def f(path):\n"
            "    with open(path) as fh:\n"
            "        return fh.read()\n",
            f"def check(candidate):\n    assert candidate({str(host_secret)!r}) == {host_secret.read_text()!r}\n"
            f"    assert candidate({str(harness_file)!r}).startswith({expected_harness!r})\n"),
        "TRICK/write-world-writable": (
            "import os\n"
            "def f(folder, name):\n"
            "    with open(os.path.join(folder, name), 'w') as fh:\n"
            "        fh.write('escaped')\n"
            "    return True\n",
            "def check(candidate):\n"
            + "".join(f"    assert candidate({str(d)!r}, 'escaped.txt') is True\n" for d in shared_dirs)),
        "TRICK/host-unix-socket": (
            "import socket\n"
            "def f(path, abstract):\n"
            "    reached = []\n"
            "    for address in (path, '\\0' + abstract):\n"
            "        s = socket.socket(socket.AF_UNIX)\n"
            "        try:\n"
            "            s.connect(address)\n"
            "            s.sendall(b'escaped')\n"
            "            reached.append(address)\n"
            "        except OSError:\n"
            "            pass\n"
            "        finally:\n"
            "            s.close()\n"
            "    return len(reached)\n",
            f"def check(candidate):\n    assert candidate({unix_path!r}, {abstract_name!r}) >= 1\n"),
        "TRICK/shm-memfd-memory": (
            "import ctypes, mmap, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.shmat.restype = ctypes.c_void_p\n"
            "HOLD = []\n"
            "def f():\n"
            "    held, chunk = 0, 64 << 20\n"
            "    block = b'\\1' * chunk\n"
            "    for _ in range(24):\n"  # memory files: written, never mapped, so outside RLIMIT_AS
            "        try:\n"
            "            fd = os.memfd_create('hold')\n"
            "            os.write(fd, block)\n"
            "            HOLD.append(fd)\n"
            "            held += chunk\n"
            "        except OSError:\n"
            "            break\n"
            "    for _ in range(24):\n"  # SysV segments: touched through a mapping, then detached
            "        sid = libc.shmget(0, chunk, 0o1600)\n"
            "        if sid < 0:\n"
            "            break\n"
            "        addr = libc.shmat(sid, None, 0)\n"
            "        if addr in (None, ctypes.c_void_p(-1).value):\n"
            "            break\n"
            "        ctypes.memset(addr, 1, chunk)\n"
            "        libc.shmdt(ctypes.c_void_p(addr))\n"
            "        held += chunk\n"
            "    for i in range(24):\n"  # files in /dev/shm
            "        try:\n"
            "            with open(f'/dev/shm/hold-{i}', 'wb') as fh:\n"
            "                fh.write(block)\n"
            "            held += chunk\n"
            "        except OSError:\n"
            "            break\n"
            "    return held\n",
            "def check(candidate):\n    assert candidate() >= 1536 << 20\n"),
    }


@pytest.fixture
def trick_split(tmp_path: Path):
    marker = uuid.uuid4().hex
    # Outside /tmp (which any sandbox replaces): a host folder the code must not see.
    host = Path("/var/tmp") / f"randori-host-{marker}"
    host.mkdir(mode=0o755)
    secret = host / "host-secret.txt"
    secret.write_text(f"host secret {marker}")
    # World-writable folders on mounts other than /: /dev/shm, and (as root) a tmpfs of our own.
    shared = [Path("/dev/shm") / f"randori-shared-{marker}"]
    shared[0].mkdir()
    mounted = None
    if os.geteuid() == 0:
        mounted = Path("/mnt") / f"randori-{marker}"
        mounted.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=1777", "tmpfs", str(mounted)]).returncode:
            mounted.rmdir()
            mounted = None
        else:
            shared.append(mounted)
    for d in shared:
        d.chmod(0o1777)
    unix_path = str(host / "host.sock")
    listeners = []
    for address in (unix_path, "\0" + f"randori-{marker}"):
        s = socket.socket(socket.AF_UNIX)
        s.bind(address)
        if not address.startswith("\0"):
            os.chmod(address, 0o777)  # like many system sockets (D-Bus's is 0666)
        s.listen()
        s.setblocking(False)
        listeners.append(s)
    items = [{"ID": tid, "Problem": "def f(*args):\n    '''A trick.'''\n", "Insecure Code": WRONG, "Secure Code": code,
              "Test": test, "Entry_Point": "f"}
             for tid, (code, test) in _tricks(secret, shared, unix_path, f"randori-{marker}").items()]
    split = tmp_path / "Tricks"
    split.mkdir()
    (split / "Tricks.json").write_text(json.dumps(items))
    try:
        yield split, shared, listeners
    finally:
        for s in listeners:
            s.close()
        for d in shared:
            for p in d.iterdir():
                p.unlink()
        if mounted is not None:
            subprocess.run(["umount", str(mounted)])
        for d in shared:
            d.rmdir()
        for p in host.iterdir():
            p.unlink()
        host.rmdir()


HWM_WRAPPER = ("import atexit, sys\n"
               "def hwm():\n"
               "    for line in open('/proc/self/status'):\n"
               "        if line.startswith('VmHWM:'):\n"
               "            sys.stderr.write('HARNESS-PEAK-KB ' + line.split()[1] + '\\n')\n"
               "atexit.register(hwm)\n"
               "from randori.cli import main\n"
               "sys.argv = ['randori'] + sys.argv[1:]\n"
               "main()\n")


def test_check_reports_every_trick_as_not_passing(trick_split):
    split, shared, listeners = trick_split
    proc = subprocess.run([sys.executable, "-c", HWM_WRAPPER, "code", "check", "--dataset", str(split),
                           "--format", "json", "--concurrency", "3"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    by_id = {t["task"]: t for t in report["tasks"]}
    assert set(by_id) == {f"TRICK/{k}" for k in ("result-channel", "patched-reporter", "permissive-eq", "flood",
                                                  "huge-failure", "read-outside", "write-world-writable",
                                                  "host-unix-socket", "shm-memfd-memory")}
    for tid, item in by_id.items():
        assert not item["ok"], tid
        assert item["secure"]["combined"]["passed"] is False, tid  # the trick did not make its test pass
        assert item["verdict_isolation"] == "separate", tid
        for failure in item["secure"]["combined"]["failures"]:
            assert len(failure) < 1500, (tid, len(failure))  # 32 MiB messages arrive capped
    assert report["ok"] == 0
    peak_kb = int(proc.stderr.split("HARNESS-PEAK-KB ")[1].split()[0])
    assert peak_kb < 300 * 1024, f"the harness grew to {peak_kb // 1024} MB"
    # Nothing reached the host: no file in the world-writable folder, no connection to the sockets.
    for d in shared:
        assert list(d.iterdir()) == [], d
    for s in listeners:
        with pytest.raises(BlockingIOError):
            s.accept()


def test_tricks_do_work_where_tests_share_the_code_process(trick_split):
    """The same reporter patch forges a pass in `shared` mode: why results record the mode."""
    split, _, _ = trick_split
    item = next(i for i in json.loads((split / "Tricks.json").read_text()) if i["ID"] == "TRICK/patched-reporter")
    sb = Sandbox(Limits(wall_s=10, cpu_s=10))
    job = TestJob(code=item["Secure Code"], tests=item["Test"], entry_point="f", test_names=["check"],
                  verdict_isolation="shared")
    res = sb.run_sync(job)
    assert res.passed and res.isolation["verdict_isolation"] == "shared"
    assert not sb.run_sync(TestJob(**{**job.__dict__, "verdict_isolation": "separate"})).passed


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_flood_is_cut_and_the_supervisor_stays_small(fast_sandbox):
    code = ("import os\n"
            "def f():\n"
            "    chunk = b'x' * (1 << 20)\n"
            "    for _ in range(512):\n"
            "        os.write(1, chunk)\n"
            "    return 'done'\n")
    res = Sandbox(Limits(wall_s=20, cpu_s=20)).run_sync(
        TestJob(code=code, tests="def check(candidate):\n    assert candidate() == 'done'\n", entry_point="f",
                test_names=["check"]))
    assert res.passed
    assert res.truncated["output"] >= 500 << 20 and "more bytes of output cut" in res.output
    assert res.supervisor_peak_mb is not None and res.supervisor_peak_mb < 100
