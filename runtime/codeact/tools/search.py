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
from pathlib import Path
from typing import Iterator

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


class _Glob:
    """A user's glob: a name pattern (any depth) or a path pattern anchored at the searched folder."""

    def __init__(self, pattern: str) -> None:
        raw = pattern.strip()
        if not raw:
            raise ToolError("glob pattern is empty; e.g. '*.py' or 'src/**/*.ts'")
        while raw.startswith("./"):
            raw = raw[2:]
        if raw.endswith("/"):
            raw += "**"  # "src/" means everything under src
        body = raw.lstrip("/")
        while body.startswith("**/"):
            body = body[3:]
        self.name_only = "/" not in body and not raw.startswith("/") and body != "**"
        self.rg_glob = body if self.name_only else None  # handed to ripgrep as a file type
        try:
            if self.name_only:
                self.regex = re.compile(translate_glob(body), re.S)
            else:
                self.regex = re.compile(translate_glob(raw.lstrip("/")), re.S)
        except (ValueError, re.error) as exc:
            raise ToolError(f"invalid glob {pattern!r}: {exc}") from None

    def matches(self, rel: str) -> bool:
        """``rel``: a file's path below the searched folder, ``/``-separated."""
        if self.name_only:
            return self.regex.fullmatch(rel.rpartition("/")[2]) is not None
        return self.regex.fullmatch(rel) is not None


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


def _walk(root: Path, base: Path) -> Iterator[str]:
    """Files below the folder ``base`` as ``/``-paths relative to it, after the ignore rules; links not followed."""
    chain: list[_Level] = []
    base_rel = "" if base == root else base.relative_to(root).as_posix() + "/"
    probe, prefix = root, ""
    for part in ([] if not base_rel else base_rel.rstrip("/").split("/")):  # the folders above base
        level = _read_level(probe, prefix)
        if level:
            chain.append(level)
        probe, prefix = probe / part, prefix + part + "/"
    stack: list[tuple[Path, str, list[_Level]]] = [(base, "", chain)]
    while stack:
        folder, rel_dir, chain = stack.pop()
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
            if is_dir and entry.name in SKIP_DIRS:
                continue
            rel = rel_dir + entry.name
            if chain and _ignored(chain, base_rel + rel, is_dir):
                continue
            if is_dir:
                stack.append((Path(entry.path), rel + "/", chain))
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
    for name in SKIP_DIRS:
        cmd += ["--glob", f"!{name}/"]
    if glob is not None and glob.rg_glob is not None:
        # a file type, not --glob: ripgrep lets --glob override .gitignore, types respect it
        cmd += ["--type-clear", "codeact", "--type-add", f"codeact:{glob.rg_glob}", "--type", "codeact"]
    return cmd


def _run_rg(cmd: list[str], cwd: Path) -> tuple[int, bytes] | None:
    import subprocess
    try:
        done = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, check=False)
    except OSError:
        return None
    if done.returncode == 2 and not done.stdout:
        return None  # ripgrep could not run this (e.g. a regex it reads differently): the Python path answers
    return done.returncode, done.stdout


