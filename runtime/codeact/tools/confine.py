"""A search child (ripgrep) that can read nothing outside the workspace, however the tree changes while it runs.

ripgrep walks and opens by path: a folder swapped for a link to an outside folder between its listing and its open is
followed. Where the kernel has Landlock (Linux 5.13+), the child is confined before it runs: it may read files and list
folders below the workspace root only (Landlock rules hold to the folders themselves, so a link leads nowhere outside),
and read, not list, the system libraries its loader needs and the system's programs. Where Landlock is missing the child runs unconfined, and
the limit is said in docs/security.md.

:func:`write_ruleset` builds the rule for a process that confines itself the same way once started (sql's worker: a
library that opens files by path, SQLite, runs there), which may open, create and remove files below one folder only.
"""
from __future__ import annotations

# Imports inside functions are lazy: each is needed only on the path that imports it.
import contextvars
import os
import stat
import struct
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
_RULE_PATH_BENEATH = 1
_READ_FILE, _READ_DIR = 1 << 2, 1 << 3
_WRITE_FILE, _REMOVE_FILE, _MAKE_REG, _TRUNCATE = 1 << 1, 1 << 5, 1 << 8, 1 << 14
_CREATE_RULESET_VERSION = 1
# the file system rights each Landlock ABI knows (1: execute .. make_sym; 2: refer; 3: truncate); a right not
# handled is allowed everywhere, so a confined thread handles all it can (later ABIs add device ioctls only)
_HANDLED_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1}
_PR_SET_NO_NEW_PRIVS = 38
# read, not listed: the loader's libraries, and the programs a wrapper script of ripgrep may run (exec reads them)
_LIBRARIES = ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32", "/etc/ld.so.cache", "/bin",
              "/usr/bin", "/usr/local/bin")

_root: contextvars.ContextVar[str | None] = contextvars.ContextVar("codeact_confine_root", default=None)
_memory: contextvars.ContextVar[int | None] = contextvars.ContextVar("codeact_confine_memory", default=None)
# a child's own address space above the run's memory limit: its program, libraries, thread stacks (as the host
# modules' child has, codeact.backends.host_modules)
CHILD_HEADROOM = 128 * 1024 * 1024
_libc: Any = None  # ctypes.CDLL, loaded when first needed


@contextmanager
def reads_below(root: Path, memory: int | None = None) -> Iterator[None]:
    """Within the block, the children :func:`preexec` is given to read only below ``root`` and, with ``memory``
    (the run's memory limit, bytes), to map at most that and :data:`CHILD_HEADROOM` (``RLIMIT_AS``)."""
    token, bound = _root.set(str(root)), _memory.set(memory)
    try:
        yield
    finally:
        _memory.reset(bound)
        _root.reset(token)


def preexec(extra: tuple[str, ...] = ()) -> Callable[[], None] | None:
    """A ``preexec_fn`` confining the child to the current :func:`reads_below` root (plus the files ``extra``
    names) and bounding its address space by the block's memory, or ``None`` where there is no root, or neither
    Landlock nor a memory bound. The ruleset is built here, in the parent: the child only applies it. A function
    that bounds memory carries it as ``memory`` (what :func:`memory_of` reads)."""
    root = _root.get()
    if root is None or not sys.platform.startswith("linux"):
        return None
    fence = _fence(root, extra)
    memory = _memory.get()
    if memory is None:
        return fence
    import resource

    limit, setrlimit = memory + CHILD_HEADROOM, resource.setrlimit

    def bounded() -> None:
        try:
            setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            os._exit(126)  # never run unbounded once a bound was meant to hold
        if fence is not None:
            fence()

    bounded.ruleset = getattr(fence, "ruleset", None)  # type: ignore[attr-defined]
    bounded.memory = memory  # type: ignore[attr-defined]
    return bounded


