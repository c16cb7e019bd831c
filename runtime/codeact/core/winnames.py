"""Path names as Windows reads them, for comparing a written name with a protected one on every platform.

NTFS and the Win32 path layer open one file under several spellings: trailing dots and spaces are stripped from each
name (``.git.`` and ``.git `` are ``.git``), ``name:stream`` and ``name::$DATA`` open a data stream of ``name``
(``.git::$INDEX_ALLOCATION`` is the folder itself), and a name too long for 8.3 also answers to its short name
(``GIT~1`` for ``.git``, ``GITHUB~1`` for ``.github``, or two letters and a hash such as ``GI1A2B~1``). A short name
cannot be resolved where the file does not exist (nor anywhere on Linux), so one that may stand for a protected
name is refused instead. HFS+ (macOS) ignores some invisible code points in names (``.git\u200c`` is ``.git``);
they are dropped too, as git's own checkout guard does. The rules cost nothing where they do not apply, so the write policy applies them everywhere.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_SHORT = re.compile(r"([^.~\s]{1,6})~([0-9]{1,6})(?:\.([^.\s]{1,3}))?", re.IGNORECASE)
_NOT_IN_SHORT = re.compile(r"[.\s]")  # dropped from a short name's basis (Windows also maps +,;=[] to _)


# Code points HFS+ (macOS) ignores in a name, so that `.git\u200c` opens `.git`: the list git's own checkout guard
# uses (utf8.c, next_hfs_char; core.protectHFS).
_HFS_IGNORED = dict.fromkeys((0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF))


def windows_name(part: str) -> str:
    """``part`` case-folded (Unicode's folding), as NTFS opens it: a data stream cut off, trailing dots and spaces
    stripped (and the code points HFS+ ignores dropped)."""
    name = part.split(":", 1)[0]
    if not name.isascii():
        # case-insensitive disks fold as Unicode does, not only ASCII: `hookſ` (U+017F, long s) is `hooks` on NTFS
        # (its upcase table) and APFS
        stripped = name.translate(_HFS_IGNORED).rstrip(". ")
        return (stripped or name).casefold()
    stripped = name.rstrip(". ")
    return (stripped or name).lower()  # "." and ".." stay what they are


def has_stream(part: str) -> bool:
    """Whether ``part`` names an alternate data stream (``name:stream``, ``name::$DATA``) on Windows."""
    return ":" in part


@lru_cache(maxsize=256)
def _basis(long: str) -> tuple[str, str]:
    """The basis and extension Windows builds a long name's short name from (``.mcp.json``: ``MCP``, ``JSO``)."""
    name = long.lstrip(".").upper()
    base, dot, ext = name.rpartition(".")
    if not dot:
        base, ext = name, ""
    return _NOT_IN_SHORT.sub("", base), _NOT_IN_SHORT.sub("", ext)[:3]


def short_name_of(part: str, names: Iterable[str]) -> str | None:
    """The first of ``names`` that ``part``, read as an 8.3 short name, may stand for (None when ``part`` is no short
    name, or stands for none of them): ``GIT~1`` may be ``.git``; ``GI1A2B~1`` (a hashed one) anything ``GI...``."""
    match = _SHORT.fullmatch(part.rstrip(". "))
    if not match:
        return None
    short, ext = match.group(1).upper(), (match.group(3) or "").upper()
    hashed = len(short) == 6 and all(c in "0123456789ABCDEF" for c in short[2:])
    for name in names:
        base, long_ext = _basis(name)
        if ext == long_ext and base and (base.startswith(short) or (hashed and base[:2] == short[:2])):
            return name
    return None


__all__ = ["has_stream", "short_name_of", "windows_name"]
