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
- lines end at ``\\n`` only; results are sorted as ``sorted()`` sorts the paths, then by line, paths workspace-relative.

Globs follow .gitignore/ripgrep syntax: ``*`` and ``?`` stay within one path segment, ``**`` crosses folders,
``[abc]``, ``[!a-z]`` and ``{py,md}`` work. A glob without ``/`` matches a file's name at any depth
(``*.py`` finds every Python file); a glob with ``/`` is matched against the path below ``path``
(``src/*.py``, ``**/tests/*.py``). Regular expressions are Python's ``re``; ripgrep runs them when it reads them
the same way, and the Python search runs the rest (look-arounds, back-references).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Sequence

from ..errors import ToolError
from .base import ToolContext
from .walk import SKIP_DIRS, SKIP_IGNORE_FILE, Glob, Reach, walk

MAX_LINE_CHARS = 2000  # a matched line longer than this is cut, visibly
SKIP_DIRS_SET = frozenset(SKIP_DIRS)

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


def _rg_command(rg: str, glob: Glob | None, parents: Sequence[str] = ()) -> list[str]:
    cmd = [rg, "--no-config", "--hidden", "--no-ignore-global", "--no-messages", *parents]
    cmd += ["--ignore-file", str(SKIP_IGNORE_FILE)]  # SKIP_DIRS; re-included ones are dropped by _unskipped
    if glob is not None and glob.rg_type is not None:
        # a file type, not --glob: ripgrep lets --glob override .gitignore, while types respect it
        cmd += ["--type-clear", "codeact", "--type-add", f"codeact:{glob.rg_type}", "--type", "codeact"]
    if glob is not None and glob.kind == "top":
        cmd += ["--max-depth", "1"]
    if glob is not None and glob.kind == "path":
        # an override narrows the output, but it also beats .gitignore: Reach drops what it let through
        cmd += ["--glob", glob.rest]
    return cmd


def _rg_files(rg: str, start: Path, glob: Glob, parents: Sequence[str]) -> list[str] | None:
    import subprocess

    # no path argument: ripgrep lists the current folder without a "./" prefix (--files never reads stdin)
    try:
        # listing is syscall-bound: more walker threads than ripgrep's default (one per CPU) overlap the waits
        threads = str(min(12, max(4, os.cpu_count() or 1)))
        done = subprocess.run([*_rg_command(rg, glob, parents), "--files", "--null", "--threads", threads], cwd=start,
                              stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return None
    if done.returncode == 2 and not done.stdout:
        return None
    files = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    files.pop()  # after the last NUL
    return _unskipped(files, done.stdout)


# What in ripgrep's raw output may show a path to drop: a SKIP_DIRS folder, a `.git` file (a worktree's or a
# submodule's), or a name ripgrep could only give as base64 (not UTF-8).
_SKIPPED_MARKS = (*(name.encode() + b"/" for name in SKIP_DIRS), b".git\0", b'.git"', b'"path":{"bytes"')


def _unskipped(paths: list[str], raw: bytes) -> list[str]:
    """``paths`` without those inside a SKIP_DIRS folder (an ignore file's ``!`` rule can make ripgrep list them)
    and without ``.git`` files, as the Python walk. One scan of ripgrep's raw output first: usually no path is
    looked at."""
    if not any(mark in raw for mark in _SKIPPED_MARKS):
        return paths
    return [p for p in paths if SKIP_DIRS_SET.isdisjoint(p.split("/")[:-1]) and p.rpartition("/")[2] != ".git"]


# --------------------------------------------------------------------------------------------------------- tools
def _base(ctx: ToolContext, path: str) -> tuple[Path, str]:
    base = ctx.workspace.resolve(path, must_exist=True)
    shown = ctx.workspace.display(base)
    return base, "" if shown == "." else shown + "/"


def glob(ctx: ToolContext, *, pattern: str, path: str = ".") -> list[str]:
    """Files matching ``pattern`` under ``path``, workspace-relative and sorted.

    ``*.py`` matches names at any depth; a pattern with ``/`` (``src/*.py``, ``**/tests/*.py``) matches the path
    below ``path``. ``.git``, ignored files (.gitignore) and symbolic links are left out; hidden files are listed.
    """
    base, prefix = _base(ctx, path)
    if not base.is_dir():
        raise NotADirectoryError(f"{prefix.rstrip('/')} is a file, not a folder; glob searches folders")
    plan = Glob(pattern)
    start = plan.start(ctx.workspace.root, base)
    if start is None:
        return []
    rg = rg_binary()
    parents = _rg_parents(ctx.workspace.root, start) if rg else None
    files = _rg_files(rg, start, plan, parents) if rg and parents is not None else None
    if files is None:
        files = [rel for rel in walk(ctx.workspace.root, start, 1 if plan.kind == "top" else None)
                 if plan.matches(rel)]
    elif plan.kind == "path":
        reach = Reach(ctx.workspace.root, start)
        files = [rel for rel in files if plan.matches(rel) and reach.ok(rel)]
    files.sort()  # plain string order: a key function would double the cost on a large tree
    lead = prefix + "".join(d + "/" for d in plan.dirs)
    return [lead + rel for rel in files] if lead else files


def grep(ctx: ToolContext, *, pattern: str, path: str = ".", glob: str | None = None, ignore_case: bool = False,
         max_results: int = 1000) -> list[dict]:
    """Lines matching the regular expression ``pattern``: ``[{"path", "line", "text"}]``, sorted by path and line.

    ``pattern`` is a Python regular expression matched within one line. ``glob`` limits the files searched
    (``*.py``; ``src/**/*.ts``); ``max_results`` caps the matches returned (the first ones in path order).
    ``.git``, ignored files (.gitignore), binary files and symbolic links are skipped; hidden files are searched.
    """
    flags = re.IGNORECASE if ignore_case else 0
    try:
        regex = re.compile(pattern, flags)
    except (re.error, TypeError) as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise ToolError(f"max_results must be a positive integer, got {max_results!r}")
    base, prefix = _base(ctx, path)
    plan = Glob(glob if glob is not None else "**")
    if base.is_file():  # one file named explicitly: searched even if ignored; its name must match the glob
        if glob is not None and not Glob(glob).matches(base.name):
            return []
        lines = _search_file(base, regex, max_results)
        if lines is None:
            raise ToolError(f"{prefix.rstrip('/')} is a binary file; grep searches text files")
        return [{"path": prefix.rstrip("/"), "line": n, "text": t} for n, t in lines]
    start = plan.start(ctx.workspace.root, base)
    if start is None:
        return []
    rg = rg_binary()
    found = None
    parents = _rg_parents(ctx.workspace.root, start) if rg and _rg_can_run(pattern) else None
    if rg and parents is not None:
        reach = Reach(ctx.workspace.root, start) if plan.kind == "path" else None
        found = _rg_grep(rg, start, regex, ignore_case, plan, max_results, reach, parents)
    if found is None:
        found = []
        for rel in walk(ctx.workspace.root, start, 1 if plan.kind == "top" else None):
            if not plan.matches(rel):
                continue
            for number, text in _search_file(start / rel, regex, max_results) or ():
                found.append((rel, number, text))
    found.sort()
    lead = prefix + "".join(d + "/" for d in plan.dirs)
    return [{"path": lead + rel, "line": n, "text": t} for rel, n, t in found[:max_results]]


def _rg_can_run(pattern: str) -> bool:
    """Whether ripgrep reads ``pattern`` as Python does (it refuses look-arounds and back-references itself)."""
    return "[[:" not in pattern and "\\p" not in pattern and "\\P" not in pattern


def _clip(text: str) -> str:
    if text.endswith("\r"):
        text = text[:-1]
    if len(text) > MAX_LINE_CHARS:
        return f"{text[:MAX_LINE_CHARS]} ... [line cut: {len(text) - MAX_LINE_CHARS} more characters]"
    return text


def _decode_text(data: bytes) -> str | None:
    """A file's bytes as text as ripgrep reads it, or ``None`` if it is binary."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def _search_file(file: Path, regex: re.Pattern[str], max_count: int) -> list[tuple[int, str]] | None:
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    text = _decode_text(data)
    if text is None:
        return None
    if not text:
        return []
    out: list[tuple[int, str]] = []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        if regex.search(line):
            out.append((number, _clip(line)))
            if len(out) >= max_count:
                break
    return out


