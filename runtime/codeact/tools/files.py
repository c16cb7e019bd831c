"""File tools: view, create, edit. Writes go through :mod:`codeact.tools.atomic` (no link followed, one writer at a
time, atomic, mode and owner kept)."""
from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISBLK, S_ISCHR, S_ISDIR, S_ISFIFO, S_ISREG, S_ISSOCK
from typing import BinaryIO, cast

from ..core import notices
from ..core.limits import FOLDER_BYTES, Deadline, Limits
from ..core.pathnames import quote, quote_part
from ..core.tool import ToolContext
from ..errors import ToolError
from . import atomic


def view(ctx: ToolContext, *, path: str, view_range: list[int] | None = None) -> str:
    """Return a file's text exactly as stored, or a folder's listing.

    ``view_range=[first, last]`` (1-based, inclusive; ``last=-1`` means the end) returns only those lines; lines
    end at ``\\n``, so the numbers agree with grep's. A folder gives its entries one per line, sub-folders with a
    trailing ``/`` and symbolic links with a trailing ``@``. A binary file (one holding a NUL byte) is refused.
    A file longer than the tool-result limit is cut, visibly (and a ``note:`` line says so); read the rest with
    ``view_range``. A range that starts after the last line raises IndexError naming the file's line count (an
    empty file has no lines: only ``[1, ...]`` gives ``""``).
    """
    fd, opened, shown, real = ctx.workspace.open_inside(path)  # part by part below the root: no link followed
    if fd < 0:  # Windows: no folder descriptors, the path's check stands
        return _listing(real)
    try:
        if not S_ISREG(opened.st_mode):
            if S_ISDIR(opened.st_mode):
                return _listing(fd)  # the descriptor: the folder the check passed, whatever the path says now
            raise _not_readable(shown, opened.st_mode)
        if view_range is not None:
            _check_range(view_range)
        cap = int(ctx.limits.tool_result)
        keep = cap - min(256, cap // 4)  # room for the note, so the runner's own cut never applies on top
        if view_range is None and 0 < opened.st_size < keep:
            small = _small_file(fd, opened.st_size, keep, shown)
            if small is not None:
                return small
            os.lseek(fd, 0, os.SEEK_SET)
        # unbuffered for a whole file: its size is known, so a read or two (a buffered reader costs more a call)
        handle = open(fd, "rb", buffering=0 if view_range is None else -1, closefd=False)
        size = opened.st_size
        # at most what fstat says plus a byte: read(keep) would allocate (and fault in) a 1 MiB buffer every call
        want = 2 if view_range is not None else keep if not 0 < size < keep else size + 1
        data = _read_up_to(handle, want)
        if len(data) == want and want < keep and view_range is None:  # it grew since fstat: read on to the cap
            data += _read_up_to(handle, keep - want)
            size = max(size, os.fstat(fd).st_size, len(data))
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16: decode what fits, then cut lines from the text
            handle.seek(0)
            if view_range is not None:  # read on as UTF-8, in chunks, however far the range lies
                return _range(cast(BinaryIO, _Utf16AsUtf8(handle)), view_range, keep, cap, shown, size,
                              ctx.run_deadline())
            return _head_of_utf16(_split_lines(_read_up_to(handle, keep * 2).decode("utf-16", "replace")), shown,
                                  size > keep * 2)
        if view_range is None:
            return _head(data, size, keep, shown)
        handle.seek(0)
        return _range(handle, view_range, keep, cap, shown, size, ctx.run_deadline())
    finally:
        os.close(fd)


def _listing(folder: int | str) -> str:
    """A folder's entries, one a line: sub-folders with a trailing ``/``, links with ``@``; no ``.git``. A name is
    quoted as the program's paths are (a newline in it as ``\\n``), and one ending in ``@`` too (``"tool@"``, not
    the link ``tool@``), so each line reads back as the entry it lists."""
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    return "\n".join(_listed_name(e.name) + ("@" if e.is_symlink() else "/" if e.is_dir() else "")
                     for e in entries if e.name != ".git")


def _listed_name(name: str) -> str:
    shown = quote(name)
    return quote_part(name) if shown.endswith("@") else shown


def _not_readable(shown: str, mode: int) -> ToolError:
    return ToolError(f"{shown} is {_kind(mode)}, not a file: view reads regular files and folders")


def _kind(mode: int) -> str:
    return ("a FIFO (named pipe)" if S_ISFIFO(mode) else "a socket" if S_ISSOCK(mode)
            else "a device" if S_ISCHR(mode) or S_ISBLK(mode) else "a folder" if S_ISDIR(mode) else "no regular file")


def _small_file(fd: int, size: int, keep: int, shown: str) -> str | None:
    """The text of the open regular file ``fd``, ``size`` bytes by its fstat (less than ``keep``), read whole in one
    read (no file object: the hot path of most calls); ``None`` where the general path (which reads on until the
    end) must decide: the read gave less or more than fstat says (it read short, as a FUSE file may, or it
    changed), or it is UTF-16."""
    data = os.read(fd, size + 1)  # a regular file reads short only at its end
    if len(data) != size or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return None
    return _head(data, size, keep, shown)


def _read_up_to(handle: BinaryIO, count: int) -> bytes:
    """``count`` bytes, fewer only at the end of the file: an unbuffered read may return less (a pipe, ``/proc``)."""
    data = handle.read(count)
    while 0 < len(data) < count:
        more = handle.read(count - len(data))
        if not more:
            break
        data += more
    return data


def _check_range(view_range: object) -> None:
    """Refuse a ``view_range`` that is not ``[first, last]`` of 1-based line numbers with first <= last."""
    if (not isinstance(view_range, (list, tuple)) or len(view_range) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)):
        raise ToolError("view_range must be [first, last], two line numbers (1-based; last=-1 for the end)")
    if view_range[0] < 1 or (view_range[1] != -1 and view_range[1] < view_range[0]):
        raise ToolError(f"view_range {list(view_range)} is invalid; lines are 1-based and first <= last")


