"""Search tools: glob and grep, confined to the workspace.

Both use ripgrep when it is available (``rg`` next to this Python, as the ``ripgrep`` wheel installs it, else on
``PATH``) and a pure-Python walk otherwise; the two give the same answers. The rules, shared by both:

- only the workspace is reached; symbolic links met while walking are never followed (nor listed);
- hidden files are included, but ``.git`` and the folders in ``SKIP_DIRS`` are always skipped (whatever an
  ignore file says);
- ``.gitignore``, ``.ignore`` and ``.rgignore`` files inside the workspace are honoured as ripgrep honours them, in a
  git repository or not (a nested repository does not inherit the outer ``.gitignore``), together with
  ``.git/info/exclude``; ignore files above the workspace and a user's global git excludes are not read, so an
  answer does not depend on the machine;
- a ``path`` named explicitly is searched even if it is ignored itself (its contents are still filtered);
- files holding a NUL byte are binary and skipped; text is read as UTF-8 (a UTF-8 or UTF-16 BOM is honoured);
- lines end at ``\\n`` only; results are sorted as ``sorted()`` sorts the paths, then by line, paths workspace-relative;
- a search from the workspace root leaves out CodeAct's own stamped files (what the install's manifest lists as owned:
  its instructions, agent, skills, hooks file); a ``path`` inside them (``.github/skills``) searches them;
- every call ends by the run's deadline and holds bounded memory: ripgrep's output is read as it comes and only the
  results that can be returned are kept (``max_results``, and the tool-result byte limit); a matched line too long
  for ripgrep to print is read back from the file and cut; the Python search reads files in chunks.

Globs follow .gitignore/ripgrep syntax: ``*`` and ``?`` stay within one path segment, ``**`` crosses folders,
``[abc]``, ``[!a-z]`` and ``{py,md}`` work. A glob without ``/`` matches a file's name at any depth
(``*.py`` finds every Python file); a glob with ``/`` is matched against the path below ``path``
(``src/*.py``, ``**/tests/*.py``). Regular expressions are Python's ``re``; ripgrep runs them when it reads them
the same way, and the Python search runs the rest (look-arounds, back-references), where the run's deadline can stop
it: in process on the main thread (``SIGALRM``), else in a worker process (:mod:`codeact.tools.regex_worker`).

A grep or glob that returns less than everything says so in a note (:mod:`codeact.core.notices`) with the real
total; both cut their lists exactly as the runner counts them, so the runner never cuts them again.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby
from json.encoder import encode_basestring as _json_str  # type: ignore[attr-defined]  # as the runner counts
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

from ..core import notices
from ..core.limits import Deadline
from ..core.pathnames import quote, quote_all
from ..core.tool import Cut, ToolContext
from ..errors import ToolError
from . import confine, regex_worker
from .proc import Child
from .textfile import MAX_LINE_CHARS, LineCursor, clip, search_file
from .walk import SKIP_DIRS, SKIP_IGNORE_FILE, Glob, Reach, may_ignore, name_ends, walk

SKIP_DIRS_SET = frozenset(SKIP_DIRS)
LONG_COLUMNS = 4 * MAX_LINE_CHARS  # bytes: ripgrep omits a longer matched line; it is read back and cut here

# ------------------------------------------------------------------------------------------------------ ripgrep
_RG_UNSET = object()
_rg_cache: object = _RG_UNSET


def rg_binary() -> str | None:
    """The ripgrep executable: next to this Python (the ``ripgrep`` wheel), else on ``PATH``; ``None`` if absent."""
    global _rg_cache
    if _rg_cache is _RG_UNSET:
        import shutil
        import sys
        exe = "rg.exe" if os.name == "nt" else "rg"
        found = None
        for folder in {Path(sys.executable).parent, Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin")}:
            candidate = folder / exe
            if candidate.is_file() and os.access(candidate, os.X_OK):
                found = str(candidate)
                break
        _rg_cache = found or shutil.which(exe)
    return _rg_cache  # type: ignore[return-value]


def _rg_parents(root: Path, start: Path) -> list[str] | None:
    """The flags that make ripgrep read the ignore files the Python walk reads; ``None`` when it cannot.

    In a git work tree ripgrep keeps git's rules (a nested repository does not inherit the outer .gitignore), so
    ``--no-require-git`` is passed only outside one. ripgrep also reads ``.ignore``/``.rgignore`` files (and, outside
    a work tree, ``.gitignore`` and a surrounding repository's ``info/exclude``) of every folder above the
    workspace, up to ``/``: ``--no-ignore-parent`` drops them, but also the workspace's own folders above ``start``,
    so such a search below the root goes to Python, as does one below the root whose ignore files above ``start``
    hold anchored rules (:func:`_anchored_above`). About 20 ``stat`` calls, each time (a program may run
    ``git init``)."""
    in_git = (root / ".git").exists()
    names = (".ignore", ".rgignore") if in_git else (".gitignore", ".ignore", ".rgignore", ".git/info/exclude")
    flags = [] if in_git else ["--no-require-git"]
    if start != root and _anchored_above(root, start):
        return None
    if not any((folder / name).is_file() for folder in root.parents for name in names):
        return flags
    return [*flags, "--no-ignore-parent"] if start == root else None


def _anchored_above(root: Path, start: Path) -> bool:
    """Whether an ignore file between the root and ``start`` has a rule with a ``/`` inside (``/build``,
    ``!a/b/x.log``): ripgrep, searching from ``start``, matches such rules of the folders above it wrongly."""
    folder, folders = start.parent, []
    while folder != root and folder.is_relative_to(root):
        folders.append(folder)
        folder = folder.parent
    files = [f / n for f in (root, *folders) for n in (".gitignore", ".ignore", ".rgignore")]
    for path in [*files, root / ".git" / "info" / "exclude"]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            rule = line.strip().lstrip("!").rstrip("/")
            if rule and not line.startswith("#") and "/" in rule:
                return True
    return False


def _rg_reads(rg: str) -> tuple[str, ...]:
    """What a confined ripgrep reads outside the workspace (:mod:`codeact.tools.confine`): itself, our ignore file."""
    return rg, str(SKIP_IGNORE_FILE)


def _rg_command(rg: str, glob: Glob | None, parents: Sequence[str] = (),
                overrides: _Overrides | None = None) -> list[str]:
    cmd = [rg, "--no-config", "--hidden", "--no-ignore-global", "--no-messages", *parents]
    cmd += ["--ignore-file", str(SKIP_IGNORE_FILE)]  # SKIP_DIRS; re-included ones are dropped by _skipped
    if overrides is not None:
        cmd += overrides.flags
    elif glob is not None and glob.rg_type is not None:
        # a file type, not --glob: ripgrep lets --glob override .gitignore, while types respect it
        cmd += ["--type-clear", "codeact", "--type-add", f"codeact:{glob.rg_type}", "--type", "codeact"]
    if glob is not None and glob.kind == "top":
        cmd += ["--max-depth", "1"]
    if glob is not None and glob.kind == "path":
        # an override narrows the output, but it also beats .gitignore: Reach drops what it let through
        cmd += ["--glob", glob.rest]
    return cmd


_IGNORE_NAMES = (".gitignore", ".ignore", ".rgignore")
_LISTED_NAMES = (*_IGNORE_NAMES, ".git", "info", "exclude", *SKIP_DIRS)  # names the overrides below list or skip


class _Overrides:
    """A file-name glob given to ripgrep as ``--glob`` rather than as a file type: ~1.4x less work on 50,000 files,
    but an override beats every ignore rule for the names it matches (a .gitignore'd ``secret.py``; a folder
    ``x.py/`` is walked into). So ripgrep also lists the ignore files it reads (whitelisted by name, and each
    repository's ``.git/info/exclude``), and the listing stands only if none of their rules, nor those of the
    folders above the start, may match a name the glob matches (:func:`may_ignore`), and no folder listed matches
    it. Otherwise the listing is made again with a file type. Known gap: ripgrep reads an ignore file that is a
    symbolic link but lists no link; git (2.32+) does not read one at all."""

    __slots__ = ("ends", "flags", "marks", "ignore_files", "spoilt")

    def __init__(self, glob: Glob, ends: tuple[str, ...]) -> None:
        self.ends = ends
        self.flags = ["--glob", glob.rest, *(f for name in _IGNORE_NAMES for f in ("--glob", name)), "--glob", ".git",
                      "--glob", "!**/.git/*", "--glob", "**/.git/info", "--glob", "**/.git/info/exclude"]
        self.marks = tuple(name.encode() + b"/" for name in (*ends, *_IGNORE_NAMES))  # a folder the glob matches
        self.ignore_files: list[str] = []
        self.spoilt = False

    @classmethod
    def of(cls, glob: Glob) -> _Overrides | None:
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
        for rel in {*_names_with(listed, b"ignore\0"), *_names_with(listed, b".git")}:
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
        files = [start / rel for rel in self.ignore_files]
        folder = start
        while True:  # the folders from the start up to the workspace root: their ignore files apply too
            files.append(folder / ".git" / "info" / "exclude")
            if folder == root:
                break
            folder = folder.parent
            files += [folder / name for name in _IGNORE_NAMES]
        files.append(SKIP_IGNORE_FILE)
        for path in files:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                continue
            except OSError:
                return False
            if may_ignore(text, self.ends):
                return False
        return True


# ------------------------------------------------------------------------------------------ bounded results
class FirstItems:
    """The first items in sort order that fit in ``count`` items and ``budget`` bytes, kept while any number stream
    past: at most about twice that is ever held. ``size(item)`` must not exceed what the runner counts for the
    item (its JSON plus 2), so that what is kept is never less than what the runner would return."""

    __slots__ = ("count", "budget", "size", "items", "held", "seen", "limit", "_hold")

    def __init__(self, count: int, budget: int, size: Callable[[Any], int]) -> None:
        self.count, self.budget, self.size = count, budget, size
        self.items: list[Any] = []
        self.held = 0  # size of ``items``
        self.seen = 0  # items offered
        self.limit: Any = None  # every item from this one on is out
        self._hold = 2 * min(count, budget // 16 + 1)

    def add(self, item: Any) -> None:
        self.seen += 1
        if self.limit is not None and item >= self.limit:
            return
        self.items.append(item)
        self.held += self.size(item)
        if len(self.items) > self._hold or self.held > 2 * self.budget:
            self._prune()

    def extend(self, items: list[Any], size: int) -> None:
        """Add many at once; ``size``: their total size."""
        self.seen += len(items)
        if self.limit is not None:
            items = [item for item in items if item < self.limit]
            size = sum(map(self.size, items))
        self.items.extend(items)
        self.held += size
        if len(self.items) > self._hold or self.held > 2 * self.budget:
            self._prune()

    def bar(self, item: Any) -> None:
        """Leave out ``item`` and everything after it (a part searched apart could not keep it)."""
        if self.limit is None or item < self.limit:
            self.limit = item

    def _prune(self) -> None:
        import bisect
        from itertools import accumulate

        self.items.sort()
        if self.limit is not None:
            del self.items[bisect.bisect_left(self.items, self.limit):]
        ends = list(accumulate(map(self.size, self.items)))  # where each item ends: the sizes so far
        kept = min(self.count, bisect.bisect_right(ends, self.budget))
        total = ends[kept - 1] if kept else 0
        if kept < len(self.items):
            first_out = self.items[kept]
            self.limit = first_out if self.limit is None or first_out < self.limit else self.limit
            del self.items[kept:]
        self.held = total

    def result(self) -> tuple[list[Any], int]:
        """The items, sorted, and how many more within ``count`` the byte budget left out."""
        if self.limit is None and len(self.items) <= self.count and self.held <= self.budget:
            self.items.sort()  # all fit: ``held`` is their exact size, no per-item sizes needed
        else:
            self._prune()
        return self.items, max(0, min(self.seen, self.count) - len(self.items))


# ------------------------------------------------------------------------------------------ CodeAct's own files
class Stamped:
    """CodeAct's own stamped files in a workspace (the ``owned`` list of ``.codeact/manifest.json``; an install
    stamped before the manifest existed: its scope's layout), left out of searches from the workspace root."""

    __slots__ = ("entries", "marks")

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
    from ..layout import for_scope, has_answers, scope_of  # only for an install stamped before the manifest existed

    if not has_answers(root):
        return ()

    return for_scope(scope_of(root)).owned


# --------------------------------------------------------------------------------------------- ripgrep output
# What in ripgrep's raw output may show a path to drop: a SKIP_DIRS folder or a `.git` file (a worktree's or a
# submodule's pointer to its repository).
_SKIPPED_MARKS = (*(name.encode() + b"/" for name in SKIP_DIRS), b".git\0")


def _skipped(rel: str) -> bool:
    """Whether ``rel`` lies in a SKIP_DIRS folder (an ignore file's ``!`` rule can make ripgrep list it) or is a
    ``.git`` file, which the Python walk never lists."""
    return not SKIP_DIRS_SET.isdisjoint(rel.split("/")[:-1]) or rel.rpartition("/")[2] == ".git"


_FS = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())  # os.fsdecode's, for a whole chunk at once


def _rel(raw: bytes) -> str:
    rel = os.fsdecode(raw)
    return rel[2:] if rel.startswith("./") else rel


_GATHER = 32 << 10  # bytes of ripgrep's output read before they are parsed


def _gathered(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` joined into pieces of at least ``_GATHER`` bytes (the last may be less): ripgrep writes file by
    file, so most reads hold a few records, and each parse has a cost of its own."""
    held: list[bytes] = []
    size = 0
    for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        if size >= _GATHER:
            yield b"".join(held)
            held, size = [], 0
    if held:
        yield b"".join(held)


def _names_with(listed: bytes, mark: bytes) -> list[str]:
    """The names in ``listed`` (NUL-ended) that hold ``mark``: found at C speed, where few are expected."""
    names, at = [], listed.find(mark)
    while at >= 0:
        end = listed.find(b"\0", at)
        names.append(listed[listed.rfind(b"\0", 0, at) + 1:end].decode(*_FS))
        at = listed.find(mark, end + 1)
    return names


def _without(paths: list[str], drop: list[str]) -> list[str]:
    if len(drop) > 16:
        gone = set(drop)
        return [rel for rel in paths if rel not in gone]
    for rel in set(drop):
        paths.remove(rel)
    return paths


def _rg_files(rg: str, start: Path, glob: Glob, parents: Sequence[str], keep: Callable[[str], bool] | None,
              stamped: Stamped | None, found: FirstItems, extra: int, deadline: Deadline,
              overrides: _Overrides | None = None) -> bool:
    """Add the files ripgrep lists (those ``keep`` accepts, not ``stamped``) to ``found``; ``False`` if ripgrep
    could not run. With ``overrides``, stops early once they are spoilt."""
    # no path argument: ripgrep lists the current folder without a "./" prefix (--files never reads stdin)
    # listing is syscall-bound: more walker threads than ripgrep's default (one per CPU) overlap the waits
    threads = str(min(12, max(8, os.cpu_count() or 1)))
    child = Child.start([*_rg_command(rg, glob, parents, overrides), "--files", "--null", "--threads", threads],
                        start, deadline, "glob", "listing files", confined=_rg_reads(rg))
    if child is None:
        return False
    rest, got = b"", False
    with child:
        for chunk in _gathered(child):
            got = True
            data = rest + chunk
            cut = data.rfind(b"\0")
            rest = data[cut + 1:]  # after the last NUL: the start of the next name
            if cut < 0:
                continue
            paths = data[:cut].decode(*_FS).split("\0")  # one decode, not one os.fsdecode per name
            listed = data[:cut + 1]
            drop = [] if overrides is None else overrides.sift(listed)
            if overrides is not None and overrides.spoilt:
                return True
            for mark in _SKIPPED_MARKS:
                if mark in listed:
                    drop += [rel for rel in _names_with(listed, mark) if _skipped(rel)]
            if drop:
                paths = _without(paths, drop)
            if keep is not None:
                paths = [p for p in paths if keep(p)]
            if stamped is not None and stamped.near(data):
                paths = [p for p in paths if not stamped.hides(p)]
            found.extend(paths, sum(map(len, paths)) + extra * len(paths))
    return not (child.returncode == 2 and not got)


# --------------------------------------------------------------------------------------------------------- tools
def _base(ctx: ToolContext, path: str) -> tuple[Path, str]:
    """The folder or file ``path`` names, and its real workspace-relative path plus ``/`` (``""`` at the root)."""
    base = ctx.workspace.resolve(path, must_exist=True)
    return base, "" if base == ctx.workspace.root else base.relative_to(ctx.workspace.root).as_posix() + "/"


def _stamped(root: Path, start: Path) -> Stamped | None:
    """CodeAct's own files to leave out of a search that starts at ``start``: only from the workspace root."""
    if start != root:
        return None
    stamped = Stamped(root)
    return stamped if stamped.entries else None


def _tracked_below(root: Path, start: Path | None, plan: Glob, stamped: Stamped | None,
                   deadline: Deadline, walked: bool = True) -> list[str]:
    """The tracked files below ``start`` that .gitignore rules hide from both engines and git does not
    (:mod:`codeact.tools.tracked`), relative to ``start``, that ``plan`` matches: regular files, none in a skipped
    folder or CodeAct's own, and (``walked``: a walk from ``start`` ran) none that walk lists."""
    if start is None:
        return []
    from .tracked import hidden_tracked

    hidden = hidden_tracked(root, deadline)
    if not hidden:
        return []
    below = "" if start == root else start.relative_to(root).as_posix() + "/"
    reach: Reach | None = None
    found = []
    for path in hidden:
        rel = path[len(below):]
        if (path.startswith(below) and plan.matches(rel) and not _skipped(rel)
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


def _ignored_start(base: Path, plan: Glob) -> Path | None:
    """The folder ``plan``'s literal folders name below ``base`` when a walk does not reach it (ignored), if it is
    a real folder outside the skipped ones."""
    if SKIP_DIRS_SET.intersection(plan.dirs):
        return None
    folder = base.joinpath(*plan.dirs)
    return folder if os.path.isdir(folder) and os.path.realpath(folder) == str(folder) else None


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
    if 12 * sum(map(len, paths)) + 4 * len(paths) <= budget:
        kept = len(paths)  # fits even if every character took 12 in JSON (ensure_ascii: a pair of \\uXXXX at most)
    else:
        whole = len(_json_str("\0".join(paths))) - 2 * len(paths) + 4 if paths else 0  # each NUL: 6; quotes and 2
        kept = (len(paths) if whole <= budget
                else _fitting([len(_json_str(p)) + 2 for p in paths], budget))
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
    with confine.reads_below(ctx.workspace.root):
        return _matching_files(ctx, pattern, path, budget)


def _matching_files(ctx: ToolContext, pattern: str, path: str, budget: int) -> tuple[list[str], int]:
    deadline = ctx.run_deadline()
    base, prefix = _base(ctx, path)
    if not base.is_dir():
        raise NotADirectoryError(f"{quote(prefix.rstrip('/'))} is a file, not a folder; glob searches folders")
    plan = Glob(pattern)
    start = plan.start(ctx.workspace.root, base)
    lead = prefix + "".join(d + "/" for d in plan.dirs)
    extra = len(lead) + 4  # the quotes and the runner's 2 per item
    found = FirstItems(1 << 62, budget, lambda rel: len(rel) + extra)  # every file, to the byte cap
    if start is None:  # a folder no walk reaches: only the tracked files .gitignore rules match can lie there
        tracked = _tracked_below(ctx.workspace.root, _ignored_start(base, plan), plan, None, deadline, walked=False)
        found.extend(tracked, sum(map(len, tracked)) + extra * len(tracked))
        files, _ = found.result()
        return [lead + rel for rel in files], max(found.seen, len(files))
    stamped = _stamped(ctx.workspace.root, start)
    rg = rg_binary()
    parents = _rg_parents(ctx.workspace.root, start) if rg else None
    keep = None
    if plan.kind == "path":
        reach = Reach(ctx.workspace.root, start)
        keep = lambda rel: plan.matches(rel) and reach.ok(rel)  # noqa: E731
    listed = False
    if rg and parents is not None:
        overrides = _Overrides.of(plan)
        if overrides is not None:
            listed = (_rg_files(rg, start, plan, parents, keep, stamped, found, extra, deadline, overrides)
                      and overrides.hold(ctx.workspace.root, start))
            if not listed:  # listed again with a file type, which keeps every ignore rule
                found = FirstItems(found.count, found.budget, found.size)
        listed = listed or _rg_files(rg, start, plan, parents, keep, stamped, found, extra, deadline)
    if not listed:
        found = FirstItems(found.count, found.budget, found.size)
        batch: list[str] = []
        for rel in walk(ctx.workspace.root, start, 1 if plan.kind == "top" else None):
            if plan.matches(rel) and (stamped is None or not stamped.hides(rel)):
                batch.append(rel)
                if len(batch) >= 1024:
                    deadline.check("glob", "listing files")
                    found.extend(batch, sum(map(len, batch)) + extra * len(batch))
                    batch = []
        found.extend(batch, sum(map(len, batch)) + extra * len(batch))
    tracked = _tracked_below(ctx.workspace.root, start, plan, stamped, deadline)
    found.extend(tracked, sum(map(len, tracked)) + extra * len(tracked))
    files, _ = found.result()  # plain string order, as sorted() gives
    paths = [lead + rel for rel in files] if lead else files
    return paths, max(found.seen, len(paths))


DEFAULT_MAX_RESULTS = 100_000  # sized for real repositories: the 1 MiB tool-result limit is what cuts in practice


class Answer(NamedTuple):
    """What a grep found: the first ``hits`` in path order (``(path, line, text)``, paths workspace-relative), and
    ``total``, the number of matching lines in all (at least that many when not ``exact``)."""

    hits: list[tuple[str, int, str]]
    total: int
    exact: bool = True


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
    base, prefix = _base(ctx, path)
    budget = int(ctx.limits.tool_result)
    with confine.reads_below(ctx.workspace.root), _opened_file(base) as opened:
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
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except (re.error, TypeError) as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None


def search_answer(root: Path, base: Path, prefix: str, pattern: str, glob: str | None, ignore_case: bool,
                  max_results: int, budget: int, deadline: Deadline, *, python: bool = False,
                  opened: Path | None = None) -> Answer:
    """grep's search, by ripgrep where it can answer and Python's ``re`` otherwise (``python``: Python only, the
    regex worker's way). The Python search of a pattern ripgrep cannot run is only made where the deadline can
    interrupt it (see :mod:`codeact.tools.regex_worker`)."""
    regex = _compile(pattern, ignore_case)
    plan = Glob(glob if glob is not None else "**")
    if base.is_file():  # one file named explicitly: searched even if ignored; its name must match the glob
        if glob is not None and not Glob(glob).matches(base.name):
            return Answer([], 0)
        shown = prefix.rstrip("/")
        read = opened or base  # ``opened``: the file's descriptor, as a path (the name was checked above)
        if not python and not regex_worker.interruptible():
            by_rg = _rg_one_file(read, shown, regex, ignore_case, max_results, budget, deadline)
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
    search = _Search(regex, plan, Reach(root, start) if plan.kind == "path" and start else None,
                     _stamped(root, start) if start else None,
                     FirstItems(max_results, budget, lambda hit: len(hit[0]) + len(hit[2]) + extra), extra, deadline)
    rg = None if python else rg_binary()
    if start is None:  # a folder no walk reaches: only the tracked files .gitignore rules match can lie there
        start = _ignored_start(base, plan)
        tracked = _tracked_below(root, start, plan, None, deadline, walked=False)
        if not tracked or start is None:
            return Answer([], 0)
        if not python and not regex_worker.interruptible() and (rg is None or not _rg_can_run(pattern)):
            return _in_worker(root, base, prefix, pattern, glob, ignore_case, max_results, budget, deadline)
        search.tracked(rg, start, tracked, ignore_case)
        hits, _ = search.found.result()
        return Answer([(lead + rel, n, t) for rel, n, t in hits], max(search.found.seen, len(hits)))
    parents = _rg_parents(root, start) if rg and _rg_can_run(pattern) else None
    done = rg is not None and parents is not None and search.ripgrep(rg, start, ignore_case, parents)
    tracked = _tracked_below(root, start, plan, search.stamped, deadline)
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
        search.tracked(rg if done else None, start, tracked, ignore_case)
    hits, _ = search.found.result()
    total = search.found.seen if search.total is None else search.total
    return Answer([(lead + rel, n, t) for rel, n, t in hits], max(total, len(hits)), search.total_exact)


def _rg_one_file(file: Path, shown: str, regex: re.Pattern[str], ignore_case: bool, max_results: int, budget: int,
                 deadline: Deadline) -> Answer | None:
    """One file searched by ripgrep (off the main thread, where Python's ``re`` could not be stopped), read as the
    directory search reads it; ``None`` when Python must answer. A binary file is told apart first, here, as the
    Python search tells it (ripgrep searches an explicitly named binary file)."""
    if _binary_file(file):
        raise ToolError(f"{quote(shown)} is a binary file; grep searches text files")
    rg = rg_binary()
    if rg is None or not _rg_can_run(regex.pattern):
        return None
    extra = 36 + len(shown) - len(file.name)
    search = _Search(regex, Glob("**"), None, None, FirstItems(max_results, budget,
                                                               lambda hit: len(hit[0]) + len(hit[2]) + extra),
                     extra, deadline)
    cmd = [rg, "--no-config", "--no-messages", *(["--ignore-case"] if ignore_case else []), "--no-heading",
           "--with-filename", "--line-number", "--null", "--color", "never", "--max-columns", str(LONG_COLUMNS),
           "--regexp", regex.pattern, "--", file.name]
    try:
        if not search._lines(cmd, file.parent, 1 << 62):
            return None
    except _Unknown:
        return None
    hits, _ = search.found.result()
    return Answer([(shown, n, t) for _, n, t in hits], max(search.found.seen, len(hits)))


def _binary_file(file: Path) -> bool:
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


def _returned(answer: Answer, max_results: int, budget: int) -> Cut:
    """The hits as grep returns them, cut exactly to ``budget`` bytes as the runner counts them (so the runner never
    cuts again), and a note when fewer than ``answer.total`` are returned."""
    hits = answer.hits
    paths = [hit[0] for hit in hits]
    if quote_all(paths) is not paths:  # a name that is not UTF-8, as git quotes it (codeact.core.pathnames)
        hits = sorted((quote(p), n, t) for p, n, t in hits)
    kept = len(hits) if _hits_size(hits) <= budget else _fitting(_hit_sizes(hits), budget)
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


def _hits_size(hits: list[tuple[str, int, str]]) -> int:
    """The size of all hits as the runner counts them (see :func:`_hit_sizes`), in a few C-speed passes: one
    encoding of all texts joined by NUL (each NUL encodes to 6 characters), one of all line numbers."""
    if not hits:
        return 0
    n = len(hits)
    texts = len(_json_str("\0".join(map(itemgetter(2), hits)))) - 2 - 6 * (n - 1) + 2 * n  # each with quotes
    paths = len(_json_str("\0".join(map(itemgetter(0), hits)))) - 2 - 6 * (n - 1) + 2 * n
    digits = len(",".join(map(str, map(itemgetter(1), hits)))) - (n - 1)
    return texts + paths + 32 * n + digits  # {"path": , "line": , "text": } and the runner's 2: 32 an item


def _hit_sizes(hits: list[tuple[str, int, str]]) -> list[int]:
    """Each hit's size as the runner counts it (its JSON, ``ensure_ascii``, plus 2), without a json.dumps each."""
    paths: dict[str, int] = {}
    sizes = []
    for path, number, text in hits:
        size = paths.get(path)
        if size is None:
            size = paths[path] = len(_json_str(path)) + 32  # {"path": P, "line": , "text": } and the runner's 2
        sizes.append(size + len(str(number)) + len(_json_str(text)))
    return sizes


def _fitting(sizes: list[int], budget: int) -> int:
    """How many leading items of these sizes fit in ``budget`` bytes."""
    import bisect
    from itertools import accumulate

    return bisect.bisect_right(list(accumulate(sizes)), budget)


def _rg_can_run(pattern: str) -> bool:
    """Whether ripgrep reads ``pattern`` as Python does (it refuses look-arounds and back-references itself)."""
    return "[[:" not in pattern and "\\p" not in pattern and "\\P" not in pattern


FLOOD_FACTOR, FLOOD_MIN = 20, 30_000  # beyond max(FLOOD_FACTOR * max_results, FLOOD_MIN) matches: sorted re-run
_OMITTED = re.compile(rb"\[Omitted long (?:matching line|line with \d+ matches)\]")  # ripgrep 14; 13 and older
_BINARY_WARNING = re.compile(rb"(.*): WARNING: stopped searching binary file after match \(found .+ byte around "
                             rb"offset \d+\)")
_MAX_RECORD = LONG_COLUMNS + (1 << 16)  # a path and a line that ripgrep printed in full
_RECORD = re.compile(r"(?:\./)?([^\0\n]*)\0([0-9]+):([^\n]*)")  # path (its "./" dropped as _rel drops it), line, text


class _Flood(Exception):
    """Far more lines match than can be returned: the sorted re-run answers."""


class _Unknown(Exception):
    """ripgrep printed something this parser does not know: the Python search answers."""


class _Search:
    """One grep over the files below ``start``: the matches kept in ``found``, however they are found."""

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

    def ripgrep(self, rg: str, start: Path, ignore_case: bool, parents: Sequence[str]) -> bool:
        """The matches found by ripgrep; ``False`` when the Python search must answer.

        ripgrep searches in parallel, in no fixed order, and prints each file's matches together; its output is
        read as it comes and only what can be returned is kept. When far more lines match than that, the run is
        stopped and the files that match are searched in path order until enough are found: the same answer.
        """
        # no --max-count: ripgrep would stop reading a file early and miss a NUL byte that makes it binary
        cmd = _rg_command(rg, self.matcher, parents)
        if ignore_case:
            cmd.append("--ignore-case")
        query = ["--regexp", self.regex.pattern, "."]
        returnable = min(self.found.count, self.found.budget // (self.extra + 2) + 1)  # what can be returned at most
        flood = max(FLOOD_FACTOR * returnable, FLOOD_MIN)
        self.named = self.matcher.kind == "all" or self.matcher.by_ending  # ripgrep lists only such names
        try:
            return self._lines([*cmd, "--no-heading", "--with-filename", "--line-number", "--null", "--color",
                                "never", "--max-columns", str(LONG_COLUMNS), *query], start, flood)
        except _Unknown:
            return False
        except _Flood:
            self.found = FirstItems(self.found.count, self.found.budget, self.found.size)
            return self._first_files([*cmd, "--count", "--null", *query], start)
        finally:
            self.named = self.matcher.kind == "all"

    def tracked(self, rg: str | None, start: Path, names: list[str], ignore_case: bool) -> None:
        """Search ``names`` (below ``start``: tracked files .gitignore rules match, which no walk reaches) too:
        given to ripgrep by name (``rg``), else in Python (where the deadline can stop it)."""
        found = self.found
        before, saved = found.seen, (list(found.items), found.held, found.limit)
        reach, named = self.reach, self.named
        self.reach, self.named = None, True  # chosen already: the names match, and git does not ignore them
        try:
            texts = [rel for rel in names if not _binary_file(start / rel)]  # ripgrep reads a named binary file
            done = False
            if rg is not None and texts:
                cmd = [rg, "--no-config", "--no-messages", *(["--ignore-case"] if ignore_case else []),
                       "--no-heading", "--with-filename", "--line-number", "--null", "--color", "never",
                       "--max-columns", str(LONG_COLUMNS), "--regexp", self.regex.pattern, "--", *texts]
                try:
                    done = self._lines(cmd, start, 1 << 62)
                except (_Unknown, _Flood):  # read again in Python, from where it was
                    found.seen, (found.items, found.held, found.limit) = before, saved
            if not done:
                with self.deadline.interrupting("grep", "searching files"):
                    for rel in texts:
                        self.deadline.check("grep", "searching files")
                        self.file(start / rel, rel, 1 << 62)
        finally:
            self.reach, self.named = reach, named
        if self.total is not None:
            self.total += self.found.seen - before

    def _lines(self, cmd: list[str], start: Path, flood: int) -> bool:
        """Read ripgrep's ``path NUL line:text`` records; raises _Flood past ``flood`` of them."""
        child = Child.start(cmd, start, self.deadline, "grep", "searching with ripgrep", stream=True,
                            confined=_rg_reads(cmd[0]))
        if child is None:
            return False
        file = _FileMatches(self, start)
        rest, got, records = b"", False, 0
        try:
            with child:
                for chunk in _gathered(child):
                    got = True
                    data = rest + chunk
                    end = data.rfind(b"\n")
                    block, rest = (data[:end], data[end + 1:]) if end >= 0 else (b"", data)
                    if len(rest) > _MAX_RECORD:
                        raise _Unknown
                    if not block:
                        continue
                    skip = any(mark in data for mark in _SKIPPED_MARKS)
                    near = self.stamped is not None and self.stamped.near(data)
                    taken = file.bulk(block, skip, near)
                    if taken is None:
                        records = file.each(block.split(b"\n"), skip, near, records, flood)
                    else:
                        records += taken
                        if records > flood:
                            raise _Flood
                file.switch(None, False, False)
        finally:
            file.close()
        return not (child.returncode == 2 and not got)  # 2 and silent: ripgrep could not run this pattern

    def _first_files(self, cmd: list[str], start: Path) -> bool:
        """The first matches in path order: the files that match and their counts (ripgrep, in parallel), sorted,
        then searched one by one until enough are found. The counts give the total."""
        child = Child.start(cmd, start, self.deadline, "grep", "counting the lines that match", stream=True,
                            confined=_rg_reads(cmd[0]))
        if child is None:
            return False
        names: list[str] = []
        rest, got, total = b"", False, 0
        with child:
            for chunk in _gathered(child):
                got = True
                data = rest + chunk
                records = data.split(b"\n")
                rest = records.pop()
                skip = any(mark in data for mark in _SKIPPED_MARKS)
                near = self.stamped is not None and self.stamped.near(data)
                for record in records:
                    raw, nul, count = record.rpartition(b"\0")
                    if not nul or not count.isdigit():
                        continue  # not a count record (ripgrep's binary-file warning)
                    rel = _rel(raw)
                    if not (skip and _skipped(rel)) and self.accepts(rel, near):
                        names.append(rel)
                        total += int(count)
        if child.returncode == 2 and not got:
            return False
        self.total = total
        if not regex_worker.interruptible():  # Python's re could backtrack for ever here: in a killable process
            for hit in _first_in_files_in_worker(start, sorted(names), self.regex, self.found.count,
                                                 self.found.budget, self.extra, self.deadline):
                self.found.add(tuple(hit))
            return True
        self.first_in_files(start, sorted(names))
        return True

    def first_in_files(self, start: Path, names: list[str]) -> None:
        """Search ``names`` (sorted) one by one in Python until enough matches are found."""
        with self.deadline.interrupting("grep", "searching files"):
            for rel in names:
                if self.found.seen >= self.found.count or self.found.limit is not None:
                    break  # enough, or the result limit is full: every later file sorts after the last kept
                self.deadline.check("grep", "searching files")
                self.file(start / rel, rel, self.found.count - self.found.seen)


class _FileMatches:
    """The matches of the file ripgrep is printing, held until its output ends (a binary file's are dropped).

    ripgrep prints a file's lines in order, so once that file's first ``keep`` lines (or ``budget`` bytes) are held,
    no later line of it can be returned: it is only counted. Lines are held as ripgrep's raw ``N:text`` records and
    decoded once, when the file ends. A block of plain records (:meth:`bulk`) is read in a few passes instead: every
    file in it but the last is whole and goes straight to the answer."""

    def __init__(self, search: _Search, start: Path) -> None:
        self.search, self.start = search, start
        self.raw: bytes | None = None
        self.rel = ""
        self.lines: list[bytes] | None = None  # the records of the file being read; None: not wanted
        self.keep, self.budget = search.found.count, search.found.budget
        self.size = search.extra - 4  # at most a record's size as returned, less its text ("N:" is in the record)
        self.held = 0
        self.past = 0  # lines counted, not held
        self.cut_at: int | None = None  # the first line not held
        self.cursor: LineCursor | None = None
        self.taken: set[str] = set()  # the files whose output ended

    def each(self, lines: list[bytes], skip: bool, near: bool, records: int, flood: int) -> int:
        """Read ``lines`` one by one; the number of records read in all (``records`` before)."""
        for line in lines:
            path, nul, body = line.partition(b"\0")
            if not nul:
                warned = _BINARY_WARNING.fullmatch(line)
                if warned is None:
                    raise _Unknown
                self.binary(warned[1])
                continue
            records += 1
            if records > flood:
                raise _Flood
            if path != self.raw:
                self.switch(path, skip, near)
            self.take(body)
        return records

    def take(self, body: bytes) -> None:
        """One record of the current file: held, or (past what can be returned) only counted."""
        lines = self.lines
        if lines is not None:
            if self.cut_at is None and len(lines) < self.keep and self.held <= self.budget:
                lines.append(body)
                # never above the line's size as returned (ensure_ascii JSON; cut at 2,000)
                self.held += min(len(body), MAX_LINE_CHARS) + self.size
            else:
                self.count_past(body)

    def bulk(self, block: bytes, skip: bool, near: bool) -> int | None:
        """Read a block of whole records in a few C-speed passes; how many, or ``None`` when :meth:`each` must
        read it (a line that is not a plain record, a CR, a line ripgrep did not print, bytes that are not UTF-8).
        The files in it are whole but the first (it may go on from the previous block) and the last (it may go on,
        or a binary-file warning may follow): those two are read as :meth:`each` reads them. The whole ones go to
        the answer uncut: a file's lines past what can be returned sort after what is returned (``found`` drops
        them as it drops them from :meth:`_merge`), and a block is at most a read's size."""
        count = block.count(b"\n") + 1
        if block.count(b"\0") != count or b"\r" in block or b"[Omitted long" in block or _FS[0] != "utf-8":
            return None
        try:
            records = _RECORD.findall(block.decode("utf-8"))
        except UnicodeDecodeError:
            return None
        if len(records) != count:
            return None
        runs = [(rel, len(list(group))) for rel, group in groupby(map(itemgetter(0), records))]
        first = runs[0][1] if self.raw is not None and block.startswith(self.raw + b"\0") else 0
        last = runs[-1][1]
        if first:
            self._take_raw(block.split(b"\n", first)[:first])
            if first == count:
                return count
        whole = records[first:count - last]
        if whole:
            self.switch(None, skip, near)
            self._commit(whole, [rel for rel, _ in runs[1 if first else 0:-1]], skip, near)
        tail = block.rsplit(b"\n", last)
        tail = tail[1:] if len(tail) > last else tail
        self.switch(tail[0].partition(b"\0")[0], skip, near)
        self._take_raw(tail)
        return count

    def _take_raw(self, lines: list[bytes]) -> None:
        for line in lines:
            self.take(line.partition(b"\0")[2])

    def _commit(self, records: list[tuple[str, str, str]], files: list[str], skip: bool, near: bool) -> None:
        """Whole files' records (``path``, ``line``, ``text``), ``files`` their paths in order: to the answer."""
        if len(set(files)) != len(files) or not self.taken.isdisjoint(files):
            raise _Flood  # a file's output in two pieces: not what this reader relies on; the sorted re-run answers
        self.taken.update(files)
        search = self.search
        if skip or near or not search.named or search.reach is not None:
            wanted = {rel for rel in files if not (skip and _skipped(rel)) and search.accepts(rel, near)}
            records = [record for record in records if record[0] in wanted]
            if not records:
                return
        paths, numbers, texts = zip(*records)
        if max(map(len, texts)) > MAX_LINE_CHARS:
            texts = tuple(text if len(text) <= MAX_LINE_CHARS else clip(text) for text in texts)
        hits = list(zip(paths, map(int, numbers), texts))
        search.found.extend(hits, sum(map(len, texts)) + sum(map(len, paths)) + search.extra * len(hits))

    def switch(self, raw: bytes | None, skip: bool, near: bool) -> None:
        """The previous file's output ended: keep its matches; start collecting ``raw``'s."""
        if self.lines is not None:
            self._merge()
        if self.raw is not None:
            self.taken.add(self.rel)
        self.close()
        self.raw, self.lines = raw, None
        if raw is None:
            return
        self.rel = rel = _rel(raw)
        if rel in self.taken:
            raise _Flood  # a file's output in two pieces: not what this reader relies on; the sorted re-run answers
        if not (skip and _skipped(rel)) and self.search.accepts(rel, near):
            self.lines, self.held, self.past, self.cut_at = [], 0, 0, None
            self.size = len(rel) + self.search.extra - 4

    def count_past(self, body: bytes) -> None:
        if self.cut_at is None:
            self.cut_at = int(body.partition(b":")[0])
        self.past += 1

    def _merge(self) -> None:
        rel, found, lines = self.rel, self.search.found, self.lines
        self.lines = None
        if not lines:
            return
        joined = b"\n".join(lines)
        hits: list[tuple[str, int, str]] = []
        if b"\r" in joined or b"[Omitted long" in joined:  # a final CR to drop, a line ripgrep did not print
            for body in lines:
                number, _, raw = body.partition(b":")
                hits.append((rel, int(number), self._text(int(number), raw)))
        else:  # one decode for the file (an invalid byte sequence ends at its line's end either way)
            for record in joined.decode("utf-8", "replace").split("\n"):
                number_text, _, text = record.partition(":")
                hits.append((rel, int(number_text), text if len(text) <= MAX_LINE_CHARS else clip(text)))
        found.extend(hits, sum(len(hit[2]) for hit in hits) + (self.size + 4) * len(hits))
        found.seen += self.past
        if self.cut_at is not None:
            found.bar((rel, self.cut_at, ""))
        self.lines = None

    def _text(self, number: int, raw: bytes) -> str:
        if _OMITTED.fullmatch(raw):  # too long to print (or a line saying so): read it back, cut
            if self.cursor is None:
                self.cursor = LineCursor(self.start / self.rel, self.search.deadline)
            text = self.cursor.text(number)
            return raw.decode("utf-8", "replace") if text is None else text
        return clip(raw.decode("utf-8", "replace"))

    def binary(self, raw: bytes) -> None:
        """ripgrep stopped reading ``raw``: binary. Its matches are dropped."""
        rel = _rel(raw)
        if self.raw is not None and rel == self.rel:
            self.lines = None
        elif rel in self.taken:
            raise _Flood
        self.taken.add(rel)

    def close(self) -> None:
        if self.cursor is not None:
            self.cursor.close()
            self.cursor = None


# ------------------------------------------------------------------- Python's re in a killable process (off thread)
def _in_worker(root: Path, base: Path, prefix: str, pattern: str, glob: str | None, ignore_case: bool,
               max_results: int, budget: int, deadline: Deadline) -> Answer:
    """grep's answer searched by Python in a child process (:mod:`codeact.tools.regex_worker`), killed at
    ``deadline``."""
    reply = regex_worker.ask(root, f"{__name__}:worker_search", {
        "root": str(root), "base": str(base), "prefix": prefix, "pattern": pattern, "glob": glob,
        "ignore_case": ignore_case, "max_results": max_results, "budget": budget}, deadline)
    return Answer([(p, n, t) for p, n, t in reply["hits"]], reply["total"], reply["exact"])


def _first_in_files_in_worker(start: Path, names: list[str], regex: re.Pattern[str], count: int, budget: int,
                              extra: int, deadline: Deadline) -> list[list[Any]]:
    """The first matches, ``[rel, line, text]``, of the files ``names`` (below ``start``, sorted), searched one by
    one by Python in a child process killed at ``deadline``: grep's re-run when far more lines match than can be
    returned."""
    reply = regex_worker.ask(start, f"{__name__}:worker_first_in_files", {
        "start": str(start), "names": names, "pattern": regex.pattern, "flags": regex.flags, "count": count,
        "budget": budget, "extra": extra}, deadline)
    hits: list[list[Any]] = reply["hits"]
    return hits


def worker_search(request: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
    """The regex worker's side of :func:`_in_worker`."""
    with confine.reads_below(Path(request["root"])):
        answer = search_answer(Path(request["root"]), Path(request["base"]), request["prefix"], request["pattern"],
                               request["glob"], request["ignore_case"], request["max_results"], request["budget"],
                               deadline, python=True)
    return {"hits": answer.hits, "total": answer.total, "exact": answer.exact}


def worker_first_in_files(request: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
    """The regex worker's side of :func:`_first_in_files_in_worker`."""
    extra = request["extra"]
    found = FirstItems(request["count"], request["budget"], lambda hit: len(hit[0]) + len(hit[2]) + extra)
    search = _Search(re.compile(request["pattern"], request["flags"]), Glob("**"), None, None, found, extra, deadline)
    with confine.reads_below(Path(request["start"])):
        search.first_in_files(Path(request["start"]), request["names"])
    hits, _ = search.found.result()
    return {"hits": hits}
