"""Search tools: glob and grep, confined to the workspace.

Both use ripgrep when it is available (``rg`` next to this Python, as the ``ripgrep`` wheel installs it, else on
``PATH``) and a pure-Python walk otherwise; the two give the same answers. The rules, shared by both:

- only the workspace is reached; symbolic links met while walking are never followed (nor listed);
- hidden files are included, but ``.git`` and the folders in ``SKIP_DIRS`` are skipped;
- ``.gitignore``, ``.ignore`` and ``.rgignore`` files are honoured as ripgrep honours them, in a git repository or
  not (``--no-require-git``), together with ``.git/info/exclude``; a user's global git excludes are not read,
  so an answer does not depend on the machine;
- a ``path`` named explicitly is searched even if it is ignored itself (its contents are still filtered);
- files holding a NUL byte are binary and skipped; text is read as UTF-8 (a UTF-8 or UTF-16 BOM is honoured);
- lines end at ``\\n`` only; results are sorted by path (folder by folder) and line, paths workspace-relative.

Globs follow .gitignore/ripgrep syntax: ``*`` and ``?`` stay within one path segment, ``**`` crosses folders,
``[abc]``, ``[!a-z]`` and ``{py,md}`` work. A glob without ``/`` matches a file's name at any depth
(``*.py`` finds every Python file); a glob with ``/`` is matched against the path below ``path``
(``src/*.py``, ``**/tests/*.py``). Regular expressions are Python's ``re``; ripgrep runs them when it reads them
the same way, and the Python search runs the rest (look-arounds, back-references).
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, Iterator

from ..errors import ToolError
from .base import ToolContext

SKIP_DIRS = (".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".codeact-cache")
IGNORE_KINDS = (".rgignore", ".ignore", ".gitignore")  # highest precedence first, as ripgrep reads them
MAX_LINE_CHARS = 2000  # a matched line longer than this is cut, visibly
_BINARY_SNIFF = 8192

_Rules = list  # list[tuple[re.Pattern[str], bool, bool]]: (regex, negated, dir_only), file order


# --------------------------------------------------------------------------------------------------------- globs
def translate_glob(pattern: str) -> str:
    """A regular expression (for ``fullmatch``) equivalent to a ripgrep/.gitignore glob; ValueError if malformed."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole_segment = j - i == 2 and (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if whole_segment and j == n:
                out.append(".*")
            elif whole_segment:
                out.append("(?:.*/)?")
                j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            i = _translate_class(pattern, i, out)
        elif c == "{":
            depth, j, parts, start = 0, i, [], i + 1
            while j < n:
                if pattern[j] == "\\":
                    j += 2
                    continue
                if pattern[j] == "{":
                    depth += 1
                elif pattern[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif pattern[j] == "," and depth == 1:
                    parts.append(pattern[start:j])
                    start = j + 1
                j += 1
            if j >= n:
                raise ValueError("unclosed alternate group '{'")
            parts.append(pattern[start:j])
            out.append("(?:" + "|".join(translate_glob(p) for p in parts) + ")")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _translate_class(pattern: str, i: int, out: list[str]) -> int:
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    body: list[str] = []
    first = True
    while j < len(pattern) and (pattern[j] != "]" or first):
        ch = pattern[j]
        if ch == "\\" and j + 1 < len(pattern):
            body.append(re.escape(pattern[j + 1]))
            j += 2
        else:
            body.append("-" if ch == "-" and not first and j + 1 < len(pattern) and pattern[j + 1] != "]"
                        else re.escape(ch))
            j += 1
        first = False
    if j >= len(pattern):
        raise ValueError("unclosed character class '['")
    out.append("[" + ("^/" if negate else "") + "".join(body) + "]")
    return j + 1


_GLOB_META = frozenset("*?[{\\")


class _Glob:
    """A user's glob, planned for a fast search.

    ``dirs``: leading literal folders of an anchored pattern (``src/app`` of ``src/app/**/*.py``): the search starts
    there instead of walking everything. What remains is one of ``kind``:
    ``all`` (every file), ``name`` (a file-name pattern at any depth), ``top`` (a file-name pattern, direct children
    only) or ``path`` (a pattern over the path below the start folder, checked in Python).
    """

    def __init__(self, pattern: str) -> None:
        raw = pattern.strip() if isinstance(pattern, str) else ""
        if not raw:
            raise ToolError("glob pattern is empty; e.g. '*.py' or 'src/**/*.ts'")
        while raw.startswith("./"):
            raw = raw[2:]
        if raw.endswith("/"):
            raw += "**"  # "src/" means everything under src
        anchored = raw.startswith("/")
        raw = raw.lstrip("/")
        body = raw
        while body.startswith("**/"):
            body = body[3:]
        self.dirs: list[str] = []
        if not anchored and "/" not in body and body != "**":
            self.kind, rest = ("all" if body == "*" else "name"), body
        else:
            segments = raw.split("/")
            if not any(seg in ("", ".", "..") for seg in segments):
                for seg in segments[:-1]:
                    if _GLOB_META.intersection(seg):
                        break
                    self.dirs.append(seg)
            rest = "/".join(segments[len(self.dirs):])
            tail = rest
            while tail.startswith("**/"):
                tail = tail[3:]
            if rest == "**" or tail == "**":
                self.kind = "all"
            elif "/" not in rest:
                self.kind = "top"
            elif "/" not in tail:
                self.kind, rest = "name", tail
            else:
                self.kind = "path"
        self.rest = rest
        try:
            self.regex = re.compile(translate_glob(rest), re.S) if self.kind != "all" else None
        except (ValueError, re.error) as exc:
            raise ToolError(f"invalid glob {pattern!r}: {exc}") from None

    @property
    def rg_type(self) -> str | None:
        """The file-name glob ripgrep can filter by (as a file type, which respects .gitignore), if any."""
        return self.rest if self.kind in ("name", "top") else None

    def matches(self, rel: str) -> bool:
        """``rel``: a file's path below the start folder (``base`` plus ``dirs``), ``/``-separated."""
        if self.kind == "all":
            return True
        if self.kind == "name":
            return self.regex.fullmatch(rel.rpartition("/")[2]) is not None  # type: ignore[union-attr]
        if self.kind == "top" and "/" in rel:
            return False
        return self.regex.fullmatch(rel) is not None  # type: ignore[union-attr]

    def start(self, root: Path, base: Path) -> Path | None:
        """The folder to search: ``base`` plus the literal ``dirs``, or ``None`` if a walk could never reach it
        (missing, a link, a skipped or ignored folder)."""
        if not self.dirs:
            return base
        chain = _chain(root, base, include_base=True)
        folder = base
        for name in self.dirs:
            if name in SKIP_DIRS:
                return None
            folder = folder / name
            try:
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    return None
            except OSError:
                return None
            rel = folder.relative_to(root).as_posix()
            if chain and _ignored(chain, rel, True):
                return None
            level = _read_level(folder, rel + "/")
            if level:
                chain.append(level)
        return folder


# ------------------------------------------------------------------------------------------------- ignore files
def parse_ignore(text: str) -> _Rules:
    """The rules of one .gitignore-style file."""
    rules: _Rules = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if not line.endswith("\\ "):
            line = line.rstrip()
        if not line:
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/")
        if dir_only:
            line = line[:-1]
        anchored = "/" in line
        line = line.lstrip("/") if line.startswith("/") else line
        if not line:
            continue
        if not anchored and not line.startswith("**/"):
            line = "**/" + line
        try:
            rules.append((re.compile(translate_glob(line), re.S), negated, dir_only))
        except (ValueError, re.error):
            continue  # ripgrep skips a malformed line too
    return rules


class _Level:
    """The ignore rules read in one folder: ``prefix`` is its workspace-relative path plus ``/`` ("" at the root)."""

    __slots__ = ("prefix", "rules", "has_git")

    def __init__(self, prefix: str, rules: dict[str, _Rules], has_git: bool) -> None:
        self.prefix, self.rules, self.has_git = prefix, rules, has_git


def _read_level(folder: Path, prefix: str, names: set[str] | None = None) -> _Level | None:
    if names is None:
        try:
            names = set(os.listdir(folder))
        except OSError:
            return None
    rules: dict[str, _Rules] = {}
    for kind in IGNORE_KINDS:
        if kind in names:
            try:
                found = parse_ignore((folder / kind).read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            if found:
                rules[kind] = found
    has_git = ".git" in names
    if has_git and (folder / ".git").is_dir():
        exclude = folder / ".git" / "info" / "exclude"
        if exclude.is_file():
            try:
                found = parse_ignore(exclude.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                found = []
            if found:
                rules["exclude"] = found
    if not rules and not has_git:
        return None
    return _Level(prefix, rules, has_git)


def _ignored(chain: list[_Level], rel: str, is_dir: bool) -> bool:
    """Whether the workspace-relative ``rel`` is ignored: ripgrep's precedence (kind first, deepest folder next)."""
    for kind in (*IGNORE_KINDS, "exclude"):
        git_kind = kind in (".gitignore", "exclude")
        for level in reversed(chain):
            rules = level.rules.get(kind)
            if rules:
                sub = rel[len(level.prefix):]
                for regex, negated, dir_only in reversed(rules):
                    if dir_only and not is_dir:
                        continue
                    if regex.fullmatch(sub):
                        return not negated
            if git_kind and level.has_git:
                break  # .gitignore files above a repository's root do not apply inside it
    return False


def _chain(root: Path, base: Path, *, include_base: bool) -> list[_Level]:
    """The ignore levels from the workspace root down to ``base`` (its own level only with ``include_base``)."""
    chain: list[_Level] = []
    parts = [] if base == root else list(base.relative_to(root).parts)
    folder, prefix = root, ""
    for part in parts + ([None] if include_base else []):  # type: ignore[list-item]
        level = _read_level(folder, prefix)
        if level:
            chain.append(level)
        if part is None:
            break
        folder, prefix = folder / part, prefix + part + "/"
    return chain


def _walk(root: Path, base: Path, max_depth: int | None = None) -> Iterator[str]:
    """Files below the folder ``base`` as ``/``-paths relative to it, after the ignore rules; links not followed."""
    base_rel = "" if base == root else base.relative_to(root).as_posix() + "/"
    stack: list[tuple[Path, str, list[_Level], int]] = [(base, "", _chain(root, base, include_base=False), 1)]
    while stack:
        folder, rel_dir, chain, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        level = _read_level(folder, base_rel + rel_dir, {e.name for e in entries})
        if level:
            chain = [*chain, level]
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    is_dir = True
                elif entry.is_file(follow_symlinks=False):
                    is_dir = False
                else:
                    continue  # symbolic links, sockets, devices
            except OSError:
                continue
            if is_dir and (entry.name in SKIP_DIRS or (max_depth is not None and depth >= max_depth)):
                continue
            rel = rel_dir + entry.name
            if chain and _ignored(chain, base_rel + rel, is_dir):
                continue
            if is_dir:
                stack.append((Path(entry.path), rel + "/", chain, depth + 1))
            else:
                yield rel


def _sort_key(path: str) -> str:
    return path.replace("/", "\0")  # folder by folder: "a/b.py" before "a.py", as ripgrep's --sort path


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


def _rg_command(rg: str, glob: _Glob | None) -> list[str]:
    cmd = [rg, "--no-config", "--hidden", "--no-require-git", "--no-ignore-global", "--no-messages"]
    cmd += ["--glob", "!{" + ",".join(SKIP_DIRS) + "}/"]  # one glob: each extra glob costs on every entry
    if glob is not None and glob.rg_type is not None:
        # a file type, not --glob: ripgrep lets --glob override .gitignore, while types respect it
        cmd += ["--type-clear", "codeact", "--type-add", f"codeact:{glob.rg_type}", "--type", "codeact"]
    if glob is not None and glob.kind == "top":
        cmd += ["--max-depth", "1"]
    if glob is not None and glob.kind == "path":
        # an override narrows the output, but it also beats .gitignore: _Reach drops what it let through
        cmd += ["--glob", glob.rest]
    return cmd


class _Reach:
    """Whether a walk from ``start`` would reach a file: not ignored, not in an ignored or skipped folder.

    Needed after ripgrep ran with an override glob (which beats .gitignore); cached per folder."""

    def __init__(self, root: Path, start: Path) -> None:
        self.start = start
        self.base_rel = "" if start == root else start.relative_to(root).as_posix() + "/"
        self.chains: dict[str, list[_Level] | None] = {"": _chain(root, start, include_base=True)}

    def _chain_of(self, rel_dir: str) -> list[_Level] | None:  # None: the folder is not reachable
        if rel_dir not in self.chains:
            parent, _, name = rel_dir.rpartition("/")
            above = self._chain_of(parent)
            if above is None or name in SKIP_DIRS or _ignored(above, self.base_rel + rel_dir, True):
                self.chains[rel_dir] = None
            else:
                level = _read_level(self.start / rel_dir, self.base_rel + rel_dir + "/")
                self.chains[rel_dir] = [*above, level] if level else above
        return self.chains[rel_dir]

    def ok(self, rel: str) -> bool:
        chain = self._chain_of(rel.rpartition("/")[0])
        return chain is not None and not _ignored(chain, self.base_rel + rel, False)


def _rg_files(rg: str, start: Path, glob: _Glob) -> list[str] | None:
    import subprocess

    # no path argument: ripgrep lists the current folder without a "./" prefix (--files never reads stdin)
    try:
        done = subprocess.run([*_rg_command(rg, glob), "--files", "--null"], cwd=start, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return None
    if done.returncode == 2 and not done.stdout:
        return None
    files = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    files.pop()  # after the last NUL
    return files


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
    plan = _Glob(pattern)
    start = plan.start(ctx.workspace.root, base)
    if start is None:
        return []
    rg = rg_binary()
    files = _rg_files(rg, start, plan) if rg else None
    if files is None:
        files = [rel for rel in _walk(ctx.workspace.root, start, 1 if plan.kind == "top" else None)
                 if plan.matches(rel)]
    elif plan.kind == "path":
        reach = _Reach(ctx.workspace.root, start)
        files = [rel for rel in files if plan.matches(rel) and reach.ok(rel)]
    files.sort(key=_sort_key)
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
    plan = _Glob(glob if glob is not None else "**")
    if base.is_file():  # one file named explicitly: searched even if ignored; its name must match the glob
        if glob is not None and not _Glob(glob).matches(base.name):
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
    if rg and _rg_can_run(pattern):
        reach = _Reach(ctx.workspace.root, start) if plan.kind == "path" else None
        found = _rg_grep(rg, start, pattern, ignore_case, plan, max_results, reach)
    if found is None:
        found = []
        for rel in _walk(ctx.workspace.root, start, 1 if plan.kind == "top" else None):
            if not plan.matches(rel):
                continue
            for number, text in _search_file(start / rel, regex, max_results) or ():
                found.append((rel, number, text))
    found.sort(key=lambda r: (_sort_key(r[0]), r[1]))
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


def _rg_grep(rg: str, base: Path, pattern: str, ignore_case: bool, matcher: _Glob,
             max_results: int, reach: _Reach | None) -> list[tuple[str, int, str]] | None:
    """Matches found by ripgrep, or ``None`` when the Python search must answer.

    ripgrep searches in parallel, in no fixed order. When far more lines match than can be returned, that run is
    stopped and a second one sorted by path stops after the first ``max_results``, so the answer is the same.
    """
    # no --max-count: ripgrep would stop reading a file early and miss a NUL byte that makes it binary
    cmd = [*_rg_command(rg, matcher), "--json"]
    if ignore_case:
        cmd.append("--ignore-case")
    cmd += ["--regexp", pattern, "."]
    found = _rg_collect(cmd, base, matcher, reach, flood=max(FLOOD_FACTOR * max_results, FLOOD_MIN))
    if found is _FLOOD:
        found = _rg_first(cmd[:1] + ["--sort", "path", "--threads", "1"] + cmd[1:], base, matcher, reach,
                          stop_after=max_results)
    return found  # type: ignore[return-value]


def _spawn(cmd: list[str], cwd: Path) -> object:
    import subprocess
    try:
        return subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None


def _rg_collect(cmd: list[str], base: Path, matcher: _Glob, reach: _Reach | None, *, flood: int) -> object:
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
    binary = {_rel(m["data"]["path"]) for m in messages if m["type"] == "end"}
    found = []
    for message in messages:
        if message["type"] == "match":
            hit = _hit(message["data"], matcher, reach)
            if hit is not None and hit[0] not in binary:
                found.append(hit)
    return found


def _rg_first(cmd: list[str], base: Path, matcher: _Glob, reach: _Reach | None, *, stop_after: int) -> object:
    """Matches of a run sorted by path, read as they come, stopping once ``stop_after`` are certain."""
    import json

    proc: Any = _spawn(cmd, base)
    if proc is None:
        return None
    found: list[tuple[str, int, str]] = []
    pending: list[tuple[str, int, str]] = []
    with proc:
        for raw in proc.stdout:
            if raw.startswith(_MATCH):
                if len(found) + len(pending) >= stop_after:
                    continue  # enough from this file; read on only to learn whether it is binary
                hit = _hit(json.loads(raw)["data"], matcher, reach)
                if hit is not None:
                    pending.append(hit)
            elif raw.startswith(_END):  # a file is done (files come one by one): keep its matches unless binary
                if json.loads(raw)["data"].get("binary_offset") is None:
                    found.extend(pending)
                pending = []
                if len(found) >= stop_after:
                    proc.kill()
                    break
        proc.stdout.close()
        proc.wait()
    return found


def _rel(where: dict) -> str:
    import base64
    rel = where["text"] if "text" in where else os.fsdecode(base64.b64decode(where["bytes"]))
    return rel[2:] if rel.startswith("./") else rel


def _hit(data: dict, matcher: _Glob, reach: _Reach | None) -> tuple[str, int, str] | None:
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
