"""File names that are not UTF-8, as a program sees them: quoted as git quotes them.

A POSIX file name is bytes, and any pull request can commit one that is not UTF-8 (``legacy-\\xe9t\\xe9.txt``).
Python reads such a name with ``surrogateescape`` (``'legacy-\\udce9t\\udce9.txt'``); the sandbox's strings are
UTF-8 and cannot hold it, so an answer naming it would end the run with an error no ``try`` can catch. Such a name
reaches the program in git's C-style quoting, as ``git ls-files`` prints it (``core.quotePath``):
``"legacy-\\351t\\351.txt"``, quotes included, one part of a path at a time (``"d\\377"/"m\\351.py"``, as
``os.walk`` joins names). A path the program gives back (``view``, ``edit``, ``open()``, ``os.listdir``) is read
the same way, quoted whole as git prints it or part by part. A part that starts or ends with a ``"`` is quoted
too (alone, ``"a`` and ``b"`` need nothing, but ``"a/b"`` joined reads as a quoted name), and so is one holding a
control character (a newline would split a listing's line) or a ``\\`` (the sandbox's pathlib reads it as a
separator: ``a\\b.txt`` would name ``a/b.txt``), so any listed path, its parts joined by ``/`` or by the
sandbox's pathlib, reads back as itself; every other name is unchanged. A ``\\`` in a name is quoted ``\\134``,
not git's ``\\\\``, which that pathlib would read as an empty part and drop (both are read back).

The sandbox's file idioms (``os.listdir``, ``os.walk``, ``glob.glob``, ``pathlib``) show a quoted name with its plain
ending after the closing quote: ``"legacy-\\351t\\351".txt``, ``"a\\134"b.txt`` (``quote(path, ending=True)``).
pydantic-monty's ``Path.glob`` matches the names the host lists itself, and a form ending in ``"`` matches no pattern
with an ending (``*.txt``); this one matches what the name's own ending matches. It is read back as one name: its
head is a quoted string holding an escape (every quoted name's head does), the rest holds no ``"``, ``\\``, ``/`` or
control character, and a real name starting with ``"`` is always quoted, so no plain name reads as this form.
"""
from __future__ import annotations

import bisect
import os
import re
from pathlib import PurePath
from typing import Any

_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\134"}
_UNESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_QUOTED = re.compile(r'"(?:[^"\\]|\\(?:[abtnvfr"\\]|[0-3][0-7]{2}))*"', re.S)
_ESCAPE = re.compile(r'\\(?:([abtnvfr"\\])|([0-3][0-7]{2}))')
# a control character, a line break str.splitlines() splits at (U+0085, U+2028, U+2029) or a backslash: a name
# holding one is quoted, so a listing of one name a line splits into its names however a program splits it
_QUOTED_ALWAYS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029\\]")
# a character that may make a name quoted (with any non-UTF-8 one)
_SPECIAL = re.compile(r'[\x00-\x1f\x7f\x85\u2028\u2029"\\]')
# a character a quoted form escapes (a surrogate: not UTF-8)
_NOT_PLAIN = re.compile(r'[\x00-\x1f\x7f\x85\u2028\u2029"\\\ud800-\udfff]')
# a quoted name's plain ending, after its closing quote
_ENDING = re.compile(r'[^\x00-\x1f\x7f\x85\u2028\u2029"\\/\ud800-\udfff]*')


def _c_quoted(data: bytes) -> str:
    """``data`` in git's C-style quoting: ``"..."``, a byte outside printable ASCII as ``\\ooo``."""
    out = ['"']
    for byte in data:
        escape = _ESCAPES.get(byte)
        out.append(escape if escape is not None else chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}")
    out.append('"')
    return "".join(out)


def _quoted_name(part: str, ending: bool) -> str:
    """One name quoted whole, or with ``ending`` its plain ending (past its last character that is escaped) left
    after the closing quote: ``"a\\134"b.txt``."""
    if not ending:
        return _c_quoted(os.fsencode(part))
    cut = 0
    for found in _NOT_PLAIN.finditer(part):
        cut = found.end()
    return _c_quoted(os.fsencode(part[:cut])) + part[cut:]


