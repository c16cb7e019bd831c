"""Safe writes inside the workspace: no link followed, one writer per file, nothing half-written left behind.

A write goes through :func:`slot`, which

- walks from the workspace root to the file's folder one component at a time with ``O_NOFOLLOW`` (openat style,
  ``os.open(name, flags, dir_fd=...)``), so a folder swapped for a symbolic link after the policy check cannot
  redirect the write outside the workspace: the walk fails instead;
- holds an advisory ``flock`` on a lock file that the rename never replaces (a lock on the file itself is lost when
  the rename swaps its inode), across re-read, change and rename, so two runs editing one file both land;
- writes a temporary file named ``.<name>.<token>.codeact-tmp`` in the same folder, records it in a journal and
  renames it over the file (``create`` links it instead, which fails when the name exists: two creates cannot both
  succeed). A run killed mid-write leaves the temporary file and its journal entry; the next run that writes
  removes it once it is old enough and no writer holds its lock.

Where the locks and the journal live: in a private per-user folder, never in the workspace (a lock file beside the
target would show in ``git status`` and could be committed). It is ``$XDG_CACHE_HOME/codeact/writes`` (default
``~/.cache/codeact/writes``), the cache folder codeact already owns and programs may not write; if that cannot be
made private (a read-only home), ``<tmp>/codeact-<uid>/writes``. Locks are keyed by the folder's device and inode
and the file's name — the folder's inode, unlike the file's, survives the rename, and the key does not depend on
the path the file was reached by — hashed into a fixed set of lock files, so the folder never grows; two names
that share a lock file only wait for each other. Two processes of one user agree on the folder because they share
the environment; runs of different users do not exclude each other (each writes with its own permissions).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath

from ..errors import PolicyError, ToolError
from ..paths import xdg_dir
from ..privatedir import ensure_private_dir

TMP_SUFFIX = ".codeact-tmp"
LEFTOVER_AGE = 300.0  # seconds: a temporary file younger than this may belong to a write still under way
LOCK_WAIT = 10.0  # seconds a write waits for another writer of the same file
_BUCKETS = 4096
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)  # no CRLF on Windows
_OPENAT = os.open in os.supports_dir_fd and os.name == "posix"
_cleaned = False
_private: dict[str, Path] = {}  # cache base -> the folder in use


def private_dir() -> Path:
    """The per-user folder for write locks and the journal of temporary files (see the module docstring)."""
    base = xdg_dir("cache")
    known = _private.get(str(base))
    if known is not None and (known / "locks").is_dir() and (known / "pending").is_dir():
        return known
    uid = os.geteuid() if hasattr(os, "geteuid") else 0
    tried = []
    import tempfile  # only on a first write: not on the start-up path

    per_user = Path(tempfile.gettempdir()) / f"codeact-{uid}"
    for private, folder in ((None, base / "codeact" / "writes"), (per_user, per_user / "writes")):
        try:  # others may not see which files are written, nor take the locks
            if private is not None:  # in the shared temporary folder: codeact-<uid> is this user's alone
                ensure_private_dir(private, what="write-lock folder")
            ensure_private_dir(folder, what="write-lock folder", parents=True)
            for sub in ("locks", "pending"):
                ensure_private_dir(folder / sub, what="write-lock folder")
            _private[str(base)] = folder
            return folder
        except OSError as exc:
            tried.append(str(exc))
    raise ToolError(f"cannot make a private folder for write locks ({'; '.join(tried)}); set XDG_CACHE_HOME "
                    "to a folder you own")


class Slot:
    """One file name in a folder opened without following links, locked for this writer."""

    def __init__(self, dir_fd: int | None, folder: Path, name: str, where: str) -> None:
        self.dir_fd, self.folder, self.name, self.where = dir_fd, folder, name, where

    def _at(self) -> dict[str, int]:
        return {"dir_fd": self.dir_fd} if self.dir_fd is not None else {}

    def _path(self, name: str) -> str:
        return name if self.dir_fd is not None else str(self.folder / name)

    def exists(self) -> bool:
        """Whether the name exists (a link counts, and is not followed)."""
        try:
            os.stat(self._path(self.name), follow_symlinks=False, **self._at())
            return True
        except FileNotFoundError:
            return False

    def read(self, limit: int | None = None, too_large: Callable[[int], Exception] | None = None
             ) -> tuple[bytes, os.stat_result]:
        """The file's bytes and status, refusing what ``edit`` must not change: a link, a special file, a file
        with other hard links (its other names may lie outside the workspace) or a read-only file. A file of more
        than ``limit`` bytes (by its status, or as it is read) is refused with ``too_large(size)``, unread."""
        try:
            fd = os.open(self._path(self.name), os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), **self._at())
        except FileNotFoundError:
            raise FileNotFoundError(f"no such file: {self.where}") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PolicyError(f"{self.where} became a symbolic link after it was checked; nothing was written "
                                  "(a write never follows a link the policy has not seen)") from None
            raise
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{self.where} is not a regular file; edit changes text files only")
            if info.st_nlink > 1:
                raise PolicyError(f"{self.where} has {info.st_nlink} hard links; editing it would split them (the "
                                "other names, which may lie outside the workspace, would keep the old text), so it "
                                "is refused — copy it to a file of its own if the change is meant for this name")
            if _read_only(info, handle.fileno()):
                raise PolicyError(f"{self.where} is read-only (mode {stat.S_IMODE(info.st_mode):04o}); edit refuses "
                                "it, as an editor would. If it should change, the user can make it writable "
                                f"(chmod u+w {self.where})")
            if limit is None:
                return handle.read(), info
            data = handle.read(limit + 1) if info.st_size <= limit else b""
            if info.st_size > limit or len(data) > limit:  # by its status, or it grew since
                size = max(info.st_size, len(data))
                raise too_large(size) if too_large else ToolError(f"{self.where} has more than {limit:,} bytes")
            return data, info

    def replace(self, data: bytes, like: os.stat_result) -> None:
        """Put ``data`` in place of the file through a temporary file and a rename, keeping ``like``'s owner (when
        running as root; the group where allowed) and mode."""
        with self._temporary(data, 0o600) as (tmp, fd):
            _keep_owner_and_mode(fd, like)
            os.replace(self._path(tmp), self._path(self.name),
                       **({"src_dir_fd": self.dir_fd, "dst_dir_fd": self.dir_fd} if self.dir_fd is not None else {}))

    def create(self, data: bytes) -> None:
        """Write a NEW file holding ``data``; raises :class:`FileExistsError` if the name exists (also when another
        run created it a moment ago: the temporary file is linked, never renamed, over the name)."""
        with self._temporary(data, 0o666) as (tmp, _fd):  # 0o666 & ~umask, as any new file
            try:
                if self.dir_fd is not None:
                    os.link(tmp, self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd, follow_symlinks=False)
                else:
                    os.link(self._path(tmp), self._path(self.name))
            except FileExistsError:
                raise FileExistsError(f"{self.where} already exists; use edit() to change it") from None
            except OSError as exc:  # a file system without hard links: the lock makes check-then-rename safe
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS):
                    raise
                if self.exists():
                    raise FileExistsError(f"{self.where} already exists; use edit() to change it") from None
                if self.dir_fd is not None:
                    os.rename(tmp, self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
                else:
                    os.rename(self._path(tmp), self._path(self.name))

    @contextmanager
    def _temporary(self, data: bytes, mode: int) -> Iterator[tuple[str, int]]:
        """A locked temporary file holding ``data`` beside the target, recorded in the journal; removed (with its
        journal entry) when the block ends, whatever happens."""
        token = os.urandom(6).hex()
        stem = self.name.encode("utf-8", "surrogateescape")[:200].decode("utf-8", "ignore")
        tmp = f".{stem}.{token}{TMP_SUFFIX}"
        marker = _journal(self.folder / tmp, token)
        fd = -1
        try:
            fd = os.open(self._path(tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode, **self._at())
            _lock(fd, blocking=True)  # a cleaner never removes a temporary file whose writer is alive
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            yield tmp, fd
        finally:
            if fd >= 0:
                os.close(fd)
                try:
                    os.unlink(self._path(tmp), **self._at())
                except FileNotFoundError:  # renamed into place
                    pass
            marker.unlink(missing_ok=True)


@contextmanager
def slot(root: Path, rel: PurePath, where: str, *, make_parents: bool = False) -> Iterator[Slot]:
    """The file ``rel`` (relative to ``root``, already checked by the policy and free of links) opened for one
    writer: its folder reached without following links (``make_parents`` creates missing folders on the way),
    the file's lock held until the block ends."""
    parts = rel.parts
    if not parts:
        raise ToolError(f"{where} is a folder; give a file path")
    clean_leftovers_once()
    folder = root.joinpath(*parts[:-1])
    dir_fd = _walk(root, parts[:-1], where, make_parents) if _OPENAT else None
    try:
        if dir_fd is None:
            if make_parents:
                folder.mkdir(parents=True, exist_ok=True)
            info = os.stat(folder)
        else:
            info = os.fstat(dir_fd)
        with _locked(info, parts[-1], where):
            yield Slot(dir_fd, folder, parts[-1], where)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)