def _head(data: bytes, size: int, keep: int, shown: str) -> str:
    """A whole file's text from its first ``data`` (at most ``keep`` bytes), cut visibly when ``size`` is more."""
    if b"\0" in data:
        raise _binary(shown, size)
    text = data.decode("utf-8", "replace" if size <= keep else "ignore")
    if size > keep:
        whole = text.count("\n")
        text += (f"\n... [truncated {size - keep} more bytes; read on with view_range=[first, last], "
                 "or grep for what you need]")
        notices.note("view()", f"returned the first {keep:,} of {size:,} bytes of {shown} (lines 1-{whole} "
                               f"whole: the tool-result limit); read on with view_range=[{whole + 1}, "
                               f"{2 * whole}] and so on, or grep for what you need")
    return text


_CHUNK = 1 << 16  # what a ranged view reads at a time: no line is ever held whole, however long


def _range(handle: BinaryIO, view_range: list[int], keep: int, cap: int, shown: str, size: int,
           deadline: Deadline) -> str:
    """Lines ``first..last`` of the open file, at most ``keep`` bytes of them (cut visibly past that), read in
    chunks: what is held is about ``keep`` plus a chunk, whatever the lengths of the file's lines."""
    first, last = view_range
    chunks = _chunks(handle, shown, first, deadline)
    skipped, rest, partial = _skip_lines(chunks, first - 1, shown, size)
    if skipped < first - 1 or (not rest and first > 1):
        raise _past_end(shown, view_range, skipped + partial)
    taken = _take_lines(chunks, rest, None if last == -1 else last - first + 1, keep, shown, size)
    if len(taken) <= keep:
        return taken.decode("utf-8", "replace")
    end = taken.rfind(b"\n", 0, keep) + 1
    if end == 0:  # the range's first line alone is longer than the limit: its head, cut at a character
        head = bytes(taken[:keep]).decode("utf-8", "ignore") if keep else ""
        shown_bytes = len(head.encode("utf-8", "surrogatepass"))
        notices.note("view()", f"line {first} of {shown} is longer than the {cap:,}-byte tool-result limit: returned "
                               f"its first {shown_bytes:,} bytes; read the rest of it with bash (cut -c, head -c) "
                               f"or grep, the lines after it with view_range=[{first + 1}, {view_range[1]}]")
        return head + (f"\n... [truncated line {first}: it is longer than the tool-result limit; its first "
                       f"{shown_bytes:,} bytes are shown]")
    text = taken[:end].decode("utf-8", "replace")
    stop = first + taken.count(b"\n", 0, end)
    text += (f"\n... [truncated at line {stop}: the range is longer than the tool-result "
             "limit; ask for fewer lines]")
    notices.note("view()", f"returned lines {first}-{stop - 1} of view_range={list(view_range)} of {shown} "
                           f"(the {cap:,}-byte tool-result limit); read on with view_range=[{stop}, "
                           f"{view_range[1]}]")
    return text


