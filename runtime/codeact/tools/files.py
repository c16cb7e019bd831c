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
    A file longer than the tool-result limit is cut, visibly; read the rest with ``view_range``.
    """
    real = ctx.workspace.resolve(path, must_exist=True)
    shown = ctx.workspace.display(real)
    if real.is_dir():
        with os.scandir(real) as it:
            entries = sorted(it, key=lambda e: e.name)
        return "\n".join(e.name + ("@" if e.is_symlink() else "/" if e.is_dir() else "")
                         for e in entries if e.name != ".git")
    if view_range is not None:
        if (not isinstance(view_range, (list, tuple)) or len(view_range) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)):
            raise ToolError("view_range must be [first, last], two line numbers (1-based; last=-1 for the end)")
        if view_range[0] < 1 or (view_range[1] != -1 and view_range[1] < view_range[0]):
            raise ToolError(f"view_range {list(view_range)} is invalid; lines are 1-based and first <= last")
    cap = int(ctx.limits.tool_result)
    keep = cap - min(256, cap // 4)  # room for the note, so the runner's own cut never applies on top
    with open(real, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(2)
        handle.seek(0)
        if head in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16: decode what fits, then cut lines from the text
            lines = _split_lines(handle.read(keep * 2).decode("utf-16", "replace"))
            return _pick(lines, view_range, shown, size > keep * 2)
        if view_range is None:
            data = handle.read(keep)
            if b"\0" in data:
                raise _binary(shown, size)
            text = data.decode("utf-8", "replace" if size <= keep else "ignore")
            if size > keep:
                text += (f"\n... [truncated {size - keep} more bytes; read on with view_range=[first, last], "
                         "or grep for what you need]")
            return text
        first, last = view_range
        picked: list[bytes] = []
        total, number, cut = 0, 0, False
        for raw in handle:
            number += 1
            if b"\0" in raw:
                raise _binary(shown, size)
            if number < first:
                continue
            if last != -1 and number > last:
                break
            if total + len(raw) > keep:
                cut = True
                break
            picked.append(raw)
            total += len(raw)
    if not picked and number < first and number:
        raise ToolError(f"view_range starts at line {first}, but {shown} has {number} lines")
    text = b"".join(picked).decode("utf-8", "replace")
    if cut:
        text += (f"\n... [truncated at line {first + len(picked)}: the range is longer than the tool-result "
                 "limit; ask for fewer lines]")
    return text


def _split_lines(text: str) -> list[str]:
    """Lines ending at ``\\n`` only (``str.splitlines`` also breaks at form feeds and other separators)."""
    parts = text.split("\n")
    return [line + "\n" for line in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _pick(lines: list[str], view_range: list[int] | None, shown: str, cut: bool) -> str:
    if view_range is None:
        return "".join(lines) + ("\n... [truncated; the file is longer than the tool-result limit]" if cut else "")
    first, last = view_range
    if first > len(lines) and lines:
        raise ToolError(f"view_range starts at line {first}, but {shown} has {len(lines)} lines")
    return "".join(lines[first - 1: None if last == -1 else last])


def _binary(shown: str, size: int) -> ToolError:
    return ToolError(f"{shown} is a binary file ({size} bytes); view shows text files only (bash, if enabled, "
                     "can inspect it: e.g. file, xxd | head)")


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
