"""Search tools: glob and grep, confined to the workspace; ``.git`` and ignored folders are skipped."""
from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Iterator

from ..errors import ToolError
from .base import ToolContext

SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".codeact-cache"}


def _walk(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(dirpath, name)


def _match(rel: str, pattern: str) -> bool:
    if "/" not in pattern.replace("**/", ""):
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern.replace("**/", ""))
    return Path(rel).full_match(pattern) if hasattr(Path, "full_match") else _glob_regex(pattern).fullmatch(rel) is not None


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def glob(ctx: ToolContext, *, pattern: str, path: str = ".") -> list[str]:
    """Files matching ``pattern`` (e.g. ``**/*.py``) under ``path``, workspace-relative and sorted."""
    base = ctx.workspace.resolve(path, must_exist=True)
    found = []
    for file in _walk(base):
        rel_to_base = file.relative_to(base).as_posix()
        if _match(rel_to_base, pattern):
            found.append(ctx.workspace.display(file))
    return sorted(found)


def grep(ctx: ToolContext, *, pattern: str, path: str = ".", glob: str | None = None, ignore_case: bool = False,
         max_results: int = 1000) -> list[dict]:
    """Lines matching the regular expression ``pattern``: ``[{"path", "line", "text"}]``, sorted by path and line.

    ``glob`` limits the files searched (e.g. ``*.py``); ``max_results`` caps the matches returned.
    """
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    base = ctx.workspace.resolve(path, must_exist=True)
    files = [base] if base.is_file() else _walk(base)
    results: list[dict] = []
    for file in files:
        rel = ctx.workspace.display(file)
        if glob and not _match(file.relative_to(base).as_posix() if base.is_dir() else file.name, glob):
            continue
        try:
            with open(file, encoding="utf-8", errors="strict") as handle:
                for number, line in enumerate(handle, 1):
                    if regex.search(line):
                        results.append({"path": rel, "line": number, "text": line.rstrip("\r\n")})
                        if len(results) >= max_results:
                            return results
        except (UnicodeDecodeError, OSError):
            continue  # binary or unreadable files are skipped, as ripgrep does
    return results