_FLOOD = object()
FLOOD_FACTOR, FLOOD_MIN = 20, 30_000  # beyond max(FLOOD_FACTOR * max_results, FLOOD_MIN) matches: sorted re-run
_MATCH, _END = b'{"type":"match"', b'{"type":"end"'


def _rg_grep(rg: str, base: Path, regex: re.Pattern[str], ignore_case: bool, matcher: Glob,
             max_results: int, reach: Reach | None, parents: Sequence[str]) -> list[tuple[str, int, str]] | None:
    """Matches found by ripgrep, or ``None`` when the Python search must answer.

    ripgrep searches in parallel, in no fixed order. When far more lines match than can be returned, that run is
    stopped and ``_first_matches`` finds the first ``max_results`` in path order, so the answer is the same.
    """
    # no --max-count: ripgrep would stop reading a file early and miss a NUL byte that makes it binary
    cmd = _rg_command(rg, matcher, parents)
    if ignore_case:
        cmd.append("--ignore-case")
    query = ["--regexp", regex.pattern, "."]
    found = _rg_collect([*cmd, "--json", *query], base, matcher, reach,
                        flood=max(FLOOD_FACTOR * max_results, FLOOD_MIN))
    if found is _FLOOD:
        found = _first_matches([*cmd, "--files-with-matches", "--null", *query], base, matcher, reach, regex,
                               max_results)
    return found  # type: ignore[return-value]


