"""File tools: view, create, edit. Writes are atomic and keep the file's mode."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import ToolError
from .base import ToolContext


def view(ctx: ToolContext, *, path: str, view_range: list[int] | None = None) -> str:
    """Return a file's text exactly as stored, or a folder's listing.

    ``view_range=[first, last]`` (1-based, inclusive; ``last=-1`` means the end) returns only those lines; lines
    end at ``\\n``, so the numbers agree with grep's. A folder gives its entries one per line, sub-folders with a
    trailing ``/`` and symbolic links with a trailing ``@``. A binary file (one holding a NUL byte) is refused.
    """
    real = ctx.workspace.resolve(path, must_exist=True)
    if real.is_dir():
        with os.scandir(real) as it:
            entries = sorted(it, key=lambda e: e.name)
        return "\n".join(e.name + ("@" if e.is_symlink() else "/" if e.is_dir() else "")
                         for e in entries if e.name != ".git")
    data = real.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", "replace")
    elif b"\0" in data:
        raise ToolError(f"{ctx.workspace.display(real)} is a binary file ({len(data)} bytes); view shows text "
                        "files only (bash, if enabled, can inspect it: e.g. file, xxd | head)")
    else:
        text = data.decode("utf-8", "replace")
    if view_range is None:
        return text
    if (not isinstance(view_range, (list, tuple)) or len(view_range) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)):
        raise ToolError("view_range must be [first, last], two line numbers (1-based; last=-1 for the end)")
    first, last = view_range
    lines = text.split("\n")
    ends = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    if first < 1 or (last != -1 and last < first):
        raise ToolError(f"view_range {list(view_range)} is invalid; lines are 1-based and first <= last")
    if first > len(ends) and ends:
        raise ToolError(f"view_range starts at line {first}, but {ctx.workspace.display(real)} has {len(ends)} lines")
    return "".join(ends[first - 1: None if last == -1 else last])


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
    """Replace ``old_str`` with ``new_str`` in a file; ``old_str`` must occur exactly once.

    Line endings are kept: in a file with Windows line endings, ``\\n`` in both strings stands for ``\\r\\n``.
    """
    real = ctx.workspace.resolve_for_write(path)
    if not real.is_file():
        raise FileNotFoundError(f"no such file: {ctx.workspace.display(real)}")
    where = ctx.workspace.display(real)
    try:
        text = real.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{where} is not UTF-8 text; edit changes text files only") from None
    count = text.count(old_str) if old_str else 0
    if count == 0 and old_str and "\r\n" in text and "\n" in old_str and "\r\n" not in old_str:
        old_str, new_str = old_str.replace("\n", "\r\n"), new_str.replace("\n", "\r\n")
        count = text.count(old_str)
    if count != 1:
        raise ToolError(f"old_str occurs {count} times in {where}; it must match exactly once "
                        "(include more surrounding lines to make it unique)" if count else
                        f"old_str was not found in {where}; view the file and copy the text exactly, "
                        "whitespace included")
    updated = text.replace(old_str, new_str, 1)
    ctx.workspace.check_secrets(new_str, real)
    write_atomic(real, updated)
    return f"edited {where}"


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
