"""The file system a program sees: the workspace, read through the same policy as the tools.

Models write ``open(p)``, ``Path(p).read_text()``, ``os.walk(".")``, ``Path("src").rglob("*.py")``. pydantic-monty
hands each such call to the host as an OS call (``Path.exists``, ``open``, ``Path.scan``, ...); :class:`WorkspaceOS`
answers them over the workspace, resolving every path with :meth:`codeact.core.boundary.Workspace.resolve` (the
boundary rule of ``view`` and ``glob``: nothing outside the workspace, symbolic links followed before the check).
The program's working directory is the workspace root, so ``os.getcwd()`` and relative paths are what CPython run
there would give. Writes are refused with a hint naming the write tools (their safe-write path is the only one);
the environment stays closed.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from ..core import notices
from ..core.boundary import Workspace
from ..core.pathnames import quote, unquote
from ..errors import PolicyError

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
            return str(self.workspace.resolve(str(_path_of(path))))
        except PolicyError as exc:
            raise PermissionError(f"{self._shown(path)!r}: {exc}") from None

    def _existing(self, path: Any) -> str:
        real = self._real(path)
        if not os.path.exists(real):
            raise FileNotFoundError(f"[Errno 2] No such file or directory: {self._shown(path)!r}")
        return real

    # ----------------------------------------------------------------------------------------------- calls
    def _exists(self, path: Any) -> bool:
        return os.path.exists(self._real(path))

    def _is_file(self, path: Any) -> bool:
        return os.path.isfile(self._real(path))

    def _is_dir(self, path: Any) -> bool:
        return os.path.isdir(self._real(path))

    def _is_symlink(self, path: Any) -> bool:
        self._real(os.path.dirname(str(_path_of(path))) or "/")  # the folder it lies in must be inside
        return os.path.islink(unquote(str(_path_of(path))))

    def _open(self, path: Any, mode: str = "r", *_rest: Any) -> Any:
        import pydantic_monty as pm

        if any(c in mode for c in "wax+"):
            raise PermissionError(f"open({self._shown(path)!r}, {mode!r}): the sandbox does not write files "
                                  f"directly; {WRITE_HINT}")
        real = self._existing(path)
        if os.path.isdir(real):
            raise IsADirectoryError(f"[Errno 21] Is a directory: {self._shown(path)!r}")
        return pm.MontyFileHandle(str(_path_of(path)), mode)

    def _read_bytes(self, path: Any) -> bytes:
        real = self._existing(path)
        if os.path.isdir(real):
            raise IsADirectoryError(f"[Errno 21] Is a directory: {self._shown(path)!r}")
        size = os.path.getsize(real)
        if size > MAX_READ:
            raise OSError(f"{self._shown(path)!r} is {size:,} bytes: the sandbox reads a file whole, and at most "
                          f"{MAX_READ:,} bytes; read parts of it with view(path=..., view_range=[first, last]) or "
                          "search it with grep(pattern=..., path=...)")
        with open(real, "rb") as handle:
            return handle.read(MAX_READ + 1)

    def _read_text(self, path: Any, *_rest: Any) -> str:
        data = self._read_bytes(path)
        # CPython's text mode: UTF-8 here, universal newlines
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")

    def _iterdir(self, path: Any) -> list[PurePosixPath]:
        real = self._existing(path)
        if not os.path.isdir(real):
            raise NotADirectoryError(f"[Errno 20] Not a directory: {self._shown(path)!r}")
        base = _path_of(path)
        return [base / quote(name) for name in os.listdir(real)]

    def _scan(self, path: Any, *, max_depth: int | None = None, follow_symlinks: bool = False,
              **_glob: Any) -> list[Any]:
        """``path`` and everything below it to ``max_depth`` (os.walk, os.scandir, Path.glob/rglob), each folder's
        entries in the order the file system lists them, as ``os.scandir`` gives them to CPython."""
        from pydantic_monty import ScanEntry

        if not self.workspace.contains(str(_path_of(path))):
            # os.walk and Path.glob swallow the error, as CPython's do: the note keeps the run from a silent []
            notices.note("files", f"{self._shown(path)!r} was not listed: it is outside the workspace (or a link "
                         "leads out of it); list the workspace's own folders")
        real = self._existing(path)
        entries = [ScanEntry("", os.path.isdir(real), os.path.isfile(real), os.path.islink(real))]
        if not entries[0].is_dir:
            return entries
        pending: list[tuple[str, str, int]] = [(real, "", 0)]
        while pending:
            folder, relative, depth = pending.pop(0)
            if max_depth is not None and depth >= max_depth:
                continue
            try:
                with os.scandir(folder) as listing:
                    children = list(listing)
            except OSError:
                if depth == 0:
                    raise
                continue  # as CPython's os.walk does with an unreadable sub-folder
            below = []
            for child in children:
                name = quote(child.name)  # a name that is not UTF-8, as git quotes it (codeact.core.pathnames)
                rel = f"{relative}/{name}" if relative else name
                link = child.is_symlink()
                inside = not link or self.workspace.contains(child.path)
                try:
                    is_dir, is_file = inside and child.is_dir(), inside and child.is_file()
                except OSError as exc:  # a link loop (ELOOP) or a vanished entry: listed, not followed, and said
                    is_dir = is_file = False
                    notices.note("files", f"{rel!r} was listed but not followed: {exc.strerror or exc}")
                entries.append(ScanEntry(rel, is_dir, is_file, link))
                if len(entries) > MAX_SCAN_ENTRIES:
                    raise RuntimeError(f"{self._shown(path)!r} holds more than {MAX_SCAN_ENTRIES:,} entries; walk a "
                                       "smaller folder, or list files with glob(pattern=..., path=...)")
                if is_dir and (follow_symlinks or not link):
                    below.append((child.path, rel, depth + 1))
            pending[0:0] = below  # depth first, each folder's sub-folders in listing order (os.walk's order)
        return entries

    def _stat(self, path: Any) -> Any:
        from pydantic_monty import StatResult

        info = os.stat(self._existing(path))
        return StatResult(info.st_mode, info.st_ino, info.st_dev, info.st_nlink, info.st_uid, info.st_gid, info.st_size,
                          info.st_atime, info.st_mtime, info.st_ctime)

    def _resolve(self, path: Any, *_rest: Any) -> str:
        return "/".join(map(quote, self._real(path).split("/")))

    def _absolute(self, path: Any) -> str:
        return str(_path_of(path))


def _path_of(arg: Any) -> PurePosixPath:
    """The sandbox path of an OS call's argument (a path, or the handle ``open()`` returned)."""
    text = getattr(arg, "path", None)
    return PurePosixPath(text if isinstance(text, str) else str(arg))


__all__ = ["MAX_SCAN_ENTRIES", "WRITE_HINT", "WorkspaceOS"]