def _spawn(cmd: list[str], cwd: Path) -> object:
    import subprocess
    try:
        return subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None


def _rg_collect(cmd: list[str], base: Path, matcher: Glob, reach: Reach | None, *, flood: int) -> object:
    """Every match of a parallel run, parsed in one go; ``_FLOOD`` once more than ``flood`` lines matched."""
    import json

    proc: Any = _spawn(cmd, base)
    if proc is None:
        return None
    chunks: list[bytes] = []
    count = 0
    with proc:
        while True:
            chunk = proc.stdout.read(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            count += chunk.count(_MATCH)
            if count > flood:
                proc.kill()
                proc.wait()
                return _FLOOD
        code = proc.wait()
    output = b"".join(chunks)
    if code == 2 and not output:
        return None  # ripgrep could not run this (e.g. a regex it reads differently): the Python path answers
    wanted = [line for line in output.split(b"\n")
              if line.startswith(_MATCH) or (line.startswith(_END) and b'"binary_offset":null' not in line)]
    messages = json.loads(b"[" + b",".join(wanted) + b"]")
    keep = None if not any(mark in output for mark in _SKIPPED_MARKS) else \
        set(_unskipped([_rel(m["data"]["path"]) for m in messages], output))
    binary = {_rel(m["data"]["path"]) for m in messages if m["type"] == "end"}
    found = []
    for message in messages:
        if message["type"] == "match":
            hit = _hit(message["data"], matcher, reach)
            if hit is not None and hit[0] not in binary and (keep is None or hit[0] in keep):
                found.append(hit)
    return found


def _first_matches(cmd: list[str], base: Path, matcher: Glob, reach: Reach | None, regex: re.Pattern[str],
                   max_results: int) -> list[tuple[str, int, str]] | None:
    """The first ``max_results`` matches in path order: the files that match (ripgrep, in parallel), sorted,
    then searched one by one until enough are found."""
    import subprocess
    try:
        done = subprocess.run(cmd, cwd=base, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return None
    if done.returncode == 2 and not done.stdout:
        return None  # ripgrep could not run this: the Python search answers
    listed = _unskipped([rel[2:] if rel.startswith("./") else rel
                         for rel in done.stdout.decode("utf-8", "surrogateescape").split("\0") if rel], done.stdout)
    found: list[tuple[str, int, str]] = []
    for rel in sorted(rel for rel in listed if matcher.matches(rel) and (reach is None or reach.ok(rel))):
        for number, text in _search_file(base / rel, regex, max_results - len(found)) or ():
            found.append((rel, number, text))
        if len(found) >= max_results:
            break
    return found


def _rel(where: dict) -> str:
    import base64
    rel = where["text"] if "text" in where else os.fsdecode(base64.b64decode(where["bytes"]))
    return rel[2:] if rel.startswith("./") else rel


def _hit(data: dict, matcher: Glob, reach: Reach | None) -> tuple[str, int, str] | None:
    rel = _rel(data["path"])
    if not matcher.matches(rel) or (reach is not None and not reach.ok(rel)):
        return None
    lines = data["lines"]
    if "text" in lines:
        text = lines["text"]
    else:
        import base64
        text = base64.b64decode(lines["bytes"]).decode("utf-8", "replace")
    if text.endswith("\n"):
        text = text[:-1]
    return rel, data["line_number"], _clip(text)
