"""File tools: view, create, edit. Writes are atomic and keep the file's mode."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import ToolError
from .base import ToolContext


def view(ctx: ToolContext, *, path: str, view_range: list[int] | None = None) -> str:
    """Return a file's text exactly as stored, or a folder's listing.

    ``view_range=[first, last]`` (1-based, inclusive; ``last=-1`` means the end) returns only those lines.
    A folder gives its entries one per line, sub-folders with a trailing ``/``.
    """
    real = ctx.workspace.resolve(path, must_exist=True)
    if real.is_dir():
        entries = sorted(real.iterdir(), key=lambda p: p.name)
        return "\n".join(p.name + ("/" if p.is_dir() else "") for p in entries if p.name != ".git")
    text = real.read_text(encoding="utf-8", errors="replace")
    if view_range is None:
        return text
    if len(view_range) != 2 or not all(isinstance(n, int) for n in view_range):
        raise ToolError("view_range must be [first, last], two line numbers (1-based; last=-1 for the end)")
    first, last = view_range
    lines = text.splitlines(keepends=True)
    if first < 1 or (last != -1 and last < first):
        raise ToolError(f"view_range {view_range} is invalid; lines are 1-based and first <= last")
    return "".join(lines[first - 1: None if last == -1 else last])


def create(ctx: ToolContext, *, path: str, file_text: str) -> str:
    """Create a new file with ``file_text`` (parent folders too); refuses to overwrite an existing file."""
    real = ctx.workspace.resolve_for_write(path)
    if real.exists():
        raise FileExistsError(f"{ctx.workspace.display(real)} already exists; use edit() to change it")
    ctx.workspace.check_secrets(file_text, real)
    real.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(real, file_text)
    return f"created {ctx.workspace.display(real)}"


def edit(ctx: ToolContext, *, path: str, old_str: str, new_str: str) -> str:
    """Replace ``old_str`` with ``new_str`` in a file; ``old_str`` must occur exactly once."""
    real = ctx.workspace.resolve_for_write(path)
    if not real.is_file():
        raise FileNotFoundError(f"no such file: {ctx.workspace.display(real)}")
    text = real.read_text(encoding="utf-8")
    count = text.count(old_str) if old_str else 0
    if count != 1:
        where = ctx.workspace.display(real)
        raise ToolError(f"old_str occurs {count} times in {where}; it must match exactly once "
                        "(include more surrounding lines to make it unique)")
    updated = text.replace(old_str, new_str, 1)
    ctx.workspace.check_secrets(new_str, real)
    write_atomic(real, updated)
    return f"edited {ctx.workspace.display(real)}"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, keeping an existing file's mode."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".codeact-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