def _unquoted(text: str) -> str | None:
    """The name the quoted ``text`` stands for, else ``None``: ``text`` is a whole quoted string, or one holding an
    escape followed by a plain ending (``"a\\134"b.txt``, :func:`_quoted_name`)."""
    if len(text) < 2 or text[0] != '"':
        return None
    close = text.rfind('"')  # an ending holds no quote: the last one closes the quoted string
    end = text[close + 1:]
    if close == 0 or (end and ("\\" not in text[:close] or _ENDING.fullmatch(end) is None)):
        return None
    if _QUOTED.fullmatch(text, 0, close + 1) is None:
        return None
    data = bytearray()
    at = 1
    for found in _ESCAPE.finditer(text, 1, close):
        data += text[at:found.start()].encode("utf-8")
        data.append(_UNESCAPES[found[1]] if found[1] else int(found[2], 8))
        at = found.end()
    data += text[at:close].encode("utf-8")
    data += end.encode("utf-8")
    return os.fsdecode(bytes(data))


def needs_quoting(path: str) -> bool:
    """Whether ``path`` (as the file system gives it) reaches the program quoted: a part is not UTF-8, holds a
    control character or a ``\\``, or starts or ends with a ``"`` (given back, alone or joined to others, it could
    read as a quoted name)."""
    if not _is_utf8(path) or _QUOTED_ALWAYS.search(path) is not None:
        return True
    return '"' in path and any(_part_needs_quoting(part) for part in path.split("/"))


def _part_needs_quoting(part: str) -> bool:
    return (part.startswith('"') or part.endswith('"') or not _is_utf8(part)
            or _QUOTED_ALWAYS.search(part) is not None)


def quote_part(part: str) -> str:
    """One name (no ``/``) quoted whether it needs it or not: where a listing marks names (view's trailing ``@`` of
    a link), a plain name ending in the mark is quoted so as not to read as marked; :func:`unquote` reads it back."""
    return _c_quoted(os.fsencode(part))


def quote(path: str, *, ending: bool = False) -> str:
    """``path`` (as the file system gives it) as the program sees it: each part that is not UTF-8, holds a control
    character or a ``\\``, or starts or ends with a ``"``, quoted; any other path unchanged. Every part the program
    gets is thus plain (never read as a quoted form) or quoted, and :func:`unquote` reads any path joined of such
    parts back as that path. Quoted whole (git's form, the tools'), or with ``ending`` each quoted name's plain
    ending left after the closing quote (the sandbox's file idioms, whose ``Path.glob`` matches the forms)."""
    if (path.isascii() and _SPECIAL.search(path) is None) or not needs_quoting(path):  # the first: most paths
        return path
    return "/".join(_quoted_name(part, ending) if _part_needs_quoting(part) else part for part in path.split("/"))


def quote_all(paths: list[str], *, ending: bool = False) -> list[str]:
    """:func:`quote` of each path; ``paths`` itself when none changes (one check of them all, the common case)."""
    joined = "".join(paths)
    if _is_utf8(joined) and _SPECIAL.search(joined) is None:
        return paths
    return [quote(path, ending=ending) for path in paths]


def unquote(path: str) -> str:
    """The real path of a path the program gives: quoted whole (as ``git ls-files`` prints it) or part by part (as
    the tools return it, and ``os.walk`` joins it); anything else as it is. A path made by the sandbox's
    ``pathlib``, which reads ``\\`` as a separator (``"legacy-/351t/351.txt"``), is read as its quoted form."""
    if '"' not in path or len(path) > MAX_QUOTED_PATH:  # no file has a longer name: as it is, for the kernel's error
        return path
    if "\\" not in path:
        path = "/".join(_rejoined(path.split("/")))
    whole = _unquoted(path)
    if whole is not None:
        return whole
    return "/".join(_unquoted(part) or part for part in path.split("/"))


