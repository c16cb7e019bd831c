"""The regular expressions and globs a program gives a tool, compiled on the host: bounded, and not kept."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import re
from typing import Any

from ..errors import ToolError

# Characters of a pattern a tool compiles on the host, in the run's thread: sre's parse and compile grow with the
# pattern (a name, a line or a file pattern is far shorter).
MAX_PATTERN = 64 * 1024


def check_pattern(pattern: object, what: str) -> None:
    """Refuse a ``pattern`` longer than :data:`MAX_PATTERN` (a ToolError naming ``what`` it is), before the host
    compiles it."""
    if isinstance(pattern, str) and len(pattern) > MAX_PATTERN:
        raise ToolError(f"{what} is {len(pattern):,} characters long, over the {MAX_PATTERN:,} a tool compiles; "
                        "search for fewer alternatives at a time, or filter the results in the program")


# Code points the character classes of one pattern may span: sre compiles a class by walking each code point of
# its ranges in Python (``[\x00-\uffff]`` is 65,536 steps), where the run's deadline cannot stop it.
MAX_CLASS_SPAN = 1 << 20


def compile_uncached(pattern: str, flags: Any = 0) -> re.Pattern[str]:
    """``re.compile`` without ``re``'s module cache, which keeps the last 512 patterns for the life of the process:
    a program's patterns (each up to MAX_PATTERN, compiled to far more) would stay in the warm server. A pattern
    whose classes span more than MAX_CLASS_SPAN code points is a ``re.error``, before it is compiled."""
    try:
        from re import _compiler as compiler  # type: ignore[attr-defined]  # 3.11+
        from re import _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_compile as compiler
        import sre_parse as parser
    span = _class_span(parser.parse(pattern, int(flags)), parser.RANGE)
    if span > MAX_CLASS_SPAN:
        raise re.error(f"its character classes span {span:,} code points, over the {MAX_CLASS_SPAN:,} a tool "
                       "compiles; use narrower classes")
    return compiler.compile(pattern, int(flags))  # type: ignore[no-any-return]


def compile_narrow(pattern: str, span: int, flags: Any = 0) -> re.Pattern[str] | None:
    """:func:`compile_uncached`, or ``None``, uncompiled, where the classes of ``pattern`` span more than ``span``
    code points: for the patterns the host compiles for itself (a hooks file's globs, an ignore rule's classes),
    whose callers then take the safe answer (a write refused, a name that may be ignored)."""
    return None if class_span(pattern) > span else compile_uncached(pattern, flags)


def class_span(pattern: str) -> int:
    """The code points the classes of the regular expression ``pattern`` span (what compiling them walks in
    Python), 0 for one that does not parse."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser
    try:
        return _class_span(parser.parse(pattern, 0), parser.RANGE)
    except (re.error, RecursionError, OverflowError, ValueError):
        return 0


def _class_span(parsed: Any, range_op: Any) -> int:
    """The code points the ranges of a parsed pattern's classes span (a range counted up to 65,536: sre takes a
    wider one whole)."""
    total = 0
    stack = [parsed]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple) and len(item) == 2 and item[0] is range_op:
            low, high = item[1]
            total += min(high - low + 1, 1 << 16)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif hasattr(item, "data"):  # a SubPattern
            stack.extend(item.data)
    return total