def open_folder(root: Path, parts: tuple[str, ...], where: str) -> int | None:
    """A descriptor of the folder ``root/parts...`` reached without following a link (:class:`PolicyError` if one
    was put on the way since the policy's check, :class:`FileNotFoundError` if a part is missing); ``None`` where
    the platform has no ``openat`` (Windows). The caller closes it."""
    return _walk(root, parts, where, False) if _OPENAT else None


def _walk(root: Path, parts: tuple[str, ...], where: str, make: bool) -> int:
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not make:
                    raise FileNotFoundError(f"no such file: {where}") from None
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                nxt = _open_dir(part, fd, where)
            except OSError as exc:
                raise _walk_error(exc, part, fd, where) from None
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_dir(part: str, fd: int, where: str) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _walk_error(exc, part, fd, where) from None


def _walk_error(exc: OSError, part: str, fd: int, where: str) -> Exception:
    try:
        link = stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        link = False
    if exc.errno == errno.ELOOP or link:
        return PolicyError(f"writing {where} is refused: {part!r} on its path became a symbolic link after the "
                           "check (a write never follows a link the policy has not seen); nothing was written")
    if exc.errno == errno.ENOTDIR:
        return NotADirectoryError(f"cannot write {where}: {part!r} on its path is a file, not a folder")
    return exc


