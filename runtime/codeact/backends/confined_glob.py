"""``glob.glob`` for a program's ``import glob``: CPython's algorithm, walked inside the workspace only.

CPython's ``glob`` joins the pattern's parts onto the folder and asks the OS about the result, so a pattern that climbs
out and back (``../../x/*/../../ws/*``) lists an outside folder on the way. Here every step is taken from a real path
already inside the workspace: ``..`` at the workspace root, an absolute pattern elsewhere or a ``root_dir`` outside
are refused from the pattern's text alone (so the refusal says nothing about what exists outside), and a symbolic
link whose target lies outside is listed by its name but never followed (it is neither a folder nor a match of a
folder-only step). The answers are CPython's otherwise: the same order (the folder's listing order), hidden names,
``recursive=True``'s ``**``, a trailing ``/`` for folders only, and the pattern's own spelling kept in each path.

Names cross the boundary as everywhere else (codeact.core.pathnames): the pattern and ``root_dir`` are the program's,
so a quoted form in them reads as the name it stands for; the walk itself holds only the host's real names, and the
answer quotes each name that needs it. A path through more than the kernel's 40 links is not followed (ELOOP, as
CPython meets a link loop), and the answer's total length is bounded as its count is.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from stat import S_ISLNK

from ..core.beneath import OPEN_FOLDER
from ..core.boundary import Workspace

MAX_ENTRIES = 200_000  # names one call may list; past it the call fails loudly (never a part of the answer)
MAX_CHARS = 32 * 1024 * 1024  # characters of the paths one call may give (a link loop spells ever longer ones)
_MAGIC = re.compile(r"[*?[]")


class GlobRefused(PermissionError):
    """The pattern (or ``root_dir``) leads out of the workspace by its text."""


class _Walk:
    """One ``glob`` call: real folders by the path the pattern spells, and a budget of names and time."""

    def __init__(self, workspace: Workspace, base: str, deadline: float,
                 matcher: Callable[[list[str], str], list[str]] | None = None) -> None:
        self.workspace, self.root, self.base, self.deadline = workspace, str(workspace.root), base, deadline
        self.matcher = matcher or _fnmatch_filter
        self.listed = self.chars = 0
        self.reals: dict[str, str | None] = {}
        self.links: dict[str, int] = {}  # links followed on the way to a spelled path (absent: none)
        self.dirs: dict[str, bool] = {}
        self.left: list[str] = []  # the spelled links not followed because they lead out of the workspace

    def real(self, spelled: str) -> str | None:
        """The real folder or file ``spelled`` (relative to the base, or absolute under the root) leads to, each
        part taken from the real path before it; ``None`` where a part is missing or would leave the workspace."""
        if spelled in self.reals:
            return self.reals[spelled]
        head, name = os.path.split(spelled.rstrip("/")) if spelled.rstrip("/") else ("", "")
        if not name:
            found: str | None = self.root if spelled.startswith("/") else self.base
        else:
            parent = self.real(head) if head and head != spelled else (self.root if spelled.startswith("/")
                                                                         else self.base)
            found = None if parent is None else self._step(parent, name, head, spelled)
        self.reals[spelled] = found
        return found

    def _step(self, parent: str, name: str, head: str, spelled: str) -> str | None:
        """The real path of the host name ``name`` in the real folder ``parent`` (``head`` spelled)."""
        # the links followed on the way, counted along the whole path as the kernel counts one lookup's
        before = self.links.get(head.rstrip("/"), 0)
        if name in ("", ".", ".."):  # ``file/.``, ``file/..``: ENOTDIR, as the kernel says
            if not self._is_folder(parent):
                return None
            if before:
                self.links[spelled.rstrip("/")] = before
            return parent if name != ".." else None if parent == self.root else os.path.dirname(parent)
        path = os.path.join(parent, name)
        found = self._lstat(parent, name)
        if found is None:
            return None
        if not S_ISLNK(found.st_mode):
            if before:
                self.links[spelled.rstrip("/")] = before
            return path
        self.in_time()
        try:  # every link this one leads through counts, not it alone
            inside, links = self.workspace.follow_inside(path, before)  # a host name: never read as quoted
        except OSError:  # past the kernel's 40 links (ELOOP), or a link to ``absent/../x``: resolved no further
            return None
        self.links[spelled.rstrip("/")] = links
        if inside is None and spelled.rstrip("/") not in self.left:
            self.left.append(spelled.rstrip("/"))
        return inside

    def in_time(self) -> None:
        """Raise at the run's deadline: a RuntimeError, not an OSError (TimeoutError is one), which glob swallows
        as CPython's does, leaving a silent part of the answer."""
        if time.monotonic() > self.deadline:
            raise RuntimeError(f"glob was stopped at the run's deadline after listing {self.listed:,} names; give a "
                               "narrower pattern or use the glob tool, glob(pattern=..., path=...)")

    def listdir(self, spelled: str, dironly: bool) -> list[str]:
        """The names in the folder ``spelled`` (only the folders' with ``dironly``), in the listing's order."""
        self.in_time()
        folder = self.real(spelled) if spelled else self.base
        fd = None if folder is None else self._open_folder(folder)
        if fd is None or folder is None:
            return []
        names = []
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    self.listed += 1
                    if self.listed > MAX_ENTRIES:
                        raise RuntimeError(f"glob listed more than {MAX_ENTRIES:,} names; give a narrower pattern "
                                           "or use the glob tool, glob(pattern=..., path=...)")
                    if not self.listed % 1000:
                        self.in_time()
                    child = os.path.join(spelled, entry.name) if spelled else entry.name
                    self.chars += len(child)
                    if self.chars > MAX_CHARS:
                        raise RuntimeError(f"glob's answer grew past {MAX_CHARS:,} characters; give a narrower "
                                           "pattern or use the glob tool, glob(pattern=..., path=...)")
                    if entry.is_symlink():
                        is_dir = self.is_dir(child)
                    else:
                        self.reals[child] = os.path.join(folder, entry.name)
                        if spelled.rstrip("/") in self.links:
                            self.links[child] = self.links[spelled.rstrip("/")]
                        is_dir = entry.is_dir(follow_symlinks=False)
                        self.dirs[child] = is_dir
                    if not dironly or is_dir:
                        names.append(entry.name)
        except OSError:
            return names
        finally:
            os.close(fd)
        return names

    def _open_folder(self, real: str, *, look: bool = False) -> int | None:
        """A descriptor of the real folder ``real``, opened part by part from the root with no link followed: a
        folder swapped for a link meanwhile fails (ELOOP) rather than leading out. ``look``: only to look at the
        names in it (Linux: ``O_PATH``), not to list it."""
        if real != self.root and not real.startswith(self.root + "/"):
            return None
        rest = real[len(self.root) + 1:]
        flags = OPEN_FOLDER if look else (os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
                                          | getattr(os, "O_CLOEXEC", 0))
        try:
            fd = os.open(self.root, flags)
        except OSError:
            return None
        for part in rest.split("/") if rest else ():
            if part in ("", ".", ".."):
                os.close(fd)
                return None
            try:
                below = os.open(part, flags, dir_fd=fd)
            except OSError:
                os.close(fd)
                return None
            os.close(fd)
            fd = below
        return fd

    def is_dir(self, spelled: str) -> bool:
        if spelled in self.dirs:
            return self.dirs[spelled]
        real = self.real(spelled)
        found = real is not None and self._is_folder(real)
        self.dirs[spelled] = found
        return found

    def lexists(self, spelled: str) -> bool:
        head, name = os.path.split(spelled.rstrip("/") or spelled)
        if not name or name in (".", ".."):
            return self.real(spelled) is not None
        parent = self.real(head) if head else (self.root if spelled.startswith("/") else self.base)
        return parent is not None and self._lstat(parent, name) is not None

    # Every look is through a folder's descriptor opened from the root (never a path the kernel walks again): a
    # folder swapped for a link to outside after ``_step`` saw a plain one is not entered, so no answer says what
    # lies outside.
    def _is_folder(self, real: str) -> bool:
        """Whether the real path ``real`` is a folder inside the workspace (it opens as one, no link followed)."""
        fd = self._open_folder(real, look=True)
        if fd is None:
            return False
        os.close(fd)
        return True

    def _lstat(self, parent: str, name: str) -> os.stat_result | None:
        """The ``lstat`` of the host name ``name`` in the real folder ``parent``, ``None`` where it is missing."""
        fd = self._open_folder(parent, look=True)
        if fd is None:
            return None
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)


