"""The one way a program's read reaches a file: a descriptor opened part by part below the workspace root.

``view`` and the sandbox's file idioms (``open()``, ``Path.read_text``, ``iterdir``, ``os.walk``, ``Path.stat``)
all open through :func:`open_inside`. Each part of the path is opened relative to the folder before it and none is
followed if it is a symbolic link, so the descriptor lies under the root however the tree changes meanwhile: the
check and the open are the same system calls, and there is no resolved string to race. A path with a link or
``..`` on the way is first resolved (links inside the workspace are fine), and its real path is then opened the
same way: a link swapped in since is refused, never followed.
"""
from __future__ import annotations

import errno
import os
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import NamedTuple, Protocol

from ..errors import ToolError
from .pathnames import quote


class Resolving(Protocol):
    """What :func:`open_inside` needs of a workspace (:class:`codeact.core.boundary.Workspace`)."""

    @property
    def root(self) -> Path: ...

    def resolve_stat(self, path: str | os.PathLike[str], *, must_exist: bool = False
                     ) -> tuple[str, os.stat_result | None]: ...

    def reading(self, given: str) -> str: ...

_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_PATH = getattr(os, "O_PATH", 0)
# a folder on the way, opened only to be looked in (Linux: ``O_PATH``, so a folder with no read permission passes)
_BENEATH_DIR = (_O_PATH or os.O_RDONLY) | _DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
OPEN_FOLDER = _BENEATH_DIR  # for the resolutions that walk a path part by part (codeact.core.resolution)
# the last part: read (a FIFO does not block; a terminal is never made the controlling one), or only looked at
READ = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        | getattr(os, "O_NOCTTY", 0))
LOOK = (_O_PATH | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)) if _O_PATH else READ
# each part opened relative to the one before, none followed if a link: needs ``openat`` and ``O_NOFOLLOW``
CAN_OPEN_BENEATH = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and os.sep == "/"


class Opened(NamedTuple):
    """An open descriptor of a path inside the workspace (the caller closes it), its ``fstat``, and the path as the
    program sees it (relative to the root, ``.`` for the root). ``fd`` is -1 for a folder where the platform
    opens no folder descriptor (Windows): ``real`` is its checked path then."""

    fd: int
    stat: os.stat_result
    shown: str
    real: str


def open_inside(workspace: Resolving, path: str | os.PathLike[str], *, look: bool = False) -> Opened:
    """A read-only descriptor of ``path`` (relative to the workspace root, or absolute) that cannot lie outside the
    workspace. ``look``: only to ``fstat`` it (Linux: ``O_PATH``, so an unreadable file or a socket can be
    looked at). Raises :class:`PolicyError` (outside), :class:`FileNotFoundError`, :class:`NotADirectoryError`
    (a file named with a trailing ``/``), or :class:`ToolError` when the path changed while it was opened (a
    link put on its way) or is a socket."""
    given = os.fspath(path)
    raw = workspace.reading(given)  # a name that is not UTF-8 comes back quoted (codeact.core.pathnames)
    root = str(workspace.root)
    flags = LOOK if look else READ
    if CAN_OPEN_BENEATH:
        plain = raw[len(root) + 1:] if raw[:1] == "/" and raw.startswith(root + "/") else raw  # absolute, in the root
        got = _open_beneath(root, plain, flags, strict=False)  # the common case: a plain path, no link
        if got is not None:
            return got
    real, _ = workspace.resolve_stat(given, must_exist=True)  # PolicyError, FileNotFoundError
    rel = real[len(root) + 1:] if real != root else "."
    if names_folder(raw):
        rel += "/"
    if CAN_OPEN_BENEATH:
        opened = _open_beneath(root, rel, flags, strict=True)
        assert opened is not None  # strict: raises instead
        return opened
    return _open_by_path(real, rel.rstrip("/") or ".", names_folder(raw))  # pragma: no cover - Windows


def open_listed(root: str, rel: str) -> Opened:
    """A read-only descriptor of ``rel``, a plain relative path a listing of the folder ``root`` gave, opened part by
    part with no link followed: a folder swapped for a link since the listing is refused (:class:`ToolError`), never
    followed. For a tool that reads the files it listed (outline, in this process and in its workers)."""
    if CAN_OPEN_BENEATH:
        opened = _open_beneath(root, rel, READ, strict=True)
        assert opened is not None  # strict: raises instead
        return opened
    fd = os.open(root + "/" + rel, READ)  # pragma: no cover - Windows: the last part is not followed
    return Opened(fd, os.fstat(fd), rel, root + "/" + rel)  # pragma: no cover


