"""Where a workspace path leads, resolved part by part from the workspace's own files: a path, or a link's target,
that passes outside the root at any step is refused from its text before anything outside is looked at, so the
answer never depends on what lies outside (:class:`codeact.core.boundary.Workspace` asks it for every path that is
not a plain name).

Every part is looked at in the folder before it through that folder's descriptor (``fstatat``, ``readlinkat``),
each folder opened relative to the one before with no link followed (:data:`codeact.core.beneath.OPEN_FOLDER`),
never by a path the kernel would walk again: a folder a host process swaps for a link to outside meanwhile is not
entered (its open fails, and the part reads as missing), so nothing outside is looked at, whatever the timing."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import errno
import os
from stat import S_ISDIR, S_ISLNK

from .beneath import OPEN_FOLDER

MAX_LINKS = 40  # the kernel's MAXSYMLINKS: a path through more links is ELOOP
_HELD = 64  # folder descriptors one resolution keeps open; a deeper one is opened again when the walk climbs back


def walk_plain(root: str, raw: str) -> tuple[str, os.stat_result] | None:
    """``root/raw`` and its ``lstat`` when every part of ``raw`` exists and none is a symbolic link (the path is
    then its own real path, ``root`` being real); ``None`` for anything else: a link, ``..``, a missing part. Each
    folder is opened relative to the one before, no link followed, and the last part looked at through it."""
    parts = [part for part in raw.split("/") if part and part != "."]
    if ".." in parts:
        return None
    try:
        if not parts:  # the root itself
            return root, os.stat(root)
        folder = os.open(root, OPEN_FOLDER)
    except (OSError, ValueError):
        return None
    try:
        for part in parts[:-1]:  # a link, a file or a missing part fails here
            inner = os.open(part, OPEN_FOLDER, dir_fd=folder)
            os.close(folder)
            folder = inner
        st = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    finally:
        os.close(folder)
    if S_ISLNK(st.st_mode):
        return None
    return root + "/" + "/".join(parts), st


class _Folders:
    """The real folders (or the file, last) a resolution stands in, the root first, as descriptors: each opened
    relative to the one before with no link followed, so what is looked at in one lies where the resolution
    walked, whatever was swapped in since. ``None``: a file (nothing is looked at in it), or a folder closed to keep
    :data:`_HELD` open, opened again by its name from the nearest one held when the walk climbs back to it."""

    def __init__(self, root: str) -> None:
        self.names = [root]
        self.fds: list[int | None] = [os.open(root, OPEN_FOLDER)]
        self.folders = [True]

    def push(self, name: str, fd: int | None) -> None:
        self.names.append(name)
        self.fds.append(fd)
        self.folders.append(fd is not None)
        self._spare(len(self.fds) - 1)

    def _spare(self, last: int) -> None:
        """Close the folder :data:`_HELD` below ``last`` (never the root's)."""
        far = last - _HELD
        fd = self.fds[far] if far > 0 else None
        if fd is not None:
            os.close(fd)
            self.fds[far] = None

    def trim(self, depth: int) -> None:
        """Back to the folder ``depth`` parts below the root (``..``; a link's folder)."""
        while len(self.fds) > depth + 1:
            fd = self.fds.pop()
            self.names.pop()
            self.folders.pop()
            if fd is not None:
                os.close(fd)

    def is_folder(self, depth: int) -> bool:
        return self.folders[depth] if depth < len(self.folders) else False

    def here(self) -> int:
        """The descriptor of the last folder (opened again from the nearest one held where it was closed)."""
        last = len(self.fds) - 1
        start = last
        while self.fds[start] is None:
            start -= 1
        for at in range(start + 1, last + 1):
            self.fds[at] = os.open(self.names[at], OPEN_FOLDER, dir_fd=self.fds[at - 1])
            self._spare(at)
        fd = self.fds[last]
        assert fd is not None
        return fd

    def close(self) -> None:
        self.trim(-1)


class Outside(Exception):
    """The path, or the target of a link on its way, passes outside the workspace root."""


def _parts_below(root: str, text: str) -> list[str] | None:
    """The parts of ``text`` below ``root``: a relative path's own, an absolute path's after the root's (``//`` and
    ``/./`` read as the kernel reads them); ``None`` for an absolute path whose text does not start with the root's
    (``..`` included: ``<root>/../<root>/x`` passes outside on its way)."""
    if not text.startswith("/"):
        return text.split("/")
    parts = [part for part in text.split("/") if part and part != "."]
    top = root.split("/")[1:]
    return parts[len(top):] if parts[:len(top)] == top else None


def resolve_beneath(root: str, raw: str, *, lexical: bool = False) -> tuple[str, os.stat_result | None, int]:
    """:func:`resolve_counted`'s answer without the count."""
    return resolve_counted(root, raw, lexical=lexical)[:3]


def resolve_counted(root: str, raw: str, *, lexical: bool = False, links: int = 0
                    ) -> tuple[str, os.stat_result | None, int, int]:
    """Where ``raw`` (relative to the real folder ``root``, or absolute under it) leads, resolved part by part as
    the kernel resolves it (one ``lstat`` a part, each link's target read and followed), but from the workspace's
    own files only: the path, or a link's target, that passes outside the root at any step (``..`` above it, an
    absolute path elsewhere) raises :class:`Outside` before anything outside is looked at, so the answer never
    depends on what lies outside (``<outside>/X/../<ws>/f`` is refused whether X is a link, a folder or absent).
    Returns the real path, its ``lstat`` (``None`` where not looked at: the root, after ``..``) and ``0`` when it
    exists, else the ``errno`` that stopped it (a missing part, a file used as a folder: what follows is kept as
    text, as for a file to create). ``..`` after such a part raises that error, as the kernel does
    (``absent/../x``), unless ``lexical``: then it drops the part before, as ``os.path.realpath`` does. More than
    the kernel's 40 links raise ELOOP, counted from ``links`` (those followed on the way to ``raw``, which the
    kernel counts in the same lookup); the count at the end comes fourth."""
    parts = _parts_below(root, raw)
    if parts is None:
        raise Outside
    try:
        folders = _Folders(root)
    except OSError:
        raise OSError(errno.ENOENT, os.strerror(errno.ENOENT)) from None
    try:
        return _resolve_in(root, parts, folders, lexical, links)
    finally:
        folders.close()


def _resolve_in(root: str, parts: list[str], folders: _Folders, lexical: bool, links: int
                ) -> tuple[str, os.stat_result | None, int, int]:
    """:func:`resolve_counted`'s walk, each part looked at through the descriptor of the folder before it."""
    pending = parts[::-1]  # the parts left, the next one last
    found, depth, st, folder = root, 0, None, True  # depth: parts below the root; folder: ``found`` is one
    broken, broken_at = 0, 0
    while pending:
        part = pending.pop()
        if not part or part == ".":
            continue
        if not broken and not folder:
            broken, broken_at = errno.ENOTDIR, depth
        if part == "..":
            if broken and not lexical:
                raise OSError(broken, os.strerror(broken))
            if not depth:
                raise Outside
            found, depth, st = found[:found.rindex("/")], depth - 1, None
            folders.trim(depth)
            if broken and depth <= broken_at:  # ``lexical``: back on the part that stopped it, or above
                broken, folder = 0, folders.is_folder(depth)
            continue
        found += "/" + part
        depth += 1
        if broken:
            continue  # nothing below a missing part is looked at: kept as text
        opened = None
        try:
            at = folders.here()
            st = os.stat(part, dir_fd=at, follow_symlinks=False)
            links += S_ISLNK(st.st_mode)
            target = os.readlink(part, dir_fd=at) if S_ISLNK(st.st_mode) and links <= MAX_LINKS else None
            if S_ISDIR(st.st_mode):  # a folder swapped for a link since its stat is not opened: missing
                opened = os.open(part, OPEN_FOLDER, dir_fd=at)
        except (OSError, ValueError) as exc:  # a missing part; a file used as a folder; changed since its stat
            code = getattr(exc, "errno", None) or errno.ENOENT
            broken, broken_at, st = errno.ENOENT if code == errno.ELOOP else code, depth - 1, None
            continue
        folder = S_ISDIR(st.st_mode)
        if S_ISLNK(st.st_mode):
            if target is None:  # past the kernel's 40 links: ELOOP, whatever follows (kept as text, the path
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))  # would hold a link left unread)
            found, depth, st, folder = _link_start(root, found, depth, target, pending)
            folders.trim(depth)
        else:
            folders.push(part, opened)
    return found, st, broken, links


