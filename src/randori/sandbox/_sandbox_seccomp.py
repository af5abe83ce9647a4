"""A seccomp filter for sandboxed code (standard library only: runs inside the sandbox).

A small classic-BPF program, built here and installed with prctl(2), refuses (EPERM) the system
calls that tested code never needs and that widen what it can reach: mounting and pivoting,
ptrace and cross-process memory access, kernel keyrings, BPF, perf events, module loading, kexec,
reboot and clock setting, new namespaces (`unshare`, `setns`, and `clone` with any CLONE_NEW* flag),
io_uring (its operations would bypass this filter), userfaultfd, file handles, `memfd_create`
(anonymous memory files would get around the memory limit where no memory cgroup exists),
`modify_ldt` and `personality` (old kernel surface: segment tables, execution domains). Sockets of
any family but Unix, IPv4, IPv6 and netlink (which the C library's resolver uses) are refused with
EAFNOSUPPORT: no AF_VSOCK (a VM's host services), AF_PACKET, AF_ALG, Bluetooth, ....
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
    "modify_ldt": 154, "personality": 135,
}
CLONE_X86_64 = 56
CLONE3_X86_64 = 435
SOCKET_X86_64, SOCKETPAIR_X86_64 = 41, 53
# AF_UNIX, AF_INET, AF_INET6, AF_NETLINK.
ALLOWED_FAMILIES = (1, 2, 10, 16)

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
    # (opcode, jump-if-true label, jump-if-false label, k); a label is a name defined below, or 0.
    code: list[tuple[int, str | int, str | int, int]] = [
        (LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (RET_K, 0, 0, deny),
        (LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (JGE_K, 0, 1, X32_SYSCALL_BIT),
        (RET_K, 0, 0, deny),
    ]
    code += [(JEQ_K, "deny", 0, nr) for nr in sorted(DENIED_X86_64.values())]
    code += [
        (JEQ_K, "enosys", 0, CLONE3_X86_64),
        (JEQ_K, "clone", 0, CLONE_X86_64),
        (JEQ_K, "socket", 0, SOCKET_X86_64),
        (JEQ_K, "socket", 0, SOCKETPAIR_X86_64),
        (RET_K, 0, 0, RET_ALLOW),
    ]
    labels: dict[str, int] = {}

    def label(name: str) -> None:
        labels[name] = len(code)

    label("enosys")
    code.append((RET_K, 0, 0, RET_ERRNO | errno.ENOSYS))
    label("clone")
    code += [(LD_W_ABS, 0, 0, 16),  # low 32 bits of args[0]: the clone flags
             (JSET_K, "deny", 0, CLONE_NEW_FLAGS),
             (RET_K, 0, 0, RET_ALLOW)]
    label("socket")
    code.append((LD_W_ABS, 0, 0, 16))  # args[0]: the address family
    code += [(JEQ_K, "allow", 0, family) for family in ALLOWED_FAMILIES]
    code.append((RET_K, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT))
    label("allow")
    code.append((RET_K, 0, 0, RET_ALLOW))
    label("deny")
    code.append((RET_K, 0, 0, deny))

    def offset(at: int, target: str | int) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - at - 1
        assert 0 <= jump < 256, "classic BPF jumps forward by at most 255"
        return jump

    return b"".join(_insn(op, offset(i, jt), offset(i, jf), k) for i, (op, jt, jf, k) in enumerate(code))


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
