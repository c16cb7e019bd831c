"""Targets and how a write's path is matched against them: case-folded as Windows reads names, globs narrowed."""
from __future__ import annotations

import fnmatch
import re
from typing import NamedTuple

from ..patterns import compile_narrow
from ..winnames import windows_name
from . import pyimports

GLOB = frozenset("*?[")


class Target(NamedTuple):
    """A path a hook command names: ``path`` absolute and normalised, ``key`` as :func:`fold` writes it (an
    ``fnmatch`` pattern when ``glob``); ``named`` is False for a bare word that is a path only where it exists;
    ``fresh``: a file there now is one only where :func:`codeact.core.hookruns.pyimports.shadows` says so."""

    path: str
    key: str
    named: bool
    glob: bool
    fresh: bool = False  # a Python start's surface (pyimports.SURFACE): refused where new, or the stdlib's name


def fold(path: str) -> str:
    """``path`` (absolute, normalised) with each part as Windows reads it (case-folded): the form targets compare in."""
    return "/".join(windows_name(part) for part in path.replace("\\", "/").split("/"))


def matches(targets: tuple[Target, ...], key: str, exists: bool) -> bool:
    """Whether the path whose :func:`fold` is ``key`` (``exists``: there now) is one of ``targets``."""
    for target in targets:
        if (not target.named and not exists) or (target.fresh and exists and not pyimports.shadows(key)):
            continue
        if (_glob_matches(target.key, key) if target.glob else key == target.key):
            return True
    return False


WIDE_GLOB = 4096  # code points a glob word's classes may span before it is taken to match any path, uncompiled
_GLOBS: dict[str, re.Pattern[str] | None] = {}  # compiled glob words (None: too wide, taken to match)


def compiled_glob(pattern: str) -> re.Pattern[str] | None:
    """The shell glob ``pattern`` compiled (``fnmatchcase``'s), once and without re's cache; ``None`` for one whose
    classes span more than :data:`WIDE_GLOB` code points, which re compiles one code point at a time with no
    deadline (the caller takes the safe side)."""
    if pattern not in _GLOBS:
        if len(_GLOBS) >= 1024:  # hooks files' words: a bounded set, kept small in the warm server
            _GLOBS.clear()
        _GLOBS[pattern] = compile_narrow(fnmatch.translate(pattern), WIDE_GLOB)
    return _GLOBS[pattern]


def _glob_matches(pattern: str, name: str) -> bool:
    """Whether ``name`` matches the glob word ``pattern`` as the shell matches a path: ``*``, ``?`` and a class
    within one part; ``**`` anywhere makes every ``*`` cross parts (what a variable, an unread brace or a
    workspace stands for). A too wide one is taken to match: the write is refused."""
    if "**" in pattern:
        regex = compiled_glob(pattern)
        return regex is None or regex.match(name) is not None
    parts, names = pattern.split("/"), name.split("/")
    if len(parts) != len(names):
        return False
    for part, given in zip(parts, names):
        if part == given:
            continue
        regex = compiled_glob(part)
        if regex is not None and regex.match(given) is None:
            return False
    return True
