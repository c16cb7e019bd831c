"""What a search covers, whichever engine runs it: the folder or file named, the folders always skipped, CodeAct's
own stamped files (left out of a search from the root), and the tracked files that ``.gitignore`` rules hide from
both engines but not from git (:mod:`.tracked`)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.limits import Deadline
from ...core.tool import ToolContext
from .walk import SKIP_DIRS, Glob, Reach

if TYPE_CHECKING:
    from .tracked import Asked

SKIP_DIRS_SET = frozenset(SKIP_DIRS)
# What in ripgrep's raw output may show a path to drop: a SKIP_DIRS folder or a `.git` file (a worktree's or a
# submodule's pointer to its repository).
SKIPPED_MARKS = (*(name.encode() + b"/" for name in SKIP_DIRS), b".git\0")


def skipped(rel: str) -> bool:
    """Whether ``rel`` lies in a SKIP_DIRS folder (an ignore file's ``!`` rule can make ripgrep list it) or is a
    ``.git`` file, which the Python walk never lists."""
    return not SKIP_DIRS_SET.isdisjoint(rel.split("/")[:-1]) or rel.rpartition("/")[2] == ".git"


class Stamped:
    """CodeAct's own stamped files in a workspace (the ``owned`` list of ``.codeact/manifest.json``; an install
    stamped before the manifest existed: its scope's layout), left out of searches from the workspace root."""

    def __init__(self, root: Path) -> None:
        entries = tuple(e for e in _owned(root) if e.rstrip("/") not in SKIP_DIRS_SET)  # .codeact/: skipped anyway
        self.entries = entries
        self.marks = tuple(e.encode() for e in entries)

    def hides(self, rel: str) -> bool:
        """Whether the workspace-relative ``rel`` is one of them."""
        return any(rel == e or (e.endswith("/") and rel.startswith(e)) for e in self.entries)

    def near(self, raw: bytes) -> bool:
        """Whether raw output may name one of them (else no path of it needs :meth:`hides`)."""
        return any(mark in raw for mark in self.marks)


def _owned(root: Path) -> tuple[str, ...]:
    import json

    codeact = root / ".codeact"
    try:
        data = json.loads((codeact / "manifest.json").read_text(encoding="utf-8"))
        owned = data["owned"] if isinstance(data, dict) else None
        if isinstance(owned, list) and all(isinstance(e, str) for e in owned):
            return tuple(owned)
    except (OSError, ValueError, KeyError):
        pass
    from ...layout import for_scope, has_answers, scope_of  # only for an install stamped before the manifest existed

    if not has_answers(root):
        return ()

    return for_scope(scope_of(root)).owned


def base_of(ctx: ToolContext, path: str) -> tuple[Path, str]:
    """The folder or file ``path`` names, and its real workspace-relative path plus ``/`` (``""`` at the root)."""
    base = ctx.workspace.resolve(path, must_exist=True)
    return base, "" if base == ctx.workspace.root else base.relative_to(ctx.workspace.root).as_posix() + "/"


def stamped_below(root: Path, start: Path) -> Stamped | None:
    """CodeAct's own files to leave out of a search that starts at ``start``: only from the workspace root."""
    if start != root:
        return None
    stamped = Stamped(root)
    return stamped if stamped.entries else None


def tracked_below(root: Path, start: Path | None, plan: Glob, stamped: Stamped | None,
                  deadline: Deadline, walked: bool = True, asked: Asked | None = None) -> list[str]:
    """The tracked files below ``start`` that .gitignore rules hide from both engines and git does not
    (:mod:`.tracked`), relative to ``start``, that ``plan`` matches: regular files, none in a skipped
    folder or CodeAct's own, and (``walked``: a walk from ``start`` ran) none that walk lists. ``asked``: the
    question already put to git (:class:`.tracked.Asked`)."""
    if start is None:
        return []
    from .tracked import hidden_tracked

    hidden = asked.answer() if asked is not None else hidden_tracked(root, deadline)
    if not hidden:
        return []
    below = "" if start == root else start.relative_to(root).as_posix() + "/"
    reach: Reach | None = None
    found = []
    for path in hidden:  # each may be checked against every ignore rule above it: the deadline checked at each
        deadline.check("glob", "checking tracked files that ignore rules hide")
        rel = path[len(below):]
        if (path.startswith(below) and plan.matches(rel) and not skipped(rel)
                and (stamped is None or not stamped.hides(rel)) and _plain_file(root, path)):
            reach = reach or Reach(root, start)
            if not walked or not reach.ok(rel):  # else the walk lists it already (an ignored folder named as the path)
                found.append(rel)
    return found


def _plain_file(root: Path, rel: str) -> bool:
    """Whether ``rel`` is a regular file reached with no symbolic link on the way (the walks follow none)."""
    folder = root
    for part in rel.split("/"):
        folder = folder / part
        try:
            mode = os.lstat(folder).st_mode
        except OSError:
            return False
        if stat.S_ISLNK(mode):
            return False
    return stat.S_ISREG(mode)


def ignored_start(base: Path, plan: Glob) -> Path | None:
    """The folder ``plan``'s literal folders name below ``base`` when a walk does not reach it (ignored), if it is
    a real folder outside the skipped ones."""
    if SKIP_DIRS_SET.intersection(plan.dirs):
        return None
    folder = base.joinpath(*plan.dirs)
    return folder if os.path.isdir(folder) and os.path.realpath(folder) == str(folder) else None
