"""A seccomp filter for sandboxed code (standard library only: runs inside the sandbox).

A small classic-BPF program, built here and installed with prctl(2), refuses (EPERM) the system
calls that tested code never needs and that widen what it can reach: mounting and pivoting,
ptrace and cross-process memory access, kernel keyrings, BPF, perf events, module loading, kexec,
reboot and clock setting, new namespaces (`unshare`, `setns`, and `clone` with any CLONE_NEW* flag),
io_uring (its operations would bypass this filter), userfaultfd, file handles, and `memfd_create`
(anonymous memory files would get around the memory limit where no memory cgroup exists).
`clone3` answers ENOSYS, so the C library falls back to `clone`, whose flags the filter can read.

Hand-built rather than through libseccomp: the program is a dozen lines of logic, the Python
bindings for libseccomp are unmaintained, and this keeps the sandbox free of native dependencies.
Only x86-64 has a table here; on other architectures no filter is installed and the run's
`isolation.seccomp` says so. Calls through the 32-bit and x32 ABIs are refused outright.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
CLONE_NEW_FLAGS = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

# x86-64 numbers (arch/x86/entry/syscalls/syscall_64.tbl).
DENIED_X86_64 = {
    "ptrace": 101, "syslog": 103, "iopl": 172, "ioperm": 173, "mount": 165, "umount2": 166, "pivot_root": 155,
    "chroot": 161, "acct": 163, "settimeofday": 164, "adjtimex": 159, "swapon": 167, "swapoff": 168,
    "reboot": 169, "sethostname": 170, "setdomainname": 171, "init_module": 175, "delete_module": 176,
    "quotactl": 179, "lookup_dcookie": 212, "clock_settime": 227, "add_key": 248, "request_key": 249,
    "keyctl": 250, "kexec_load": 246, "unshare": 272, "perf_event_open": 298, "fanotify_init": 300,
    "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "memfd_create": 319,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "pidfd_getfd": 438, "mount_setattr": 442, "memfd_secret": 447,
}
CLONE_X86_64 = 56
CLONE3_X86_64 = 435

# Classic BPF opcodes.
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program() -> bytes | None:
    """The filter for this machine's architecture, or None where there is no table."""
    if platform.machine() not in ("x86_64", "amd64"):
        return None
    deny = RET_ERRNO | errno.EPERM
    denied = sorted(DENIED_X86_64.values())
    # Layout: arch check, load nr, x32 check, one JEQ per denied call (jumping to the shared DENY),
    # clone3 -> ENOSYS, clone -> flag check, allow.
    body: list[tuple[int, int, int, int]] = []
    n_deny = len(denied)
    # Instruction indexes of the tail, counted from the start of the per-call checks.
    # tail: [0] JEQ clone3, [1] JEQ clone, [2] RET ALLOW, [3] RET ENOSYS, [4] LD arg0, [5] JSET, [6] RET ALLOW,
    #       [7] RET DENY
    for i, nr in enumerate(denied):
        to_deny = (n_deny - i - 1) + 7
        body.append((JEQ_K, to_deny, 0, nr))
    tail = [
        (JEQ_K, 2, 0, CLONE3_X86_64),
        (JEQ_K, 2, 0, CLONE_X86_64),
        (RET_K, 0, 0, RET_ALLOW),
        (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
        (LD_W_ABS, 0, 0, 16),  # low 32 bits of args[0] (the clone flags)
        (JSET_K, 1, 0, CLONE_NEW_FLAGS),
        (RET_K, 0, 0, RET_ALLOW),
        (RET_K, 0, 0, deny),
    ]
    head = [
        (LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (RET_K, 0, 0, deny),
        (LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (JGE_K, 0, 1, X32_SYSCALL_BIT),
        (RET_K, 0, 0, deny),
    ]
    return b"".join(_insn(*i) for i in head + body + tail)


def install() -> bool:
    """Install the filter on the calling thread (inherited by its children). Needs no_new_privs
    (or CAP_SYS_ADMIN). Returns False where no filter exists for this architecture."""
    prog = program()
    if prog is None:
        return False

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")
    return True
