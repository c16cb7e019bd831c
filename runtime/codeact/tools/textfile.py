"""Reading a text file as ripgrep reads it, line by line, in bounded memory: the Python side of ``grep``.

A file is read in chunks, never whole: a line longer than ``keep`` characters is kept in its first ``keep`` and the
rest only counted, so a 200 MB minified file costs what one chunk costs. Text is UTF-8 (a UTF-8 or UTF-16 BOM is
honoured, invalid bytes become U+FFFD), lines end at ``\\n`` only, and a UTF-8 file holding a NUL byte anywhere is
binary (:class:`Binary`), as ripgrep decides.
"""
from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from ..core.limits import Deadline
from . import confine

MAX_LINE_CHARS = 2000  # a matched line longer than this is cut, visibly
LONG_LINE = 1 << 20  # characters of one line the Python search matches against; the rest is counted, not kept
CHUNK = 1 << 20  # bytes read at a time

_UTF8 = codecs.getincrementaldecoder("utf-8")
_UTF16 = codecs.getincrementaldecoder("utf-16")


class Binary(Exception):
    """The file holds a NUL byte: binary, skipped by the search."""


def clip(text: str, more: int = 0) -> str:
    """A line as grep returns it: without a final ``\\r``, cut after MAX_LINE_CHARS characters with a note saying
    how many more there were (``more``: characters of the line that were counted but not kept)."""
    if text.endswith("\r") and not more:
        text = text[:-1]
    extra = len(text) - MAX_LINE_CHARS + more
    if extra > 0:
        return f"{text[:MAX_LINE_CHARS]} ... [line cut: {extra} more characters]"
    return text


class TextReader:
    """The lines of an open binary file: :meth:`lines` yields ``(number, text, more)``, where ``text`` is at most
    ``keep`` characters (a final ``\\r`` kept when the line was kept whole) and ``more`` the characters after them
    (a final ``\\r`` not counted). The deadline is checked between chunks."""

    def __init__(self, handle: BinaryIO, deadline: Deadline, tool: str, keep: int = LONG_LINE) -> None:
        self.handle, self.deadline, self.tool, self.keep = handle, deadline, tool, keep
        first = handle.read(CHUNK)
        while 0 < len(first) < 3:  # enough to see a BOM
            extra = handle.read(CHUNK)
            if not extra:
                break
            first += extra
        self.eof = not first
        self.check_nul = True
        if first.startswith(b"\xef\xbb\xbf"):
            first, self.decoder = first[3:], _UTF8("replace")
        elif first.startswith((b"\xff\xfe", b"\xfe\xff")):
            self.decoder, self.check_nul = _UTF16("replace"), False  # UTF-16 is full of NUL bytes: not binary
        else:
            self.decoder = _UTF8("replace")
        self.first = first

    def lines(self) -> Iterator[tuple[int, str, int]]:
        keep, number = self.keep, 0
        head: list[str] = []  # the current line's kept pieces while it spans chunks
        held = more = 0  # characters kept in ``head``; characters counted beyond ``keep``
        last = ""  # the line's last character so far (is it a "\r"?)
        chunk, eof = self.first, self.eof
        self.first = b""
        while True:
            if self.check_nul and b"\0" in chunk:
                raise Binary
            pieces = self.decoder.decode(chunk, eof).split("\n")
            for piece in pieces[:-1]:
                number += 1
                if head or more:
                    line, count = self._join(head, held, more, piece)
                    tail_char = piece[-1:] or last
                    head, held, more, last = [], 0, 0, ""
                else:
                    line, count, tail_char = piece, 0, piece[-1:]
                    if len(line) > keep:
                        line, count = line[:keep], len(line) - keep
                yield number, *_unless_cr(line, count, tail_char)
            tail = pieces[-1]
            if tail:
                room = keep - held
                if room > 0:
                    head.append(tail[:room])
                    held += min(room, len(tail))
                more += max(0, len(tail) - max(room, 0))
                last = tail[-1]
            if eof:
                break
            self.deadline.check(self.tool, "reading files")
            chunk = self.handle.read(CHUNK)
            eof = not chunk
        if head or more:  # a last line without "\n"
            yield number + 1, *_unless_cr("".join(head), more, last)

    def _join(self, head: list[str], held: int, more: int, piece: str) -> tuple[str, int]:
        room = self.keep - held
        if room > 0:
            head.append(piece[:room])
        return "".join(head), more + max(0, len(piece) - max(room, 0))

    def rest_is_binary(self) -> bool:
        """Whether the part of the file not read yet holds a NUL byte (only a UTF-8 file can be binary)."""
        if not self.check_nul:
            return False
        if b"\0" in self.first:
            return True
        while True:
            chunk = self.handle.read(CHUNK)
            if not chunk:
                return False
            if b"\0" in chunk:
                return True
            self.deadline.check(self.tool, "reading files")


def _unless_cr(line: str, count: int, last: str) -> tuple[str, int]:
    """A cut line's count without its final ``\r``; when only that ``\r`` was cut, the line is whole again."""
    if count and last == "\r":
        count -= 1
        if not count:
            return line + "\r", 0
    return line, count


def search_file(file: Path, regex: re.Pattern[str], max_count: int, deadline: Deadline,
                add: Callable[[tuple[int, str]], None]) -> bool:
    """Pass ``(number, clipped text)`` of each line of ``file`` that ``regex`` matches (up to ``max_count``) to
    ``add``; ``False`` if the file is binary (what was passed must then be dropped). An unreadable file has no
    lines."""
    found = 0
    try:
        with open(confine.open_below(file), "rb") as handle:  # never a file outside, through a swapped folder
            reader = TextReader(handle, deadline, "grep")
            for number, text, more in reader.lines():
                if regex.search(text):
                    add((number, clip(text, more)))
                    found += 1
                    if found >= max_count:
                        return not reader.rest_is_binary()  # a binary file is skipped whole, as ripgrep does
    except Binary:
        return False
    except OSError:
        pass
    return True


class LineCursor:
    """Lines of one file fetched by number, in increasing order, in one pass: the text of a matched line too long
    for ripgrep to print (``--max-columns``), read back here and cut like every other."""

    def __init__(self, file: Path, deadline: Deadline) -> None:
        self.file, self.deadline = file, deadline
        self._lines: Iterator[tuple[int, str, int]] | None = None
        self._handle: BinaryIO | None = None

    def text(self, number: int) -> str | None:
        """Line ``number`` cut as grep returns it; ``None`` when it cannot be read (gone, changed, binary)."""
        try:
            if self._lines is None:
                self._handle = open(confine.open_below(self.file), "rb")
                self._lines = TextReader(self._handle, self.deadline, "grep", keep=MAX_LINE_CHARS + 1).lines()
            for n, text, more in self._lines:
                if n == number:
                    return clip(text, more)
                if n > number:
                    break
        except (OSError, Binary):
            pass
        return None

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