def readings(path: str) -> list[str]:
    """Every real path the program's ``path`` may stand for, :func:`unquote`'s first. One, but where the text holds
    a ``"`` and no ``\\``: the sandbox's pathlib, joining a folder the program typed raw (``"a``) to a quoted name
    (``"b\\""``), eats the ``\\`` (``"a/"b/""``), and the same text is also the quoted name ``a"b"`` with its
    ``\\`` eaten. So each split into a head the program typed (its parts read one by one) and a tail pathlib
    joined is a reading too; the caller takes the one that exists (:meth:`codeact.core.boundary.Workspace.reading`)."""
    first = unquote(path)
    if '"' not in path or "\\" in path:
        return [first]
    parts = path.split("/")
    if len(parts) > 64:  # no join of the sandbox's pathlib is that deep: unquote's reading alone
        return [first]
    found = dict.fromkeys([first])
    for at in range(1, len(parts) + 1):
        head = [_unquoted(part) or part for part in parts[:at]]
        tail = parts[at:]
        reading = "/".join(head + ([unquote("/".join(tail))] if tail else []))
        if "" not in reading.split("/")[1:]:  # an empty name is no join of pathlib's (a file named '"' is '"/""')
            found[reading] = None
    return list(found)


# The longest quoted form of a name: 255 bytes (the longest name a file system takes), each written \ooo, in quotes.
MAX_QUOTED_NAME = 4 * 255 + 2
# The longest quoted form of a path: PATH_MAX (4,096 bytes) each written \ooo, and the quotes of its parts.
MAX_QUOTED_PATH = 5 * 4096


def _rejoined(parts: list[str]) -> list[str]:
    """``parts`` with each run from a part that opens a quote to the furthest one that closes it joined by ``\\``
    again, where that makes a quoted name (the program's quoted form never lacks a ``\\``: its loss is pathlib's).
    The furthest: a quoted name's own closing quote is never escaped and its ending holds no ``\\``, so no run read
    past it is a quoted name, while one that stops short may be (``"a\\"\\"b"``, the name ``a""b``, holds
    ``"a\\""``). A quoted string's first unescaped ``"`` after the opening one closes it, so one match over the parts
    joined, from the opening part and no further than a quoted name reaches (MAX_QUOTED_NAME), names the only part
    that can end the run: the work grows with the path's length, not with its parts times a name's."""
    joined = "\\".join(parts)
    ends: list[int] = []  # where each part ends in ``joined``
    for part in parts:
        ends.append((ends[-1] + 1 if ends else 0) + len(part))
    out: list[str] = []
    at = 0
    while at < len(parts):
        part, start = parts[at], ends[at] - len(parts[at])
        end = at
        if part.startswith('"') and (len(part) < 2 or not part.endswith('"')):
            reach = max(at, bisect.bisect_right(ends, start + MAX_QUOTED_NAME) - 1)
            found = _QUOTED.match(joined, start, ends[reach])
            if found is not None:
                last = bisect.bisect_left(ends, found.end())  # the part holding the closing quote
                if last > at and _unquoted(joined[start:ends[last]]) is not None:
                    end = last
        out.append(joined[start:ends[end]])
        at = end + 1
    return out


def _is_utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean(value: Any) -> Any:
    """``value`` (plain data: an answer to the program) with every string that is not UTF-8 quoted; ``None`` when
    none was. The last line of defence, for an answer that would otherwise end the run (the monty backend's)."""
    if isinstance(value, str):
        if _is_utf8(value):
            return None
        return quote(value)
    if isinstance(value, dict):
        pairs = [(clean(key), clean(item)) for key, item in value.items()]
        if all(key is None and item is None for key, item in pairs):
            return None
        return {key if new_key is None else new_key: item if new_item is None else new_item
                for (key, item), (new_key, new_item) in zip(value.items(), pairs)}
    if isinstance(value, (list, tuple)):
        items = [clean(item) for item in value]
        if all(item is None for item in items):
            return None
        kept = [old if new is None else new for old, new in zip(value, items)]
        return kept if isinstance(value, list) else tuple(kept)
    if isinstance(value, PurePath):
        cleaned = clean(str(value))
        return None if cleaned is None else type(value)(cleaned)
    return None


__all__ = ["clean", "needs_quoting", "quote", "quote_all", "quote_part", "readings", "unquote"]
