"""Hints that teach: what to write instead when a program hits a gap of the sandbox's Python subset."""
from __future__ import annotations

import re
from typing import Any, Mapping

_HINTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"class inheritance"), "Class inheritance is not supported: use a plain class, a dict or functions; "
     "raise built-in exceptions (ValueError, RuntimeError) instead of defining your own."),
    (re.compile(r"'del' statement"), "`del` is not supported: build a new dict/list without the item "
     "(e.g. {k: v for k, v in d.items() if k != key}) or use d.pop(key)."),
    (re.compile(r"\byield\b"), "Generators (`yield`) are not supported: build and return a list instead."),
    (re.compile(r"is not an iterator"), "Generator expressions become lists here, so next(...) fails on them: "
     "use a list comprehension and take [0], or a for loop with break."),
    (re.compile(r"\basdict\b"), "dataclasses.asdict is missing: build the dict yourself, e.g. {'a': p.a, 'b': p.b}."),
    (re.compile(r"\b(?:staticmethod|classmethod)\b|@property|'property'"), "@staticmethod, @classmethod and @property are not "
     "supported: use module-level functions or plain attributes."),
    (re.compile(r"No module named '(enum|string|textwrap|subprocess|abc)'"), "That module is not available in "
     "the sandbox. Available: json, re, math, datetime, collections, itertools, functools, typing, pathlib, "
     "os.path, random, time, hashlib, base64, copy, csv, sys. Use the bash tool (if enabled) for processes."),
    (re.compile(r"No module named"), "Only a small standard library is available (json, re, math, datetime, "
     "collections, itertools, functools, ...); work through the tools for files, processes and the network."),
    (re.compile(r"VERBOSE"), "re.VERBOSE is not supported: write the pattern on one line."),
    (re.compile(r"positional argument|keyword arguments only"), "Tools take keyword arguments only, e.g. view(path='README.md')."),
    (re.compile(r"no direct file, environment or network access"), "open(), os.environ and similar are blocked: "
     "read with view(path=...), list with glob(pattern=...), write with create()/edit()."),
]


def hint_for(kind: str, message: str, tools: Mapping[str, Any] | None = None) -> str | None:
    """A one-line suggestion for an error, or ``None`` when there is nothing useful to add."""
    text = f"{kind}: {message}"
    for pattern, hint in _HINTS:
        if pattern.search(text):
            return hint
    name = re.search(r"[Nn]ame [`']([\w.]+)[`'] (?:is not defined|used when not defined)", message)
    if name and tools:
        import difflib

        close = difflib.get_close_matches(name[1], list(tools), n=1)
        available = ", ".join(sorted(tools)[:20])
        return (f"Did you mean {close[0]}()? " if close else "") + f"Available tools: {available}."
    return None
