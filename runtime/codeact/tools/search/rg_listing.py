"""glob's ripgrep engine: the files ripgrep lists (``rg --files``), filtered as the Python walk filters them.

A file-name glob goes to ripgrep as an override (:class:`Overrides`) where no ignore rule can spoil it, else as a
file type, which keeps every ignore rule."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ...core.limits import Deadline
from ..proc import Child
from .results import FirstItems
from .ripgrep import FS, command, confined_reads, gathered, names_with
from .scope import SKIPPED_MARKS, Stamped, skipped
from .walk import SKIP_DIRS, SKIP_IGNORE_FILE, Glob, may_ignore, name_ends, read_ignore

_IGNORE_NAMES = (".gitignore", ".ignore", ".rgignore")
_LISTED_NAMES = (*_IGNORE_NAMES, ".git", "info", "exclude", *SKIP_DIRS)  # names the overrides below list or skip


class Overrides:
    """A file-name glob given to ripgrep as ``--glob`` rather than as a file type (less work for ripgrep),
    but an override beats every ignore rule for the names it matches (a .gitignore'd ``secret.py``; a folder
    ``x.py/`` is walked into). So ripgrep also lists the ignore files it reads (whitelisted by name, and each
    repository's ``.git/info/exclude``), and the listing stands only if none of their rules, nor those of the
    folders above the start, may match a name the glob matches (:func:`may_ignore`), and no folder listed matches
    it. Otherwise the listing is made again with a file type. ripgrep reads an ignore file that is a symbolic link
    (to a file below the workspace: it runs confined) but lists no link, so the start's own ignore files and those
    above it are read here by the same rule (:func:`read_ignore`; one cut to its first MiB: listed again); a link
    deeper down is not seen (known gap)."""

    def __init__(self, glob: Glob, ends: tuple[str, ...]) -> None:
        self.ends = ends
        self.flags = ["--glob", glob.rest, *(f for name in _IGNORE_NAMES for f in ("--glob", name)), "--glob", ".git",
                      "--glob", "!**/.git/*", "--glob", "**/.git/info", "--glob", "**/.git/info/exclude"]
        self.marks = tuple(name.encode() + b"/" for name in (*ends, *_IGNORE_NAMES))  # a folder the glob matches
        self.ignore_files: list[str] = []
        self.spoilt = False

    @classmethod
    def of(cls, glob: Glob) -> Overrides | None:
        """The overrides for ``glob``, if it is a file-name glob with a literal ending none of the names above has."""
        ends = name_ends(glob.rest) if glob.kind in ("name", "top") else None
        if ends is None or any(name.endswith(end) for name in _LISTED_NAMES for end in ends):
            return None
        return cls(glob, ends)

    def sift(self, listed: bytes) -> list[str]:
        """The ignore files in ``listed`` (whole NUL-ended names), kept aside to be read: the names to drop."""
        if any(mark in listed for mark in self.marks):
            self.spoilt = True
        drop = []
        for rel in {*names_with(listed, b"ignore\0"), *names_with(listed, b".git")}:
            name = rel.rpartition("/")[2]
            if name in _IGNORE_NAMES or rel.endswith(".git/info/exclude"):
                self.ignore_files.append(rel)
                drop.append(rel)
            elif name == ".git":
                self.spoilt = True  # a worktree's or submodule's pointer: its info/exclude lies elsewhere
        return drop

    def hold(self, root: Path, start: Path) -> bool:
        """Whether the listing stands: no ignore rule ripgrep read may have left out a name the glob matches."""
        if self.spoilt:
            return False
        files = [start / rel for rel in self.ignore_files] + [start / name for name in _IGNORE_NAMES]  # links too
        folder = start
        while True:  # the folders from the start up to the workspace root: their ignore files apply too
            files.append(folder / ".git" / "info" / "exclude")
            if folder == root:
                break
            folder = folder.parent
            files += [folder / name for name in _IGNORE_NAMES]
        read = [read_ignore(path, root) for path in files]  # a link out is not read, as ripgrep confined
        if any(got is not None and got.cut_from for got in read):
            return False  # rules past the cut are not seen here: listed again with every rule
        texts = [got.text if got is not None else None for got in read]
        try:
            texts.append(SKIP_IGNORE_FILE.read_text(encoding="utf-8"))  # ours, outside the workspace
        except OSError:
            return False
        return not any(text and may_ignore(text, self.ends) for text in texts)


def _without(paths: list[str], drop: list[str]) -> list[str]:
    if len(drop) > 16:
        gone = set(drop)
        return [rel for rel in paths if rel not in gone]
    for rel in set(drop):
        paths.remove(rel)
    return paths


def _kept(paths: list[str], keep: Callable[[str], bool], deadline: Deadline) -> list[str]:
    """The ``paths`` that ``keep`` accepts; each may be checked against every ignore rule above it (20,000 rules,
    3,000 names: 20 s), so the deadline is checked at each."""
    kept = []
    for path in paths:
        deadline.check("glob", "filtering the listing")
        if keep(path):
            kept.append(path)
    return kept


def list_files(rg: str, start: Path, glob: Glob, parents: Sequence[str], keep: Callable[[str], bool] | None,
               stamped: Stamped | None, found: FirstItems, extra: int, deadline: Deadline,
               overrides: Overrides | None = None, lead: str = "") -> bool:
    """Add the files ripgrep lists (those ``keep`` accepts, not ``stamped``) to ``found``, each after ``lead``;
    ``False`` if ripgrep could not run. With ``overrides``, stops early once they are spoilt. Each piece is added
    sorted, while ripgrep still lists: the final sort then only merges them."""
    # no path argument: ripgrep lists the current folder without a "./" prefix (--files never reads stdin)
    # listing is syscall-bound: more walker threads than ripgrep's default (one per CPU) overlap the waits
    threads = str(min(12, max(8, os.cpu_count() or 1)))
    flags = None if overrides is None else overrides.flags
    child = Child.start([*command(rg, glob, parents, flags), "--files", "--null", "--threads", threads],
                        start, deadline, "glob", "listing files", confined=confined_reads(rg))
    if child is None:
        return False
    rest, got = b"", False
    with child:
        for chunk in gathered(child):
            got = True
            data = rest + chunk
            cut = data.rfind(b"\0")
            rest = data[cut + 1:]  # after the last NUL: the start of the next name
            if cut < 0:
                continue
            paths = data[:cut].decode(*FS).split("\0")  # one decode, not one os.fsdecode per name
            listed = data[:cut + 1]
            drop = [] if overrides is None else overrides.sift(listed)
            if overrides is not None and overrides.spoilt:
                return True
            for mark in SKIPPED_MARKS:
                if mark in listed:
                    drop += [rel for rel in names_with(listed, mark) if skipped(rel)]
            if drop:
                paths = _without(paths, drop)
            if keep is not None:
                paths = _kept(paths, keep, deadline)
            if stamped is not None and stamped.near(data):
                paths = [p for p in paths if not stamped.hides(p)]
            if lead:
                paths = [lead + p for p in paths]
            paths.sort()
            found.extend(paths, sum(map(len, paths)) + extra * len(paths))
    return not (child.returncode == 2 and not got)