def _chunks(handle: BinaryIO, shown: str, first: int, deadline: Deadline) -> Iterator[bytes]:
    """The file's bytes from where ``handle`` is, a chunk at a time, the run's deadline checked before each."""
    while True:
        deadline.check("view", f"reading {shown} for line {first}")
        chunk = handle.read(_CHUNK)
        if not chunk:
            return
        yield chunk


def _skip_lines(chunks: Iterator[bytes], count: int, shown: str, size: int) -> tuple[int, bytes, bool]:
    """Pass ``count`` line ends: how many were passed, the bytes read after the last (``b""`` at the end of the
    file only), and whether bytes follow the last line end passed (a last line with no ``\n``)."""
    passed, partial = 0, False
    for chunk in chunks:
        if count == passed:
            return passed, chunk, False
        ends = chunk.count(b"\n")
        if passed + ends < count:
            if b"\0" in chunk:
                raise _binary(shown, size)
            passed += ends
            partial = not chunk.endswith(b"\n")
            continue
        at = -1
        for _ in range(count - passed):
            at = chunk.find(b"\n", at + 1)
        if chunk.find(b"\0", 0, at) >= 0:
            raise _binary(shown, size)
        rest = chunk[at + 1:] or next(chunks, b"")
        return count, rest, False
    return passed, b"", partial


def _take_lines(chunks: Iterator[bytes], rest: bytes, count: int | None, keep: int, shown: str,
                size: int) -> bytearray:
    """The next ``count`` lines (``None``: to the end of the file) from ``rest`` and then ``chunks``: at most
    ``keep`` bytes and one more where the lines go on past them (read no further than a chunk past them)."""
    taken = bytearray()
    piece = rest
    while piece:
        end = len(piece)
        if count is not None:
            ends = piece.count(b"\n")
            if ends >= count:
                end = -1
                for _ in range(count):
                    end = piece.find(b"\n", end + 1)
                end += 1
            count -= min(ends, count)
        end = min(end, keep + 1 - len(taken))  # a byte past the limit shows the range was cut
        if piece.find(b"\0", 0, end) >= 0:
            raise _binary(shown, size)
        taken += piece[:end] if end < len(piece) else piece
        if count == 0 or len(taken) > keep:
            break
        piece = next(chunks, b"")
    return taken


def _past_end(shown: str, view_range: list[int], lines: int) -> IndexError:
    """The error of a range that starts after the file's last line: the line count, and how a paging loop ends."""
    return IndexError(f"view_range {list(view_range)} starts past the end of {shown}, which has {lines} lines; "
                      "a paging loop stops when a page has fewer lines than it asked for (or on this IndexError), "
                      "not on an empty result")