def _link_start(root: str, link: str, depth: int, target: str, pending: list[str]) -> tuple[str, int, None, bool]:
    """Where the resolution goes on from the link at ``link`` (``depth`` parts below ``root``) whose target is
    ``target``: its folder, or the root for an absolute target under it (:class:`Outside` for one elsewhere),
    the target's parts put before the ``pending`` ones."""
    found, depth = link[:link.rindex("/")], depth - 1
    if target.startswith("/"):
        below = _parts_below(root, target)
        if below is None:
            raise Outside
        found, depth, target = root, 0, "/".join(below)
    pending.extend(reversed(target.split("/")))
    return found, depth, None, True


def link_target(root: str, anchor: str, name: str) -> str | None:
    """Where ``anchor/name`` leads when a symbolic link lies on it (``None`` when none does, or when it holds more
    than the kernel's 40 links), read from the workspace's own files only: ``anchor`` (a real folder: the root, a
    folder inside it, or one above it) and the parts of ``name`` are looked at; then each link's target is followed
    as the kernel follows it while it stays inside ``root`` and read as text (``..`` dropping the part before)
    wherever it passes outside, where nothing is looked at. The answer thus never depends on what lies outside the
    root: ``.github -> ../X/config`` leads to ``<root's parent>/X/config`` whether X is a folder, absent or a link
    back into the workspace, and ``../X/../<root's name>/config`` to ``<root>/config``. A part that is missing
    (or a file used as a folder) is kept as text, as ``os.path.realpath`` keeps it."""
    inside = root + "/"
    pending = name.split("/")[::-1]
    found, links, followed, broken = anchor, 0, False, ""
    while pending:
        part = pending.pop()
        if not part or part == ".":
            continue
        if part == "..":
            found = found[:found.rindex("/")] or "/"
            if broken and not (found + "/").startswith(broken + "/"):
                broken = ""  # back above the missing part: looked at again
            continue
        found = found.rstrip("/") + "/" + part
        looked = not broken and (not followed or found.startswith(inside))
        if not looked:
            continue
        try:
            st = os.lstat(found)
            target = os.readlink(found) if S_ISLNK(st.st_mode) else None
        except OSError:  # missing, a file used as a folder, or changed since: the rest is text below it
            broken = found
            continue
        if target is None:
            continue
        links += 1
        if links > MAX_LINKS:
            return None
        followed = True
        found = "/" if target.startswith("/") else found[:found.rindex("/")] or "/"
        pending.extend(reversed(target.split("/")))
    return found if followed else None


