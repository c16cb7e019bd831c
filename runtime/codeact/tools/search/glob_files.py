"""The glob tool: the files whose paths match a pattern, listed by ripgrep (:mod:`.rg_listing`) or by the Python
walk (:mod:`.walk`), which give the same answer (the rules: :mod:`codeact.tools.search`)."""
from __future__ import annotations

from pathlib import Path

from ...core import notices
from ...core.limits import Deadline
from ...core.pathnames import quote, quote_all
from ...core.tool import Cut, ToolContext
from .. import confine
from . import rg_listing
from .results import FirstItems, paths_fitting
from .ripgrep import parent_flags, rg_binary
from .scope import Stamped, base_of, ignored_start, stamped_below, tracked_below
from .tracked import Asked
from .walk import Glob, Reach, walk


def glob(ctx: ToolContext, *, pattern: str, path: str = ".") -> list[str]:
    """Files matching ``pattern`` under ``path``, workspace-relative and sorted.

    ``*.py`` matches names at any depth; a pattern with ``/`` (``src/*.py``, ``**/tests/*.py``) matches the path
    below ``path``. ``.git``, ignored files (.gitignore) and symbolic links are left out; hidden files are listed.
    """
    budget = int(ctx.limits.tool_result)
    files, total = matching_files(ctx, pattern, path, budget)
    paths = quote_all(files)  # a name that is not UTF-8, as git quotes it (codeact.core.pathnames)
    if paths is not files:
        paths.sort()
    kept = paths_fitting(paths, budget)
    if not total:
        notices.note("glob()", f"no file matches pattern={pattern!r} under path={path!r}")
    if kept < total:
        notices.note("glob()", f"returned {kept:,} of {total:,} files, the first in path order (the rest pass the "
                               f"{budget:,}-byte tool-result limit); narrow pattern= or path= (one folder at "
                               "a time)")
    return Cut(paths[:kept], 0, within=budget)


def matching_files(ctx: ToolContext, pattern: str, path: str, budget: int = 1 << 62) -> tuple[list[str], int]:
    """The files ``glob`` lists, their real workspace-relative paths sorted (at least those that fit in ``budget``
    bytes as the runner counts them), and how many match in all."""
    with confine.reads_below(ctx.workspace.root, int(ctx.limits.memory)):
        return _matching_files(ctx, pattern, path, budget)


def _matching_files(ctx: ToolContext, pattern: str, path: str, budget: int) -> tuple[list[str], int]:
    deadline = ctx.run_deadline()
    base, prefix = base_of(ctx, path)
    if not base.is_dir():
        raise NotADirectoryError(f"{quote(prefix.rstrip('/'))} is a file, not a folder; glob searches folders")
    plan = Glob(pattern)
    start = plan.start(ctx.workspace.root, base)
    lead = prefix + "".join(d + "/" for d in plan.dirs)  # put before each path as it is listed (never copied again)
    found = FirstItems(1 << 62, budget, lambda path: len(path) + 4)  # every file, to the byte cap (quotes and 2)
    if start is None:  # a folder no walk reaches: only the tracked files .gitignore rules match can lie there
        tracked = tracked_below(ctx.workspace.root, ignored_start(base, plan), plan, None, deadline, walked=False)
    else:
        stamped = stamped_below(ctx.workspace.root, start)
        with Asked(ctx.workspace.root, deadline) as asked:  # git answers while the files are listed
            found = _listed(ctx, plan, start, stamped, found, lead, deadline)
            tracked = tracked_below(ctx.workspace.root, start, plan, stamped, deadline, asked=asked)
    found.extend([lead + rel for rel in tracked], sum(map(len, tracked)) + (len(lead) + 4) * len(tracked))
    paths, _ = found.result()  # plain string order, as sorted() gives
    return paths, max(found.seen, len(paths))


def _listed(ctx: ToolContext, plan: Glob, start: Path, stamped: Stamped | None, found: FirstItems, lead: str,
            deadline: Deadline) -> FirstItems:
    """``found`` with the files below ``start`` that ``plan`` matches (each after ``lead``), as ripgrep lists them,
    else the walk."""
    rg = rg_binary()
    parents = parent_flags(ctx.workspace.root, start) if rg else None
    keep = None
    if plan.kind == "path":
        reach = Reach(ctx.workspace.root, start)
        keep = lambda rel: plan.matches(rel) and reach.ok(rel)  # noqa: E731
    listed = False
    if rg and parents is not None:
        overrides = rg_listing.Overrides.of(plan)
        if overrides is not None:
            listed = (rg_listing.list_files(rg, start, plan, parents, keep, stamped, found, 4, deadline, overrides,
                                            lead=lead)
                      and overrides.hold(ctx.workspace.root, start))
            if not listed:  # listed again with a file type, which keeps every ignore rule
                found = FirstItems(found.count, found.budget, found.size)
        listed = listed or rg_listing.list_files(rg, start, plan, parents, keep, stamped, found, 4, deadline,
                                                 lead=lead)
    if not listed:
        found = FirstItems(found.count, found.budget, found.size)
        batch: list[str] = []
        for rel in walk(ctx.workspace.root, start, 1 if plan.kind == "top" else None):
            if plan.matches(rel) and (stamped is None or not stamped.hides(rel)):
                batch.append(lead + rel)
                if len(batch) >= 1024:
                    deadline.check("glob", "listing files")
                    found.extend(batch, sum(map(len, batch)) + 4 * len(batch))
                    batch = []
        found.extend(batch, sum(map(len, batch)) + 4 * len(batch))
    return found