@contextmanager
def _locked(folder: os.stat_result, name: str, where: str) -> Iterator[None]:
    import hashlib  # loading OpenSSL is slow: only when writing

    key = hashlib.sha256(f"{folder.st_dev}:{folder.st_ino}:{name.casefold()}".encode("utf-8", "surrogatepass"))
    path = private_dir() / "locks" / f"{int.from_bytes(key.digest()[:4], 'big') % _BUCKETS:03x}"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        waited = time.monotonic() + LOCK_WAIT
        pause = 0.0005
        while not _lock(fd, blocking=False):
            if time.monotonic() > waited:
                raise ToolError(f"another run has been writing {where} for {LOCK_WAIT:g} s; try again")
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        yield
    finally:
        os.close(fd)  # releases the lock


def _lock(fd: int, *, blocking: bool) -> bool:
    """An exclusive advisory lock on ``fd`` (flock; msvcrt on Windows); False if another holder has it."""
    try:
        import fcntl
    except ImportError:  # Windows: lock the first byte
        import msvcrt
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
            return True
        except OSError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False


def _read_only(info: os.stat_result, fd: int) -> bool:
    """Whether an editor would call the file read-only: root looks at the write bits; anyone else asks access()."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return not info.st_mode & 0o222
    try:
        return not os.access(f"/proc/self/fd/{fd}", os.W_OK) if os.path.isdir("/proc/self/fd") else \
            not info.st_mode & stat.S_IWUSR
    except OSError:
        return not info.st_mode & stat.S_IWUSR


def _keep_owner_and_mode(fd: int, like: os.stat_result) -> None:
    if hasattr(os, "fchown"):
        try:
            if os.geteuid() == 0:
                os.fchown(fd, like.st_uid, like.st_gid)
            elif like.st_gid != os.fstat(fd).st_gid:
                os.fchown(fd, -1, like.st_gid)  # allowed where the user is in that group
        except OSError:
            pass
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(like.st_mode))  # after chown, which clears set-id bits


def _journal(tmp: Path, token: str) -> Path:
    marker = private_dir() / "pending" / token
    with open(marker, "x", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write(str(tmp))
    return marker


def clean_leftovers(min_age: float = LEFTOVER_AGE) -> list[Path]:
    """Remove temporary files that killed writes left behind: those in the journal, older than ``min_age`` seconds
    and whose writer no longer holds their lock. Returns what was removed; never raises."""
    removed: list[Path] = []
    try:
        pending = private_dir() / "pending"
        entries = list(os.scandir(pending))
    except (OSError, ToolError):
        return removed
    now = time.time()
    for entry in entries:
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime < min_age:
                continue
            tmp = Path(Path(entry.path).read_text(encoding="utf-8", errors="surrogateescape"))
            state = _remove_if_abandoned(tmp, now - min_age)
            if state == "removed":
                removed.append(tmp)
            if state != "kept":
                os.unlink(entry.path)
        except OSError:
            continue
    return removed


def _remove_if_abandoned(tmp: Path, before: float) -> str:
    """"removed", "gone" (nothing to remove, or not a temporary file of ours) or "kept" (maybe still written)."""
    if not (tmp.name.startswith(".") and tmp.name.endswith(TMP_SUFFIX)):
        return "gone"
    try:
        fd = os.open(tmp, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:  # missing, or a link now: not ours to remove
        return "gone"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "gone"
        if info.st_mtime > before or not _lock(fd, blocking=False):
            return "kept"  # written to recently, or its writer is alive
        os.unlink(tmp)
        return "removed"
    finally:
        os.close(fd)


def clean_leftovers_once() -> None:
    """:func:`clean_leftovers`, the first time this process writes."""
    global _cleaned
    if not _cleaned:
        _cleaned = True
        clean_leftovers()


__all__ = ["LEFTOVER_AGE", "TMP_SUFFIX", "Slot", "clean_leftovers", "open_folder", "private_dir", "slot"]
