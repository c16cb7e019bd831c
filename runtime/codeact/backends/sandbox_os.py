"""The file system a program sees: the workspace, read through the same policy as the tools.

Models write ``open(p)``, ``Path(p).read_text()``, ``os.walk(".")``, ``Path("src").rglob("*.py")``. pydantic-monty
hands each such call to the host as an OS call (``Path.exists``, ``open``, ``Path.scan``, ...); :class:`WorkspaceOS`
answers them over the workspace, opening every path as ``view`` does (:mod:`codeact.core.beneath`: part by part
below the root, no link followed on the way, links inside resolved first: nothing outside the workspace, however
the tree changes meanwhile).
The program's working directory is the workspace root, so ``os.getcwd()`` and relative paths are what CPython run
there would give. Writes are refused with a hint naming the write tools (their safe-write path is the only one);
the environment stays closed.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import PurePosixPath
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import Any

from ..core import notices
from ..core.beneath import Opened
from ..core.boundary import Workspace
from ..core.pathnames import quote
from ..core.resolution import MAX_LINKS
from ..errors import PolicyError, ToolError

MAX_SCAN_ENTRIES = 200_000  # one os.walk / rglob reply; past it the call fails loudly (never a part of the tree)
MAX_READ = 64 * 1024 * 1024  # one file read whole (monty reads a file whole, even for readline); past it: refused

_WRITES = {"Path.write_text", "Path.write_bytes", "Path.append_text", "Path.append_bytes", "Path.mkdir",
           "Path.unlink", "Path.rmdir", "Path.rename"}
WRITE_HINT = ("programs change files through the write tools, which check and write safely: "
              "create(path=..., file_text=...) for a new file, edit(path=..., old_str=..., new_str=...) to change one")


class WorkspaceOS:
    """Answers the sandbox's file-system OS calls over ``workspace``: ``answer(name, args, kwargs)`` returns the
    value, or raises the exception the program should get; ``None`` from :meth:`handles` means "not a file call"."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.root = str(workspace.root)
        self._calls: dict[str, Callable[..., Any]] = {
            "Path.exists": self._exists, "Path.is_file": self._is_file, "Path.is_dir": self._is_dir,
            "Path.is_symlink": self._is_symlink, "open": self._open, "Path.read_text": self._read_text,
            "Path.read_bytes": self._read_bytes, "Path.iterdir": self._iterdir, "Path.scan": self._scan,
            "Path.stat": self._stat, "Path.resolve": self._resolve, "Path.absolute": self._absolute,
        }

    def handles(self, name: str) -> bool:
        return name in self._calls or name in _WRITES

    def answer(self, name: str, args: Any, kwargs: dict[str, Any]) -> Any:
        if name in _WRITES:
            target = self._shown(args[0]) if args else "?"
            raise PermissionError(f"{name}({target!r}): the sandbox does not write "
                                  f"files directly; {WRITE_HINT}")
        return self._calls[name](*args, **kwargs)

    # ----------------------------------------------------------------------------------------------- paths
    def _shown(self, path: Any) -> str:
        """A path as the program most likely wrote it: relative to the working directory (the root) when inside."""
        text = str(_path_of(path))
        if text == self.root:
            return "."
        if text.startswith(self.root + "/"):
            return text[len(self.root) + 1:]
        return text

    def _real(self, path: Any) -> str:
        """The real path of a sandbox path, or PermissionError when it leaves the workspace."""
        try:
            try:
                return str(self.workspace.resolve(str(_path_of(path)), lexical=True))  # as os.path.realpath
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                return self.workspace.realpath(str(_path_of(path)))  # a loop: CPython's non-strict answer
        except PolicyError as exc:
            raise PermissionError(f"{self._shown(path)!r}: {exc}") from None

    def _opened(self, path: Any, *, look: bool = False) -> Opened:
        """A descriptor of ``path`` opened as ``view`` opens one (:mod:`codeact.core.beneath`: part by part below
        the root, no link followed, so nothing swapped in meanwhile leads out); the caller closes it."""
        try:
            return self.workspace.open_inside(str(_path_of(path)), look=look)
        except PolicyError as exc:
            raise PermissionError(f"{self._shown(path)!r}: {exc}") from None
        except FileNotFoundError:
            raise FileNotFoundError(f"[Errno 2] No such file or directory: {self._shown(path)!r}") from None
        except ToolError as exc:
            raise OSError(str(exc)) from None

    def _look(self, path: Any, *, strict: bool = False) -> os.stat_result | None:
        """The ``stat`` of ``path`` (links inside followed), ``None`` where nothing is there, and where a file is
        used as a folder or a link loop met, unless ``strict``: then the kernel's NotADirectoryError or OSError
        ELOOP, as ``os.stat`` raises them."""
        try:
            opened = self._opened(path, look=True)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if strict:
                raise
            if isinstance(exc, NotADirectoryError) or exc.errno == errno.ELOOP:  # as CPython's exists() says
                return None
            raise
        if opened.fd >= 0:
            os.close(opened.fd)
        return opened.stat

    def _existing(self, path: Any) -> os.stat_result:
        try:
            found = self._look(path, strict=True)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # os.stat, os.scandir: CPython's OSError, not "no such file"
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), self._shown(path)) from None
            raise
        if found is None:
            raise FileNotFoundError(f"[Errno 2] No such file or directory: {self._shown(path)!r}")
        return found

    # ----------------------------------------------------------------------------------------------- calls
    def _exists(self, path: Any) -> bool:
        return self._look(path) is not None

    def _is_file(self, path: Any) -> bool:
        found = self._look(path)
        return found is not None and S_ISREG(found.st_mode)

    def _is_dir(self, path: Any) -> bool:
        found = self._look(path)
        return found is not None and S_ISDIR(found.st_mode)

    def _is_symlink(self, path: Any) -> bool:
        # the program's path read as a real one first (``"..\\057x"`` is ``../x``), then split: its folder must be
        # inside, opened as every idiom opens one, and the last name is looked at in that folder only
        head, name = os.path.split(self.workspace.reading(str(_path_of(path))))
        if name in ("", ".", ".."):  # ``x/``, ``.``, ``x/..``: a folder, never a link; outside is refused
            self._look(path)
            return False
        try:
            folder = self._opened(quote(head) if head else ".", look=True)
        except (FileNotFoundError, NotADirectoryError):  # ``absent/x``: CPython's islink says False
            return False
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # ``loop/x``: its lstat fails, and CPython's islink says False
                return False
            raise
        try:
            return S_ISLNK(os.stat(name, dir_fd=folder.fd, follow_symlinks=False).st_mode)
        except OSError:
            return False
        finally:
            os.close(folder.fd)

    def _open(self, path: Any, mode: str = "r", *_rest: Any) -> Any:
        import pydantic_monty as pm

        if any(c in mode for c in "wax+"):
            raise PermissionError(f"open({self._shown(path)!r}, {mode!r}): the sandbox does not write files "
                                  f"directly; {WRITE_HINT}")
        opened = self._opened(path, look=True)  # FileNotFoundError, NotADirectoryError (``file/..``): CPython's
        if opened.fd >= 0:
            os.close(opened.fd)
        if S_ISDIR(opened.stat.st_mode):
            raise IsADirectoryError(f"[Errno 21] Is a directory: {self._shown(path)!r}")
        return pm.MontyFileHandle(str(_path_of(path)), mode)  # its reads come back as Path.read_text/read_bytes

    def _read_bytes(self, path: Any) -> bytes:
        opened = self._opened(path)
        try:
            if S_ISDIR(opened.stat.st_mode):
                raise IsADirectoryError(f"[Errno 21] Is a directory: {self._shown(path)!r}")
            if not S_ISREG(opened.stat.st_mode):
                raise OSError(f"{self._shown(path)!r} is no regular file (a FIFO, socket or device): the sandbox "
                              "reads regular files")
            size = opened.stat.st_size
            if size > MAX_READ:
                raise OSError(f"{self._shown(path)!r} is {size:,} bytes: the sandbox reads a file whole, and at "
                              f"most {MAX_READ:,} bytes; read parts of it with view(path=..., view_range=[first, "
                              "last]) or search it with grep(pattern=..., path=...)")
            data = b""
            while len(data) <= MAX_READ:  # what fstat says, then on to the end (it may have grown, or read short)
                more = os.read(opened.fd, max(size + 1 - len(data), 1 << 16))
                if not more:
                    return data
                data += more
            raise OSError(f"{self._shown(path)!r} grew past {MAX_READ:,} bytes while it was read")
        finally:
            os.close(opened.fd)

    def _read_text(self, path: Any, *_rest: Any) -> str:
        data = self._read_bytes(path)
        # CPython's text mode: UTF-8 here, universal newlines
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")

    def _iterdir(self, path: Any) -> list[PurePosixPath]:
        opened = self._opened(path)
        try:
            if not S_ISDIR(opened.stat.st_mode):
                raise NotADirectoryError(f"[Errno 20] Not a directory: {self._shown(path)!r}")
            names = os.listdir(opened.fd)
        finally:
            os.close(opened.fd)
        base = _path_of(path)
        return [base / quote(name, ending=True) for name in names]

    def _scan(self, path: Any, *, max_depth: int | None = None, follow_symlinks: bool = False,
              **_glob: Any) -> list[Any]:
        """``path`` and everything below it to ``max_depth`` (os.walk, os.scandir, Path.glob/rglob), each folder's
        entries in the order the file system lists them, as ``os.scandir`` gives them to CPython. Each folder is
        opened as ``view`` opens one (no link followed on the way), and a link is followed only to what lies
        inside. Fails at the run's deadline (checked at each folder listed, each link followed): a few committed
        links to ``.`` make a walk of every path through them, far longer than the run."""
        from pydantic_monty import ScanEntry

        from ..core.limits import Deadline

        clock = Deadline.current()

        def in_time() -> None:
            if clock is not None and clock.expired():
                stopped = (f"the walk of {self._shown(path)!r} was stopped at the run's deadline (the "
                           f"{clock.timeout:g} s time limit of the whole run) after {len(entries):,} entries; walk "
                           "a smaller folder, or list files with glob(pattern=..., path=...)")
                raise RuntimeError(stopped)  # not an OSError (TimeoutError is one): os.walk and glob would swallow it

        if not self.workspace.contains(str(_path_of(path)), loop=True):
            # os.walk and Path.glob swallow the error, as CPython's do: the note keeps the run from a silent []
            notices.note("files", f"{self._shown(path)!r} was not listed: it is outside the workspace (or a link "
                         "leads out of it); list the workspace's own folders")
        top = self._existing(path)
        entries = [ScanEntry("", S_ISDIR(top.st_mode), S_ISREG(top.st_mode), False)]
        if not entries[0].is_dir:
            return entries
        # (the folder as the program names it, its path below it, depth, links followed on the way)
        pending: list[tuple[str, str, int, int]] = [(str(_path_of(path)), "", 0, 0)]  # a stack: the next on top
        while pending:
            folder, relative, depth, links = pending.pop()
            if max_depth is not None and depth >= max_depth:
                continue
            in_time()
            try:
                children = self._listed(folder)
            except OSError:
                if depth == 0:
                    raise
                continue  # as CPython's os.walk does with an unreadable sub-folder
            below = []
            for raw_name, link, is_dir, is_file in children:
                # a name that is not UTF-8, quoted, its plain ending kept: Path.glob matches it (codeact.core.pathnames)
                name = quote(raw_name, ending=True)
                rel = f"{relative}/{name}" if relative else name
                if link:
                    in_time()
                    is_dir, is_file = self._link_kind(f"{folder}/{name}", rel, links)
                entries.append(ScanEntry(rel, is_dir, is_file, link))
                if len(entries) > MAX_SCAN_ENTRIES:
                    raise RuntimeError(f"{self._shown(path)!r} holds more than {MAX_SCAN_ENTRIES:,} entries; walk a "
                                       "smaller folder, or list files with glob(pattern=..., path=...)")
                if is_dir and (follow_symlinks or not link):
                    below.append((f"{folder}/{name}", rel, depth + 1, links + link))
            pending += reversed(below)  # depth first, each folder's sub-folders in listing order (os.walk's order)
        return entries

    def _listed(self, folder: str) -> list[tuple[str, bool, bool, bool]]:
        """A folder's entries through its descriptor: (name, is a link, is a folder, is a file), no link followed."""
        opened = self._opened(folder)
        try:
            if not S_ISDIR(opened.stat.st_mode):
                raise NotADirectoryError(f"[Errno 20] Not a directory: {self._shown(folder)!r}")
            with os.scandir(opened.fd) as listing:
                return [(child.name, child.is_symlink(), child.is_dir(follow_symlinks=False),
                         child.is_file(follow_symlinks=False)) for child in listing]
        finally:
            os.close(opened.fd)

    def _link_kind(self, where: str, rel: str, links: int) -> tuple[bool, bool]:
        """(is a folder, is a file) of what the link at ``where`` leads to: nothing outside the workspace; past the
        kernel's 40 links on a path, listed but not followed (ELOOP), as CPython's walk meets it."""
        if links >= MAX_LINKS:
            notices.note("files", f"{rel!r} was listed but not followed: Too many levels of symbolic links")
            return False, False
        try:
            found = self._look(where)
        except OSError as exc:  # outside, a loop, a vanished entry: listed, not followed
            if not isinstance(exc, PermissionError):
                notices.note("files", f"{rel!r} was listed but not followed: {exc.strerror or exc}")
            return False, False
        return (False, False) if found is None else (S_ISDIR(found.st_mode), S_ISREG(found.st_mode))

    def _stat(self, path: Any) -> Any:
        from pydantic_monty import StatResult

        info = self._existing(path)
        return StatResult(info.st_mode, info.st_ino, info.st_dev, info.st_nlink, info.st_uid, info.st_gid, info.st_size,
                          info.st_atime, info.st_mtime, info.st_ctime)

    def _resolve(self, path: Any, *_rest: Any) -> str:
        return quote(self._real(path), ending=True)

    def _absolute(self, path: Any) -> str:
        return str(_path_of(path))


def _path_of(arg: Any) -> PurePosixPath:
    """The sandbox path of an OS call's argument (a path, or the handle ``open()`` returned)."""
    text = getattr(arg, "path", None)
    return PurePosixPath(text if isinstance(text, str) else str(arg))


__all__ = ["MAX_SCAN_ENTRIES", "WRITE_HINT", "WorkspaceOS"]