def glob(workspace: Workspace, pathname: str, *, root_dir: str | None = None, recursive: bool = False,
         include_hidden: bool = False, deadline: float | None = None,
         matcher: Callable[[list[str], str], list[str]] | None = None) -> list[str]:
    """The paths matching ``pathname`` as CPython's ``glob.glob`` gives them, reached inside ``workspace`` only.
    Raises :class:`GlobRefused` when the pattern's text or ``root_dir`` leads out of the workspace. ``matcher``:
    ``fnmatch.filter`` as the caller bounds it (a long pattern part costs far more than its text to compile)."""
    from ..core.pathnames import quote_all, unquote

    root = str(workspace.root)
    pathname = unquote(os.fspath(pathname))  # the program's quoted forms, read as the names they stand for
    _check_text(pathname, root, recursive, "pattern")
    base = root
    if root_dir is not None:
        given = os.fspath(root_dir)
        if isinstance(given, bytes):  # CPython matches the str pattern against the folder's bytes names
            raise TypeError("cannot use a string pattern on a bytes-like object")
        given = unquote(given)
        _check_text(given, root, False, "root_dir")
        first = _Walk(workspace, root, float("inf"))
        if given.startswith("/"):
            first.reals["/"] = None  # only the root's own spelling leads in (checked above)
            first.reals[root] = root
        folder = first.real(given)
        if folder is None:
            _say_not_followed(first.left)
            return []
        base = folder
    walk = _Walk(workspace, base, time.monotonic() + 3600 if deadline is None else deadline, matcher)
    if root_dir is not None and first.links.get(given.rstrip("/"), 0):  # the kernel counts root_dir's links too:
        walk.links[""] = first.links[given.rstrip("/")]  # CPython opens root_dir/<pattern's path> in one lookup
    if pathname.startswith("/"):
        walk.reals["/"] = None  # only the root's own spelling leads in (checked above)
        walk.reals[root] = root
    found = _iglob(walk, pathname, recursive, False, include_hidden)
    if recursive and pathname[:2] == "**" and found[:1] == [""]:
        del found[0]  # CPython skips the empty match of a leading '**' (the folder itself)
    _say_not_followed(walk.left)
    return quote_all(found, ending=True)  # as os.listdir and os.walk show names


