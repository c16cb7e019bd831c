"""The grep tool: the lines matching a regular expression, found by ripgrep (:mod:`.rg_grep`) where it reads the
pattern as Python does, else by Python's ``re`` (:mod:`.python_grep`); the same answer either way (the rules:
:mod:`codeact.tools.search`)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...core import notices
from ...core.limits import Deadline
from ...core.pathnames import quote, quote_all
from ...core.patterns import check_pattern, compile_uncached
from ...core.tool import Cut, ToolContext
from ...errors import ToolError
from .. import confine
from ..textfile import search_file
from . import regex_worker
from .glob_files import matching_files
from .python_grep import Search
from .results import Answer, FirstItems, fitting, hit_sizes, hits_size
from .rg_grep import rg_can_run, search_one_file, search_tracked, search_tree
from .ripgrep import parent_flags, rg_binary
from .scope import base_of, ignored_start, stamped_below, tracked_below
from .walk import Glob, Reach, walk

DEFAULT_MAX_RESULTS = 100_000  # sized for real repositories: the 1 MiB tool-result limit is what cuts in practice


def grep(ctx: ToolContext, *, pattern: str, path: str = ".", glob: str | None = None, ignore_case: bool = False,
         max_results: int = DEFAULT_MAX_RESULTS) -> list[dict]:
    """Lines matching the regular expression ``pattern``: ``[{"path", "line", "text"}]``, sorted by path and line.

    ``pattern`` is a Python regular expression matched within one line. ``glob`` limits the files searched
    (``*.py``; ``src/**/*.ts``); ``max_results`` caps the matches returned (the first ones in path order); the
    tool-result limit (1 MiB) cuts too. A cut says so in a ``note:`` line with the real number of matching lines.
    ``.git``, ignored files (.gitignore), binary files and symbolic links are skipped; hidden files are searched.
    A line longer than 2000 characters is cut, with a note saying how much.
    """
    deadline = ctx.run_deadline()
    _compile(pattern, ignore_case)
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise ToolError(f"max_results must be a positive integer, got {max_results!r}")
    base, prefix = base_of(ctx, path)
    budget = int(ctx.limits.tool_result)
    with confine.reads_below(ctx.workspace.root, int(ctx.limits.memory)), _opened_file(base) as opened:
        answer = search_answer(ctx.workspace.root, base, prefix, pattern, glob, ignore_case, max_results, budget,
                               deadline, opened=opened)
    if not answer.hits and glob is not None and not _any_file(ctx, base, glob, path):
        notices.note("grep()", f"no file matches glob={glob!r} under path={path!r}: nothing was searched")
    return _returned(answer, max_results, budget)


@contextmanager
def _opened_file(base: Path) -> Iterator[Path | None]:
    """The file ``base`` opened and checked to lie below the root (:func:`codeact.tools.confine.open_below`), as a
    path any process of ours reads it by (``/proc/PID/fd/N``): a folder swapped for a link since ``base`` was
    resolved is not followed. ``None`` for a folder (or what is no regular file), or where the platform has no such path."""
    if not sys.platform.startswith("linux") or not base.is_file():
        yield None
        return
    fd = confine.open_below(base, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        yield Path(f"/proc/{os.getpid()}/fd/{fd}")
    finally:
        os.close(fd)


def _any_file(ctx: ToolContext, base: Path, glob: str, path: str) -> bool:
    """Whether ``glob`` names any file under ``path`` (a file ``path``: whether its name matches)."""
    if base.is_file():
        return Glob(glob).matches(base.name)
    return bool(matching_files(ctx, glob, path, 256)[0])


def _compile(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    check_pattern(pattern, "the pattern")
    try:
        return compile_uncached(pattern, re.IGNORECASE if ignore_case else 0)
    except (re.error, TypeError, RecursionError, OverflowError) as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None


def search_answer(root: Path, base: Path, prefix: str, pattern: str, glob: str | None, ignore_case: bool,
                  max_results: int, budget: int, deadline: Deadline, *, python: bool = False,
                  opened: Path | None = None) -> Answer:
    """grep's search, by ripgrep where it can answer and Python's ``re`` otherwise (``python``: Python only, the
    regex worker's way). The Python search of a pattern ripgrep cannot run is only made where the deadline can
    interrupt it (see :mod:`.regex_worker`)."""
    regex = _compile(pattern, ignore_case)
    plan = Glob(glob if glob is not None else "**")
    if base.is_file():  # one file named explicitly: searched even if ignored; its name must match the glob
        if glob is not None and not Glob(glob).matches(base.name):
            return Answer([], 0)
        shown = prefix.rstrip("/")
        read = opened or base  # ``opened``: the file's descriptor, as a path (the name was checked above)
        if not python and not regex_worker.interruptible():
            by_rg = search_one_file(read, shown, regex, ignore_case, max_results, budget, deadline)
            if by_rg is not None:
                return by_rg
            return _in_worker(root, read, prefix, pattern, None, ignore_case, max_results, budget, deadline)
        one = FirstItems(max_results, budget, lambda hit: len(hit[1]) + len(shown) + 36)
        with deadline.interrupting("grep", f"searching {shown}"):  # a regex may backtrack for ever
            binary = not search_file(read, regex, 1 << 62, deadline, one.add)
        if binary:
            raise ToolError(f"{quote(shown)} is a binary file; grep searches text files")
        lines, _ = one.result()
        return Answer([(shown, n, t) for n, t in lines], one.seen)
    start = plan.start(root, base)
    lead = prefix + "".join(d + "/" for d in plan.dirs)
    extra = len(lead) + 36  # {"path": "", "line": N, "text": ""} and the runner's 2, less the digits
    search = Search(regex, plan, Reach(root, start) if plan.kind == "path" and start else None,
                    stamped_below(root, start) if start else None,
                    FirstItems(max_results, budget, lambda hit: len(hit[0]) + len(hit[2]) + extra), extra, deadline)
    rg = None if python else rg_binary()
    if start is None:  # a folder no walk reaches: only the tracked files .gitignore rules match can lie there
        start = ignored_start(base, plan)
        tracked = tracked_below(root, start, plan, None, deadline, walked=False)
        if not tracked or start is None:
            return Answer([], 0)
        if not python and not regex_worker.interruptible() and (rg is None or not rg_can_run(pattern)):
            return _in_worker(root, base, prefix, pattern, glob, ignore_case, max_results, budget, deadline)
        search_tracked(search, rg, start, tracked, ignore_case)
        hits, _ = search.found.result()
        return Answer([(lead + rel, n, t) for rel, n, t in hits], max(search.found.seen, len(hits)))
    parents = parent_flags(root, start) if rg and rg_can_run(pattern) else None
    done = rg is not None and parents is not None and search_tree(search, rg, start, ignore_case, parents)
    tracked = tracked_below(root, start, plan, search.stamped, deadline)
    if not done:
        if not python and not regex_worker.interruptible():
            return _in_worker(root, base, prefix, pattern, glob, ignore_case, max_results, budget, deadline)
        search.found = FirstItems(max_results, budget, search.found.size)
        search.total = None
        with deadline.interrupting("grep", "searching files"):  # a regex may backtrack for ever
            for rel in walk(root, start, 1 if plan.kind == "top" else None):
                if search.accepts(rel):
                    deadline.check("grep", "searching files")
                    search.file(start / rel, rel, 1 << 62)  # every match counted: the note tells the real total
    if tracked:
        search_tracked(search, rg if done else None, start, tracked, ignore_case)
    hits, _ = search.found.result()
    total = search.found.seen if search.total is None else search.total
    return Answer([(lead + rel, n, t) for rel, n, t in hits], max(total, len(hits)), search.total_exact)


def _returned(answer: Answer, max_results: int, budget: int) -> Cut:
    """The hits as grep returns them, cut exactly to ``budget`` bytes as the runner counts them (so the runner never
    cuts again), and a note when fewer than ``answer.total`` are returned."""
    hits = answer.hits
    paths = [hit[0] for hit in hits]
    if quote_all(paths) is not paths:  # a name that is not UTF-8, as git quotes it (codeact.core.pathnames)
        hits = sorted((quote(p), n, t) for p, n, t in hits)
    kept = len(hits) if hits_size(hits) <= budget else fitting(hit_sizes(hits), budget)
    items = [{"path": p, "line": n, "text": t} for p, n, t in hits[:kept]]
    if answer.total > kept:
        total = f"{answer.total:,}" if answer.exact else f"at least {answer.total:,}"
        if kept >= max_results:
            why = f"max_results={max_results}; raise max_results= or narrow pattern, glob= or path="
        else:
            why = (f"the rest pass the {budget:,}-byte tool-result limit; narrow pattern, glob= or path= (one "
                   "folder at a time)")
        notices.note("grep()", f"returned {kept:,} of {total} matching lines, the first in path order ({why})")
    return Cut(items, 0, within=budget)


def _in_worker(root: Path, base: Path, prefix: str, pattern: str, glob: str | None, ignore_case: bool,
               max_results: int, budget: int, deadline: Deadline) -> Answer:
    """grep's answer searched by Python in a child process (:mod:`.regex_worker`), killed at
    ``deadline``."""
    reply = regex_worker.ask(root, f"{__name__}:worker_search", {
        "root": str(root), "base": str(base), "prefix": prefix, "pattern": pattern, "glob": glob,
        "ignore_case": ignore_case, "max_results": max_results, "budget": budget}, deadline)
    return Answer([(p, n, t) for p, n, t in reply["hits"]], reply["total"], reply["exact"])


def worker_search(request: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
    """The regex worker's side of :func:`_in_worker`."""
    with confine.reads_below(Path(request["root"])):
        answer = search_answer(Path(request["root"]), Path(request["base"]), request["prefix"], request["pattern"],
                               request["glob"], request["ignore_case"], request["max_results"], request["budget"],
                               deadline, python=True)
    return {"hits": answer.hits, "total": answer.total, "exact": answer.exact}
