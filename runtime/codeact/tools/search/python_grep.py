"""grep's Python engine: files searched one by one with Python's ``re`` (:func:`codeact.tools.textfile.search_file`),
the matches kept in path order; where the deadline cannot interrupt ``re`` (off the main thread), in a worker
process (:mod:`.regex_worker`)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...core.limits import Deadline
from .. import confine
from ..textfile import search_file
from . import regex_worker
from .results import FirstItems
from .scope import Stamped
from .walk import Glob, Reach


class Search:
    """One grep over the files below ``start``: the matches kept in ``found``, however they are found (here, or by
    ripgrep: :mod:`.rg_grep`)."""

    def __init__(self, regex: re.Pattern[str], matcher: Glob, reach: Reach | None, stamped: Stamped | None,
                 found: FirstItems, extra: int, deadline: Deadline) -> None:
        self.regex, self.matcher, self.reach, self.stamped = regex, matcher, reach, stamped
        self.found, self.extra, self.deadline = found, extra, deadline
        self.total: int | None = None  # matching lines in all, when not every one was offered to ``found``
        self.total_exact = True
        self.named = matcher.kind == "all"  # every file offered has a name the glob matches

    def accepts(self, rel: str, near: bool = True) -> bool:
        """Whether a file's matches belong in the answer (its name matches; a walk reaches it; not CodeAct's)."""
        return ((self.named or self.matcher.matches(rel)) and (self.reach is None or self.reach.ok(rel))
                and (self.stamped is None or not near or not self.stamped.hides(rel)))

    def file(self, path: Path, rel: str, max_count: int) -> None:
        """Search one file in Python, up to ``max_count`` matches; a binary file adds nothing."""
        size = len(rel) + self.extra
        one = FirstItems(min(max_count, self.found.count), self.found.budget, lambda hit: len(hit[1]) + size)
        if search_file(path, self.regex, max_count, self.deadline, one.add):
            self._merge(rel, one)

    def _merge(self, rel: str, one: FirstItems) -> None:
        """Add one file's matches; what that file could not keep, the answer cannot either."""
        if one.limit is not None:
            self.found.bar((rel, *one.limit))
        for number, text in one.items:
            self.found.add((rel, number, text))
        self.found.seen += one.seen - len(one.items)

    def first_in_files(self, start: Path, names: list[str]) -> None:
        """Search ``names`` (sorted) one by one in Python until enough matches are found."""
        with self.deadline.interrupting("grep", "searching files"):
            for rel in names:
                if self.found.seen >= self.found.count or self.found.limit is not None:
                    break  # enough, or the result limit is full: every later file sorts after the last kept
                self.deadline.check("grep", "searching files")
                self.file(start / rel, rel, self.found.count - self.found.seen)


def binary_file(file: Path) -> bool:
    """Whether ``file`` holds a NUL byte and is not UTF-16 (with a BOM): what :class:`TextReader` calls binary."""
    try:
        with open(file, "rb") as handle:
            chunk = handle.read(1 << 20)
            if chunk.startswith((b"\xff\xfe", b"\xfe\xff")):
                return False
            while chunk:
                if b"\0" in chunk:
                    return True
                chunk = handle.read(1 << 20)
    except OSError:
        return False
    return False


def first_in_files_in_worker(start: Path, names: list[str], regex: re.Pattern[str], count: int, budget: int,
                              extra: int, deadline: Deadline) -> list[list[Any]]:
    """The first matches, ``[rel, line, text]``, of the files ``names`` (below ``start``, sorted), searched one by
    one by Python in a child process killed at ``deadline``: grep's re-run when far more lines match than can be
    returned."""
    reply = regex_worker.ask(start, f"{__name__}:worker_first_in_files", {
        "start": str(start), "names": names, "pattern": regex.pattern, "flags": regex.flags, "count": count,
        "budget": budget, "extra": extra}, deadline)
    hits: list[list[Any]] = reply["hits"]
    return hits


def worker_first_in_files(request: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
    """The regex worker's side of :func:`first_in_files_in_worker`."""
    extra = request["extra"]
    found = FirstItems(request["count"], request["budget"], lambda hit: len(hit[0]) + len(hit[2]) + extra)
    search = Search(re.compile(request["pattern"], request["flags"]), Glob("**"), None, None, found, extra, deadline)
    with confine.reads_below(Path(request["start"])):
        search.first_in_files(Path(request["start"]), request["names"])
    hits, _ = search.found.result()
    return {"hits": hits}