def address_space(memory: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` bounding the child's address space by ``memory`` and :data:`CHILD_HEADROOM` (``RLIMIT_AS``),
    and writing no core file (a child the bound ends may crash, in its working folder: the workspace), nothing else
    (a child that must read the runtime and its libraries: outline's workers); ``None`` off Linux. It carries no
    ``memory``: how such a child ended is its caller's to tell."""
    if not sys.platform.startswith("linux"):
        return None
    import resource

    limit, setrlimit = memory + CHILD_HEADROOM, resource.setrlimit

    def bounded() -> None:
        try:
            setrlimit(resource.RLIMIT_AS, (limit, limit))
            setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ValueError, OSError):
            os._exit(126)  # never run unbounded once a bound was meant to hold

    return bounded


def memory_of(fn: Callable[[], None] | None) -> int | None:
    """The run's memory limit a :func:`preexec` function bounds its child by, or ``None``."""
    return getattr(fn, "memory", None)


def _fence(root: str, extra: tuple[str, ...]) -> Callable[[], None] | None:
    """The Landlock half of :func:`preexec`, or ``None`` where the kernel has no Landlock."""
    ruleset = _ruleset(root, extra)
    if ruleset is None:
        return None
    libc = _libc
    assert libc is not None

    def confine() -> None:
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            os._exit(126)  # never run unconfined once confinement was meant to hold

    confine.ruleset = ruleset  # type: ignore[attr-defined]  # the caller closes it once the child started
    return confine


def can_confine_threads() -> bool:
    """Whether :func:`write_ruleset` gives a ruleset (Landlock, on Linux)."""
    return _abi() > 0


def _abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (or no Linux, no ctypes)."""
    import ctypes

    global _libc
    if not sys.platform.startswith("linux"):
        return 0
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return 0
    _libc.syscall.restype = ctypes.c_long
    version = _libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def write_ruleset(folder_fd: int) -> int | None:
    """A ruleset letting a thread read, write, create, truncate and remove files below ``folder_fd`` (opened by the
    caller, so the rule holds to that folder whatever its path becomes; SQLite lists its folders to sync them) and
    read ``/dev/urandom``, and open nothing else on the file system; ``None`` where there is no Landlock (docs/
    security.md says what then runs unconfined). The caller closes it; sql's worker restricts itself by it
    (codeact.tools.sql_worker), once it has imported what it needs."""
    import ctypes

    abi = _abi()
    if abi <= 0:
        return None
    libc = _libc
    handled = _HANDLED_BY_ABI[min(abi, 3)]
    attr = struct.pack("=Q", handled)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return None
    try:
        rights = (_READ_FILE | _READ_DIR | _WRITE_FILE | _REMOVE_FILE | _MAKE_REG | _TRUNCATE) & handled
        rule = struct.pack("=Qi", rights, folder_fd)
        if libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.c_char_p(rule),
                        ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "Landlock refused a rule for the database's folder")
        _allow(libc, ruleset, "/dev/urandom", _READ_FILE)  # SQLite's randomness; without it, a weaker seed
    except BaseException:
        os.close(ruleset)
        raise
    return int(ruleset)


def close(fn: Callable[[], None] | None) -> None:
    """Close the ruleset descriptor of a :func:`preexec` function (after the child started)."""
    ruleset = getattr(fn, "ruleset", None)
    if ruleset is not None:
        os.close(ruleset)


def _ruleset(root: str, extra: tuple[str, ...]) -> int | None:
    import ctypes

    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return None
    libc = _libc
    libc.syscall.restype = ctypes.c_long
    attr = struct.pack("=Q", _READ_FILE | _READ_DIR)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return None  # no Landlock here (ENOSYS, EOPNOTSUPP)
    try:
        if not _allow(libc, ruleset, root, _READ_FILE | _READ_DIR):
            os.close(ruleset)
            return None
        for path in (*_LIBRARIES, *extra):
            _allow(libc, ruleset, path, _READ_FILE)
    except BaseException:
        os.close(ruleset)
        raise
    return int(ruleset)


def _allow(libc: Any, ruleset: int, path: str, access: int) -> bool:
    import ctypes

    try:
        fd = os.open(path, getattr(os, "O_PATH", os.O_RDONLY) | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= _READ_FILE  # a file rule may hold only file rights
        rule = struct.pack("=Qi", access, fd)
        return bool(libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                            ctypes.c_char_p(rule), ctypes.c_uint32(0)) == 0)
    finally:
        os.close(fd)


def outside(fd: int) -> bool:
    """Whether the open ``fd`` lies outside the current :func:`reads_below` root: what the kernel opened, not the
    path it was opened by (a folder on the way swapped for a link is seen). ``False`` with no root, or where the
    platform cannot tell (no ``/proc``)."""
    root = _root.get()
    if root is None:
        return False
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return False
    return real != root and not real.startswith(root.rstrip("/") + "/")


def open_below(path: str | os.PathLike[str], flags: int = os.O_RDONLY) -> int:
    """``path`` opened (``O_NOFOLLOW``) and checked with :func:`outside`: :class:`PermissionError` if it lies out."""
    named = os.fspath(path)
    magic = named.startswith("/proc/")  # a descriptor's own path (/proc/PID/fd/N): a link to follow by design
    fd = os.open(named, flags | (0 if magic else getattr(os, "O_NOFOLLOW", 0)) | getattr(os, "O_CLOEXEC", 0))
    if outside(fd):
        os.close(fd)
        raise PermissionError(f"{os.fspath(path)} lies outside the workspace now (a folder on its way was swapped "
                              "for a link); it was not read")
    return fd