def _rg_files(rg: str, base: Path, glob: _Glob | None) -> list[str] | None:
    ran = _run_rg([*_rg_command(rg, glob), "--files", "--null", "."], base)
    if ran is None:
        return None
    out = []
    for item in ran[1].split(b"\0"):
        if item:
            out.append(os.fsdecode(item[2:] if item.startswith(b"./") else item))
    return out


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
    matcher = _Glob(pattern)
    rg = rg_binary()
    files = _rg_files(rg, base, matcher) if rg else None
    if files is None:
        files = list(_walk(ctx.workspace.root, base))
    found = [rel for rel in files if matcher.matches(rel)]
    found.sort(key=_sort_key)
    return [prefix + rel for rel in found]


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
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise ToolError(f"max_results must be a positive integer, got {max_results!r}")
    base, prefix = _base(ctx, path)
    matcher = _Glob(glob) if glob else None
    if base.is_file():  # one file named explicitly: searched even if ignored; its name must match the glob
        if matcher and not matcher.matches(base.name):
            return []
        lines = _search_file(base, regex, max_results)
        if lines is None:
            raise ToolError(f"{prefix.rstrip('/')} is a binary file; grep searches text files")
        return [{"path": prefix.rstrip("/"), "line": n, "text": t} for n, t in lines]
    rg = rg_binary()
    found = _rg_grep(rg, base, pattern, ignore_case, matcher, max_results) if rg and _rg_can_run(pattern) else None
    if found is None:
        found = []
        for rel in _walk(ctx.workspace.root, base):
            if matcher and not matcher.matches(rel):
                continue
            for number, text in _search_file(base / rel, regex, max_results) or ():
                found.append((rel, number, text))
    found.sort(key=lambda r: (_sort_key(r[0]), r[1]))
    return [{"path": prefix + rel, "line": n, "text": t} for rel, n, t in found[:max_results]]


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


def _rg_grep(rg: str, base: Path, pattern: str, ignore_case: bool, matcher: _Glob | None,
             max_results: int) -> list[tuple[str, int, str]] | None:
    """Matches found by ripgrep, or ``None`` when the Python search must answer.

    ripgrep searches in parallel, in no fixed order. When far more lines match than can be returned, that run is
    stopped and a second one sorted by path stops after the first ``max_results``, so the answer is the same.
    """
    cmd = [*_rg_command(rg, matcher), "--json", "--max-count", str(max_results)]
    if ignore_case:
        cmd.append("--ignore-case")
    cmd += ["--regexp", pattern, "."]
    found = _rg_json(cmd, base, matcher, stop_after=None, flood=max(10 * max_results, 10_000))
    if found is _FLOOD:
        found = _rg_json([cmd[0], "--sort", "path", "--threads", "1", *cmd[1:]], base, matcher,
                         stop_after=max_results, flood=None)
    return found  # type: ignore[return-value]


def _rg_json(cmd: list[str], base: Path, matcher: _Glob | None, *, stop_after: int | None,
             flood: int | None) -> object:
    import base64
    import json
    import subprocess

    try:
        proc = subprocess.Popen(cmd, cwd=base, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None
    found: list[tuple[str, int, str]] = []
    pending: dict[str, list[tuple[str, int, str]]] = {}
    count, seen_output, outcome = 0, False, None
    assert proc.stdout is not None
    with proc:
        for raw in proc.stdout:
            seen_output = True
            is_match = raw.startswith(b'{"type":"match"')
            if not is_match and not raw.startswith(b'{"type":"end"'):
                continue
            data = json.loads(raw)["data"]
            where = data["path"]
            rel = where["text"] if "text" in where else os.fsdecode(base64.b64decode(where["bytes"]))
            if rel.startswith("./"):
                rel = rel[2:]
            if not is_match:  # a file is done: keep its matches unless it turned out binary
                lines = pending.pop(rel, [])
                if data.get("binary_offset") is None:
                    found.extend(lines)
                if stop_after is not None and len(found) >= stop_after:
                    proc.kill()
                    break
                continue
            if matcher is not None and not matcher.matches(rel):
                continue
            lines = data["lines"]
            text = lines["text"] if "text" in lines else base64.b64decode(lines["bytes"]).decode("utf-8", "replace")
            if text.endswith("\n"):
                text = text[:-1]
            pending.setdefault(rel, []).append((rel, data["line_number"], _clip(text)))
            count += 1
            if flood is not None and count > flood:
                proc.kill()
                outcome = _FLOOD
                break
        proc.stdout.close()
        code = proc.wait()
    if outcome is _FLOOD:
        return _FLOOD
    if code == 2 and not seen_output:
        return None  # ripgrep could not run this (e.g. a regex it reads differently): the Python path answers
    return found