MAX_REALPATH_LINKS = 256  # os.path.realpath follows a chain of any length (one frame a link): past this, ELOOP


def realpath_beneath(root: str, raw: str) -> str:
    """``os.path.realpath(raw)`` as CPython 3.11 answers it (not strict), from the workspace's own files: each link
    followed once (a chain past the kernel's 40 too, up to 256), a link met again while it is being followed (a loop) ends the
    resolution there with the rest of the path kept as text, a missing part kept as text. A path, link target or
    the text kept that passes outside the root raises :class:`Outside` before anything outside is looked at."""
    parts = _parts_below(root, raw)
    if parts is None:
        raise Outside
    found = os.path.normpath(_joined_real(root, root, "/".join(parts), {}, [0])[0])
    if found != root and not found.startswith(root + "/"):
        raise Outside  # the text kept after a loop climbs out (``loop/../..``): refused from the text alone
    return found


def _joined_real(root: str, path: str, rest: str, seen: dict[str, str | None], links: list[int]) -> tuple[str, bool]:
    """CPython 3.11's ``posixpath._joinrealpath`` below ``root``: ``path`` (a real folder inside it) joined with
    ``rest``; the bool is False where a loop stopped it."""
    if rest.startswith("/"):
        below = _parts_below(root, rest)
        if below is None:
            raise Outside
        path, rest = root, "/".join(below)
    while rest:
        name, _, rest = rest.partition("/")
        if not name or name == ".":
            continue
        if name == "..":
            if path == root:
                raise Outside
            path = path[:path.rindex("/")]
            continue
        newpath = path + "/" + name
        target = _link_in(root, path, name)
        if target is None:
            path = newpath
            continue
        if newpath in seen:
            cached = seen[newpath]
            if cached is not None:
                path = cached
                continue
            return newpath + "/" + rest if rest else newpath, False  # a loop: the rest as text
        links[0] += 1
        if links[0] > MAX_REALPATH_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        seen[newpath] = None
        path, ok = _joined_real(root, path, target, seen, links)
        if not ok:
            return path + "/" + rest if rest else path, False
        seen[newpath] = path
    return path, True


def _link_in(root: str, folder: str, name: str) -> str | None:
    """The target of the link ``name`` in the real folder ``folder`` (``root`` or below it, no link on its way),
    looked at through the folder opened part by part from ``root`` with no link followed; ``None`` where it is no
    link, is missing, or its folder is (or was swapped for a link meanwhile)."""
    rest = folder[len(root) + 1:] if folder != root else ""
    try:
        fd = os.open(root, OPEN_FOLDER)
    except OSError:
        return None
    try:
        for part in rest.split("/") if rest else ():
            inner = os.open(part, OPEN_FOLDER, dir_fd=fd)
            os.close(fd)
            fd = inner
        if not S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            return None
        return os.readlink(name, dir_fd=fd)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


__all__ = ["MAX_LINKS", "Outside", "link_target", "realpath_beneath", "resolve_beneath", "resolve_counted", "walk_plain"]