def _split_lines(text: str) -> list[str]:
    """Lines ending at ``\\n`` only (``str.splitlines`` also breaks at form feeds and other separators)."""
    parts = text.split("\n")
    return [line + "\n" for line in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _head_of_utf16(lines: list[str], shown: str, cut: bool) -> str:
    if cut:
        notices.note("view()", f"returned the first {len(lines):,} lines of {shown} (the tool-result limit); "
                               f"read on with view_range=[{len(lines) + 1}, {2 * len(lines)}] and so on")
    return "".join(lines) + ("\n... [truncated; the file is longer than the tool-result limit]" if cut else "")


class _Utf16AsUtf8:
    """A UTF-16 file (its BOM gives the byte order) read as UTF-8 bytes, a chunk at a time, for :func:`_range`."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.decoder = codecs.getincrementaldecoder("utf-16")("replace")

    def read(self, size: int) -> bytes:
        while True:
            raw = self.handle.read(size)
            text = self.decoder.decode(raw, final=not raw)
            if text or not raw:  # an odd byte alone decodes to nothing yet: read on
                return text.encode("utf-8")


def _binary(shown: str, size: int) -> ToolError:
    return ToolError(f"{shown} is a binary file ({size} bytes); view shows text files only (bash, if enabled, "
                     "can inspect it: e.g. file, xxd | head)")


def _charge_write(ctx: ToolContext, tool: str, size: int, where: str) -> None:
    """Count a write against the run's ``writes`` limit; past it the call is refused and the run says so in a note."""
    limit = int(ctx.limits.writes)
    if not ctx.run_deadline().charge_write(size, limit):
        text = (f"{tool}({where}) was refused: it would take this run past its write limit of {limit:,} bytes "
                "(what create(), edit() and sql() may write in one run); write less, or raise CODEACT_WRITES")
        notices.note(f"{tool}()", text)
        raise ToolError(text)


def _charge_folders(ctx: ToolContext, root: Path, real: Path, where: str) -> None:
    """Count the folders ``create`` makes on the way to ``real`` against the run's write limit, each as a block on
    disk, apart from the bytes (300 empty files 30 new folders deep are 36 MiB of folders and no bytes)."""
    missing, folder = 0, real.parent
    while folder != root and root in folder.parents and not os.path.lexists(folder):
        missing += 1
        folder = folder.parent
    limit = int(ctx.limits.writes)
    if missing and not ctx.run_deadline().charge_folders(missing, limit):
        text = (f"create({where}) was refused: its {missing} new folder(s) would take this run past the "
                f"{limit // FOLDER_BYTES:,} folders its write limit of {limit:,} bytes allows (a folder counts as "
                f"the {FOLDER_BYTES:,}-byte block it takes); make fewer folders, or raise CODEACT_WRITES")
        notices.note("create()", text)
        raise ToolError(text)


def create(ctx: ToolContext, *, path: str, file_text: str) -> str:
    """Create a new file with ``file_text`` (parent folders too); refuses to overwrite an existing file."""
    real = ctx.workspace.resolve_for_write(path)
    where = ctx.workspace.display(real)
    if os.path.lexists(real):
        raise FileExistsError(f"{where} already exists; use edit() to change it")
    ctx.workspace.check_secrets(file_text, real)
    data = file_text.encode("utf-8")
    _charge_folders(ctx, ctx.workspace.root, real, where)
    _charge_write(ctx, "create", len(data), where)
    with atomic.slot(ctx.workspace.root, real.relative_to(ctx.workspace.root), where, make_parents=True) as target:
        target.create(data)  # fails if another run created it since the check above
    return f"created {where}"


EDIT_SHARE = 4  # an edit holds a file several times over (its bytes, text, result and encoding): a share of memory


def edit_limit(limits: Limits) -> int:
    """The largest file ``edit`` reads, in bytes: a share of the run's memory limit, and never more than the run's
    write limit (an edit writes the whole file again)."""
    return min(int(limits.memory) // EDIT_SHARE, int(limits.writes))


def _too_large(where: str, size: int, limit: int, limits: Limits) -> ToolError:
    described = limits.described()
    return ToolError(f"{where} is {size:,} bytes; edit changes files of at most {limit:,} bytes (a quarter of the "
                     f"run's {described['memory']} memory limit, at most its {described['writes']} write limit), "
                     "and reads nothing of a larger one. Read it with view(view_range=...) or grep; change it with "
                     "bash (sed, a script) if enabled, or raise CODEACT_MEMORY")


def edit(ctx: ToolContext, *, path: str, old_str: str, new_str: str) -> str:
    """Replace ``old_str`` with ``new_str`` in a file; ``old_str`` must occur exactly once.

    Line endings are kept: in a file with Windows line endings, ``\\n`` in both strings stands for ``\\r\\n``.
    The file keeps its mode (and its owner when running as root); a read-only file, or one with other hard links,
    is refused. Two runs editing one file take turns: every reported edit is in the file. A file larger than a
    quarter of the run's memory limit (or than its write limit) is refused unread: change it with bash.
    """
    real = ctx.workspace.resolve_for_write(path)
    where = ctx.workspace.display(real)
    if not real.is_file():
        raise FileNotFoundError(f"no such file: {where}")
    with atomic.slot(ctx.workspace.root, real.relative_to(ctx.workspace.root), where) as target:
        limit = edit_limit(ctx.limits)  # re-read under the lock: another run may have changed it
        data, info = target.read(limit, lambda size: _too_large(where, size, limit, ctx.limits))
        try:
            text = data.decode("utf-8")
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
        ctx.workspace.check_secrets(updated, real, before=text)  # the result: a secret split over two edits too
        encoded = updated.encode("utf-8")
        _charge_write(ctx, "edit", len(encoded), where)
        target.replace(encoded, info)
    return f"edited {where}"
