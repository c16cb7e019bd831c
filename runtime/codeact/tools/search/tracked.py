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
from pathlib import Path

from ...core.limits import Deadline

_cache: tuple[object, tuple[str, ...], Deadline] | None = None  # the last question's key, answer and run


def hidden_tracked(root: Path, deadline: Deadline) -> tuple[str, ...]:
    """The tracked files below ``root`` (a work tree's top: it holds ``.git``) that ``.gitignore`` rules match,
    workspace-relative and sorted; ``()`` elsewhere, or when git cannot answer."""
    global _cache
    index = _index_stat(root)
    if index is None:
        return ()
    key = (str(root), index, id(deadline))
    if _cache is not None and _cache[0] == key and _cache[2] is deadline:
        return _cache[1]
    found = _ignored_tracked(root, "", deadline)
    for sub in _submodules(root):
        if _index_stat(root / sub) is not None:
            found += _ignored_tracked(root / sub, sub + "/", deadline)
    answer = tuple(sorted(found))
    _cache = (key, answer, deadline)
    return answer


def _index_stat(root: Path) -> tuple[int, int, int] | None:
    """The index's size, time and inode when ``root`` is a work tree's top (``.git`` a folder or a pointer file)."""
    if not os.path.lexists(root / ".git"):
        return None
    try:
        info = os.stat(_git_dir(root) / "index")
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def _ignored_tracked(repo: Path, prefix: str, deadline: Deadline) -> list[str]:
    import shutil

    from ..proc import Child

    git = shutil.which("git")
    if git is None:
        return []
    # the repository's own rules only; no fsmonitor (a command its config could name)
    cmd = [git, "-c", "core.fsmonitor=false", "-C", str(repo), "ls-files", "-z", "--cached", "--ignored",
           "--exclude-per-directory=.gitignore"]
    exclude = _git_dir(repo) / "info" / "exclude"
    if exclude.is_file():
        cmd.append(f"--exclude-from={exclude}")
    child = Child.start(cmd, repo, deadline, "glob", "asking git which tracked files .gitignore matches")
    if child is None:
        return []
    with child:
        data = b"".join(child)
    if child.returncode != 0:
        return []
    return [prefix + os.fsdecode(name) for name in data.split(b"\0") if name]


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


def _submodules(root: Path) -> list[str]:
    """The paths ``.gitmodules`` names (those checked out are asked too)."""
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    paths = []
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == "path":
            value = value.strip()
            if value and not value.startswith("/") and ".." not in value.split("/"):
                paths.append(value.rstrip("/"))
    return paths