def open_regular_within(path: str | os.PathLike[str], top: str | None) -> tuple[int, os.stat_result] | None:
    """A read-only descriptor of the regular file ``path`` (the caller closes it) and its ``fstat``, or ``None``:
    missing, not a regular file, or (``top`` given) what was opened lies outside ``top``. For the files CodeAct
    reads for itself (ignore files, ``.gitmodules``, hooks files) where a program may have put a link: what was
    opened is checked, not the path it was opened by, so a file swapped for a link meanwhile is seen, and a link
    leading out is never read. ``O_NONBLOCK``: a FIFO does not hold the open."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if S_ISREG(info.st_mode) and (top is None or _opened_within(fd, os.fspath(path), top)):
            return fd, info
    except OSError:
        pass
    os.close(fd)
    return None


def read_regular_within(path: str | os.PathLike[str], top: str | None, limit: int
                        ) -> tuple[bytes, os.stat_result] | None:
    """At most ``limit + 1`` bytes of the regular file ``path`` (so a caller sees one past ``limit`` as too large)
    and its ``fstat``, as :func:`open_regular_within` opens it; ``None`` where it is not read."""
    opened = open_regular_within(path, top)
    if opened is None:
        return None
    fd, info = opened
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit + 1), info
    except OSError:
        return None
    finally:
        os.close(fd)


def _opened_within(fd: int, path: str, top: str) -> bool:
    """Whether what ``fd`` opened lies at or below ``top``: its real path as the kernel names the descriptor
    (``/proc``), else the path's real path (where there is no ``/proc``, a swap between the two is not seen)."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        real = os.path.realpath(path)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _open_beneath(root: str, raw: str, flags: int, *, strict: bool) -> Opened | None:
    """``raw``'s parts opened one by one below ``root``, each relative to the folder before and none followed if it
    is a link. Not ``strict``: ``None`` for anything but a plain relative path that exists (``..``, an absolute
    path, a link on the way, a missing part, a socket). ``strict`` (``raw`` is a real path, just resolved): what
    stops it is an error, a link on the way meaning it changed since. A trailing ``/`` or ``/.`` on a file is
    :class:`NotADirectoryError`, as the kernel says. (The first part is opened by its whole path: ``root`` is a
    real path, and what lies above it is the user's, not the program's, to change.)"""
    if not raw or raw[0] == "/":
        return None
    parts = raw.split("/")
    if "" in parts or "." in parts or ".." in parts:  # a trailing "/", "./", "a//b": the names alone
        parts = [part for part in parts if part and part != "."]
        if ".." in parts:
            return None
        name = "/".join(parts) or "."
        wants_folder = names_folder(raw) or not parts
    else:
        name, wants_folder = raw, False
    last = parts.pop() if parts else ""
    last_flags = flags | _DIRECTORY if wants_folder else flags
    folder, at_last = None, not parts
    try:
        if parts:
            folder = os.open(root + "/" + parts[0], _BENEATH_DIR)
            for part in parts[1:]:
                inner = os.open(part, _BENEATH_DIR, dir_fd=folder)
                os.close(folder)
                folder = inner
            at_last = True
            fd = os.open(last, last_flags, dir_fd=folder)
        else:
            fd = os.open(root + "/" + last if last else root, last_flags)
    except OSError as exc:
        if at_last and wants_folder and exc.errno == errno.ENOTDIR and _is_file(root if folder is None else folder,
                                                                              last):
            raise not_a_folder(quote(name)) from None
        if strict:
            raise _failed(exc, quote(name)) from None
        return None
    except ValueError:  # a NUL byte
        if strict:
            raise
        return None
    finally:
        if folder is not None:
            os.close(folder)
    # as the program sees it (a name that is not UTF-8, quoted)
    return _checked(fd, root if name == "." else root + "/" + name, quote(name), wants_folder, strict)


def _failed(exc: OSError, shown: str) -> Exception:
    """What an open of a just-resolved real path that failed means to the program."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return _changed(shown)
    if exc.errno == errno.ENXIO:  # a socket (or a device with no driver) cannot be opened for reading
        return ToolError(f"{shown} is a socket or device, not a file: regular files and folders are read")
    if exc.errno == errno.ENOENT:
        return FileNotFoundError(errno.ENOENT, "No such file or folder", shown)
    return type(exc)(exc.errno, exc.strerror, shown)


def _changed(shown: str) -> ToolError:
    return ToolError(f"{shown} changed while it was opened (a link put in its place or on its way?); nothing was "
                     "read; try again")


def _checked(fd: int, real: str, shown: str, wants_folder: bool, strict: bool) -> Opened | None:
    """The opened descriptor with its ``fstat``, once it is no link itself (``O_PATH | O_NOFOLLOW`` opens a link
    rather than failing) and a folder where the path names one."""
    try:
        stat = os.fstat(fd)
        if S_ISLNK(stat.st_mode):
            if not strict:
                os.close(fd)
                return None
            raise _changed(shown)
        if wants_folder and not S_ISDIR(stat.st_mode):
            raise not_a_folder(shown)
    except BaseException:
        os.close(fd)
        raise
    return Opened(fd, stat, shown, real)


def _open_by_path(real: str, shown: str, folder_only: bool) -> Opened:  # pragma: no cover - Windows
    """Where there is no ``openat``: the checked path itself (a folder gets no descriptor)."""
    stat = os.stat(real)
    if S_ISDIR(stat.st_mode):
        return Opened(-1, stat, shown, real)
    if folder_only:
        raise not_a_folder(shown)
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    return Opened(fd, os.fstat(fd), shown, real)


def names_folder(raw: str) -> bool:
    """Whether the path ``raw`` can only name a folder, as the kernel reads it: a trailing ``/`` or ``/.``."""
    return raw.endswith(("/", "/.")) or raw == "."


def not_a_folder(shown: str) -> NotADirectoryError:
    """The error for a file named as a folder (``f.txt/``), as the program sees it."""
    return NotADirectoryError(f"not a folder: {shown} is a file (drop the trailing '/')")


def is_regular_or_folder(opened: Opened) -> bool:
    """Whether what was opened can be read: a regular file or a folder (a FIFO would block, a device is no text)."""
    return S_ISREG(opened.stat.st_mode) or S_ISDIR(opened.stat.st_mode)


def _is_file(folder: str | int, name: str) -> bool:
    """Whether ``name`` in ``folder`` (a path, or a descriptor of the folder) is a regular file, no link followed."""
    try:
        if isinstance(folder, int):
            return S_ISREG(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
        return S_ISREG(os.lstat(folder + "/" + name).st_mode)
    except OSError:
        return False


__all__ = ["CAN_OPEN_BENEATH", "LOOK", "OPEN_FOLDER", "READ", "Opened", "is_regular_or_folder", "names_folder", "not_a_folder",
           "open_inside", "open_listed"]
