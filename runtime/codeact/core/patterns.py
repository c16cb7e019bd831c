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


def compile_uncached(pattern: str, flags: Any = 0) -> re.Pattern[str]:
    """``re.compile`` without ``re``'s module cache, which keeps the last 512 patterns for the life of the process:
    a program's patterns (each up to MAX_PATTERN, compiled to far more) would stay in the warm server."""
    try:
        from re import _compiler as compiler  # type: ignore[attr-defined]  # 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_compile as compiler
    return compiler.compile(pattern, int(flags))  # type: ignore[no-any-return]