def _say_not_followed(links: list[str]) -> None:
    """A note naming the links the walk did not follow (what they lead to is never said): never a silent []."""
    if links:
        from ..core import notices
        from ..core.pathnames import quote_all

        shown = ", ".join(repr(name) for name in quote_all(links[:3])) + (" and more" if len(links) > 3 else "")
        notices.note("glob.glob()", f"{shown}: a link that leads out of the workspace was not followed (CPython "
                                    "would list what it leads to); glob the workspace's own folders")  # a name that is not UTF-8 (or holds a quote), as git quotes it


def _check_text(text: str, root: str, recursive: bool, what: str) -> None:
    """Refuse, from the text alone, a pattern that names a place outside ``root``: an absolute path elsewhere, or
    more ``..`` than the parts before it (``**`` counts as none)."""
    if "\x00" in text:
        raise GlobRefused(f"glob {what} {text!r} holds a NUL byte")
    rest = text
    if text.startswith("/"):
        if text.rstrip("/") != root and not text.startswith(root + "/"):
            raise GlobRefused(f"glob {what} {text!r} is outside the workspace; use a pattern relative to its root")
        rest = text[len(root):]
    depth = 0
    for part in rest.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                raise GlobRefused(f"glob {what} {text!r} leads out of the workspace ('..' above its root); use a "
                                  "pattern relative to the root, e.g. 'src/**/*.py'")
        elif part not in ("", ".") and not (recursive and part == "**"):
            depth += 1


def _iglob(walk: _Walk, pathname: str, recursive: bool, dironly: bool, include_hidden: bool) -> list[str]:
    """CPython 3.11's ``glob._iglob`` over :class:`_Walk` (which reads the file system for it)."""
    dirname, basename = os.path.split(pathname)
    if not _MAGIC.search(pathname):
        if basename:
            return [pathname] if walk.lexists(pathname) else []
        return [pathname] if walk.is_dir(dirname) else []
    if not dirname:
        if recursive and basename == "**":
            return _glob2(walk, "", basename, dironly, include_hidden)
        return _glob1(walk, "", basename, dironly, include_hidden)
    if dirname != pathname and _MAGIC.search(dirname):
        dirs = _iglob(walk, dirname, recursive, True, include_hidden)
    else:
        dirs = [dirname]
    found: list[str] = []
    for folder in dirs:
        if _MAGIC.search(basename):
            names = (_glob2 if recursive and basename == "**" else _glob1)(walk, folder, basename, dironly,
                                                                            include_hidden)
        else:
            names = _glob0(walk, folder, basename)
        found.extend(os.path.join(folder, name) for name in names)
    return found


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _fnmatch_filter(names: list[str], pattern: str) -> list[str]:
    import fnmatch

    return fnmatch.filter(names, pattern)


def _glob1(walk: _Walk, folder: str, pattern: str, dironly: bool, include_hidden: bool) -> list[str]:
    names = walk.listdir(folder, dironly)
    if not include_hidden and not _hidden(pattern):
        names = [n for n in names if not _hidden(n)]
    return walk.matcher(names, pattern)


def _glob0(walk: _Walk, folder: str, basename: str) -> list[str]:
    if not basename:
        return [basename] if walk.is_dir(folder) else []
    return [basename] if walk.lexists(os.path.join(folder, basename)) else []


def _glob2(walk: _Walk, folder: str, pattern: str, dironly: bool, include_hidden: bool) -> list[str]:
    found = [pattern[:0]]
    _rlistdir(walk, folder, "", dironly, include_hidden, found)
    return found


def _rlistdir(walk: _Walk, folder: str, prefix: str, dironly: bool, include_hidden: bool, found: list[str]) -> None:
    here = os.path.join(folder, prefix) if prefix else folder
    for name in walk.listdir(here, dironly):
        if include_hidden or not _hidden(name):
            rel = os.path.join(prefix, name) if prefix else name
            found.append(rel)
            if walk.is_dir(os.path.join(folder, rel) if folder else rel):
                _rlistdir(walk, folder, rel, dironly, include_hidden, found)


__all__ = ["MAX_ENTRIES", "GlobRefused", "glob"]
