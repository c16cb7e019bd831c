"""Tracked files that a ``.gitignore`` rule matches: git never ignores them, and neither do the search tools.

A rule such as ``**/package.json`` or ``build/`` hides untracked files; one that matches a file already in the index
changes nothing for git (``git status`` and ``git grep`` see it). ripgrep and the Python walk read only the rules,
so both would leave such a file out. The index knows which files these are: ``git ls-files --cached --ignored``
with the repository's own rules (its ``.gitignore`` files and ``info/exclude``; not the user's global excludes,
which the search tools do not read either), in the workspace's repository and in each checked-out submodule.
Asked once per run and index (the index's size and time), and only where the workspace is a work tree's root.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.limits import Deadline

if TYPE_CHECKING:
    from ..proc import Child

_cache: tuple[object, tuple[str, ...], Deadline] | None = None  # the last question's key, answer and run
_AT_ONCE = 4  # gits running at once for one question (the repository's and its submodules')


def hidden_tracked(root: Path, deadline: Deadline) -> tuple[str, ...]:
    """The tracked files below ``root`` (a work tree's top: it holds ``.git``) that ``.gitignore`` rules match,
    workspace-relative and sorted; ``()`` elsewhere, or when git cannot answer."""
    with Asked(root, deadline) as asked:
        return asked.answer()


class Asked:
    """:func:`hidden_tracked`'s question, put to git when made (unless this run knows the answer): git runs while
    the caller does something else (ripgrep lists), and :meth:`answer` waits for it. Leaving the ``with`` block
    ends a git still running."""

    def __init__(self, root: Path, deadline: Deadline) -> None:
        self.deadline = deadline
        self.known: tuple[str, ...] | None = ()
        self.asking: list[tuple[str, Child]] = []  # (prefix of its paths, git) for the repository and submodules
        self.waiting: list[tuple[Path, str]] = []  # (submodule, prefix) not asked yet
        index = _index_stat(root)
        if index is None:
            return
        self.key = (str(root), index, id(deadline))
        if _cache is not None and _cache[0] == self.key and _cache[2] is deadline:
            self.known = _cache[1]
            return
        self.known = None
        self.root = root
        # the submodules are asked too, at most _AT_ONCE gits at a time (a .gitmodules may name thousands)
        self.waiting = [(root / sub, sub + "/") for sub in _submodules(root, deadline)
                        if _index_stat(root / sub) is not None]
        self.waiting.reverse()  # popped from the end: in .gitmodules order
        self._ask(root, "")
        while self.waiting and len(self.asking) < _AT_ONCE:
            self._ask(*self.waiting.pop())

    def _ask(self, repo: Path, prefix: str) -> None:
        child = _ask_git(repo, self.root, self.deadline)
        if child is not None:
            self.asking.append((prefix, child))

    def answer(self) -> tuple[str, ...]:
        global _cache
        if self.known is None:
            found: list[str] = []
            while self.asking:
                prefix, child = self.asking.pop(0)
                with child:
                    data = b"".join(child)
                if child.returncode == 0:
                    found += [prefix + os.fsdecode(name) for name in data.split(b"\0") if name]
                while self.waiting and len(self.asking) < _AT_ONCE:
                    self._ask(*self.waiting.pop())
            self.known = tuple(sorted(found))
            _cache = (self.key, self.known, self.deadline)
        return self.known

    def __enter__(self) -> Asked:
        return self

    def __exit__(self, *exc: object) -> None:
        for _, child in self.asking:
            child.__exit__()
        self.asking, self.waiting = [], []


def _index_stat(root: Path) -> tuple[int, int, int] | None:
    """The index's size, time and inode when ``root`` is a work tree's top (``.git`` a folder or a pointer file)."""
    if not os.path.lexists(root / ".git"):
        return None
    try:
        info = os.stat(_git_dir(root) / "index")
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def _ask_git(repo: Path, root: Path, deadline: Deadline) -> Child | None:
    """git started on the question, for ``repo``: ``None`` when there is no git or it cannot start."""
    import shutil

    from ..proc import Child
    from .walk import read_ignore_file

    git = shutil.which("git")
    if git is None:
        return None
    # the repository's own rules only; no fsmonitor (a command its config could name)
    cmd = [git, "-c", "core.fsmonitor=false", "-C", str(repo), "ls-files", "-z", "--cached", "--ignored",
           "--exclude-per-directory=.gitignore"]
    exclude = _git_dir(repo) / "info" / "exclude"
    if read_ignore_file(exclude, root) is not None:  # as the walk reads it: not through a link out of ``root``
        cmd.append(f"--exclude-from={exclude}")
    return Child.start(cmd, repo, deadline, "glob", "asking git which tracked files .gitignore matches")


def _git_dir(repo: Path) -> Path:
    """``repo``'s git folder: ``.git``, or where a ``.git`` pointer file (a submodule's, a worktree's) leads."""
    dot_git = repo / ".git"
    if dot_git.is_file():
        try:
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return dot_git
        target = Path(text[7:].strip()) if text.startswith("gitdir:") else dot_git
        return target if target.is_absolute() else repo / target
    return dot_git


def _submodules(root: Path, deadline: Deadline) -> list[str]:
    """The paths ``.gitmodules`` names (those checked out are asked too): each once, and only a folder below
    ``root`` reached through no link (not ``.``, ``..``, an absolute path, nor one that leads out), each walked part
    by part from the root and only as far as it exists. A program may write ``.gitmodules`` (a repository may
    commit one): its first :data:`MAX_IGNORE_BYTES` are read, at most :data:`MAX_SUBMODULES` paths kept, one longer
    than :data:`MAX_SUBMODULE_PATH` skipped, and the checks stop at the run's deadline; a note says what was left."""
    from .walk import MAX_IGNORE_BYTES, note_cut, read_ignore

    read = read_ignore(root / ".gitmodules", root)  # as an ignore file: never through a link out, nor a FIFO
    if read is None:
        return []
    if read.cut_from:
        note_cut(root / ".gitmodules", root, read.cut_from, "the submodules it names past that are not searched "
                                                           "for tracked files that .gitignore rules match")
    paths: dict[str, None] = {}
    long, left = 0, ""
    for line in read.text.splitlines():
        name, sep, value = line.partition("=")
        if not sep or name.strip() != "path":
            continue
        sub = value.strip().rstrip("/")
        if len(sub) > MAX_SUBMODULE_PATH:
            long += 1
            continue
        if len(paths) >= MAX_SUBMODULES:
            left = f"more than {MAX_SUBMODULES:,} submodule paths: those past them"
            break
        if deadline.expired():
            left = "the run's deadline came while its submodule paths were checked: those not checked"
            break
        if sub not in paths and _folder_below(root, sub):
            paths[sub] = None
    if long:
        left = f"{long:,} path(s) longer than {MAX_SUBMODULE_PATH:,} bytes" + (f", and {left}" if left else "")
    if left:
        from ...core import notices

        notices.note("", f".gitmodules: {left} are not searched for tracked files that .gitignore rules match "
                         f"(the first {MAX_IGNORE_BYTES >> 20} MiB of it are read)")
    return list(paths)


MAX_SUBMODULES = 1_000  # submodule paths of .gitmodules checked (each may start a git)
MAX_SUBMODULE_PATH = 4_096  # bytes: a path longer than the kernel's PATH_MAX is no submodule anyone checks out


def _folder_below(root: Path, sub: str) -> bool:
    """Whether ``sub`` (a path relative to ``root``) is a folder below it reached through no link: each part opened
    from the one before with no link followed, stopping at the first that is missing (no part looked up twice, and
    nothing outside looked at)."""
    from ...core.beneath import CAN_OPEN_BENEATH, open_listed
    from ...errors import ToolError

    parts = sub.split("/")
    if not sub or sub.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return False
    if not CAN_OPEN_BENEATH:  # pragma: no cover - Windows: the real path, part by part
        return os.path.realpath(root / sub) == os.path.join(os.path.realpath(root), sub)
    try:
        opened = open_listed(str(root), sub)
    except (OSError, ToolError, ValueError):  # missing, a link or a file on the way, a NUL byte
        return False
    os.close(opened.fd)
    return stat.S_ISDIR(opened.stat.st_mode)
