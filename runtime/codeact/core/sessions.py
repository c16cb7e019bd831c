"""``codeact run --session NAME``: a program's plain-data globals kept for the next run of the same session.

Only plain data survives (numbers, strings, booleans, None, and lists, tuples and dicts of them, as JSON keeps them:
a tuple comes back as a list); functions, classes and modules start anew, and any other global not kept (a set, NaN,
a dict with an int key, nesting past :data:`MAX_DEPTH`, over the size budget) is named in a note of the run. The state
is a JSON file per workspace and name under ``$XDG_STATE_HOME/codeact/sessions`` (0600), written atomically, so a
session also survives the warm server's restart and works without it.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import ast
import functools
import json
import math
import os
import re
from collections.abc import Mapping
from keyword import iskeyword
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import UsageError
from ..privatedir import ensure_private_dir
from ..pyast import parse
from .limits import within
from .tool import Tool
from .toolset import offers


@functools.lru_cache(maxsize=1)
def _name_rule() -> re.Pattern[str]:
    """The session names the hooks let through (the spec is imported only by runs that name a session: every run
    imports this module for :func:`assigned`)."""
    from ..enforcement.spec import SESSION_NAME

    return re.compile(SESSION_NAME)

MAX_STATE_BYTES = 8 << 20  # a session's state is data for the next program, not a database


def state_file(workspace: Path, name: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where session ``name`` of ``workspace`` is kept; :class:`UsageError` for a name that is not a plain word."""
    if not _name_rule().fullmatch(name):
        raise UsageError(f"--session {name!r}: use letters, digits, '.', '_' or '-' (at most 64, first a letter or "
                         "digit)")
    import hashlib

    key = hashlib.sha256(str(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return paths.xdg_dir("state", environ) / "codeact" / "sessions" / key / f"{name}.json"


def load(workspace: Path, name: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The globals session ``name`` kept (``{}`` for a new session, an unreadable file or a sessions folder that
    is not private)."""
    path = state_file(workspace, name, environ)
    try:  # a state another user could have written is no state of this user's (saving it says why)
        ensure_private_dir(path.parent.parent, what="sessions folder", create=False)
        ensure_private_dir(path.parent, what="sessions folder", create=False)
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: a file nested deeper than json.loads goes
        return {}
    # a keyword (`if`) is an identifier too, but no program can name it
    return {k: v for k, v in data.items() if isinstance(k, str) and k.isidentifier() and not iskeyword(k)} \
        if isinstance(data, dict) else {}


def save(workspace: Path, name: str, values: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str:
    """Keep ``values`` as session ``name``; returns a note naming what was too large to keep, or why nothing was
    kept ("" when all was). The state lies in private folders (:func:`codeact.privatedir.ensure_private_dir`):
    a sessions folder that is a link or another user's keeps nothing."""
    path = state_file(workspace, name, environ)
    text, whole, _ = within(dict(values), MAX_STATE_BYTES)  # never encoded whole: it may be 100 GB as JSON
    note = ""
    if not whole or len(text.encode()) > MAX_STATE_BYTES:
        # name by name while they fit, encoding at most twice the limit in all (400 names of one shared 20 MB list
        # must not mean 400 encodings)
        kept, left, work = {}, MAX_STATE_BYTES, 2 * MAX_STATE_BYTES
        for key, value in values.items():
            if work <= 0:
                break
            piece, fits, _ = within(value, min(left, work))
            work -= len(piece)
            size = len(piece.encode()) + len(key) + 6
            if fits and size <= left:
                kept[key] = value
                left -= size
        text = json.dumps(kept, ensure_ascii=False)
        note = f"session {name!r}: not kept (over {MAX_STATE_BYTES >> 20} MiB): " + ", ".join(
            k for k in values if k not in kept)
    try:
        ensure_private_dir(path.parent.parent, what="sessions folder", parents=True)
        ensure_private_dir(path.parent, what="sessions folder")
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(partial, path)
    except OSError as exc:  # the run's output stands; the note says the state is not kept
        return f"session {name!r}: not kept: {exc}"
    return note


def assigned(code: str | ast.Module) -> list[str]:
    """The names ``code`` (a program, or its parsed tree: a caller that has one does not parse it again) binds at
    its top level (assignments, loops, with, imports, definitions)."""
    if isinstance(code, ast.Module):
        tree = code
    else:
        try:
            tree = parse(code)
        except SyntaxError:
            return []
    names: dict[str, None] = {}
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
              ast.DictComp, ast.GeneratorExp)
    pending: list[ast.AST] = list(reversed(tree.body))  # a stack, not recursion: a program may nest thousands deep
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = None
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names[node.id] = None
        elif isinstance(node, ast.alias):
            names[(node.asname or node.name).split(".")[0]] = None
        if not isinstance(node, scopes):
            pending.extend(reversed(list(ast.iter_child_nodes(node))))
    return list(names)


OTHERS = " others"  # the harvest's entry naming the globals that are not plain data (not an identifier: no global's)
# what a program defines rather than computes: these start anew each run, as the docs say, with no note
_CODE_TYPES = frozenset(("function", "builtin_function_or_method", "method", "module", "type"))
MAX_DEPTH = 50  # lists and dicts nested deeper are not kept: the next run binds them, converting recursively


def harvest(code: str, state: Mapping[str, Any] | None, tools: Mapping[str, Tool]) -> str:
    """A program whose value is a dict of the plain-data globals bound by ``code`` or kept in ``state``, and under
    :data:`OTHERS` the ``[name, type name]`` of each global that is not."""
    names = [n for n in dict.fromkeys([*(state or {}), *assigned(code)]) if not n.startswith("_") and
             not offers(tools, n)]
    lines = ["__codeact_state = {}", "__codeact_others = []"]
    for name in names:
        lines += ["try:", f"    __codeact_value = {name}",
                  "    if isinstance(__codeact_value, (int, float, str, bool, list, dict, tuple, type(None))):",
                  f"        __codeact_state[{name!r}] = __codeact_value",
                  "    else:",
                  f"        __codeact_others.append([{name!r}, type(__codeact_value).__name__])",
                  "except NameError:", "    pass"]
    lines += [f"__codeact_state[{OTHERS!r}] = __codeact_others", "__codeact_state"]
    return "\n".join(lines)


def plain(value: Any) -> dict[str, Any]:
    """The entries of ``value`` (a :func:`harvest`) that are plain data all the way down, as JSON keeps them exactly.
    Each global left out is named in a note of the run (the next run would get NameError for it): a set, a dict
    with a key that is not a string, NaN, lists nested deeper than :data:`MAX_DEPTH` ..."""
    if not isinstance(value, dict):
        return {}
    kept: dict[str, Any] = {}
    lost: list[str] = []
    listed: list[str] = []  # kept, with a tuple in them that comes back a list
    for key, item in value.items():
        if key == OTHERS:
            lost += [f"{entry[0]} (a {entry[1]})" for entry in item if isinstance(entry, list) and len(entry) == 2
                     and all(isinstance(part, str) for part in entry) and entry[1] not in _CODE_TYPES] \
                if isinstance(item, list) else []
            continue
        if not isinstance(key, str):
            continue
        why = _not_plain(item)
        if why is None:
            kept[key] = item
            if _holds_tuple(item):
                listed.append(key)
        else:
            lost.append(f"{key} ({why})")
    if listed:
        from . import notices

        notices.note("--session", "kept as lists for the next run (JSON has no tuples; a session keeps what JSON "
                     f"keeps): {', '.join(listed)}; compare with list(...) or make them tuples again")
    if lost:
        from . import notices

        notices.note("--session", "not kept for the next run (only plain data JSON keeps exactly): "
                     + ", ".join(lost) + f"; keep lists, str-keyed dicts, finite numbers, at most {MAX_DEPTH} levels "
                     "deep (a set as a list, NaN as None)")
    return kept


def _holds_tuple(value: Any) -> bool:
    """Whether plain ``value`` holds a tuple (which JSON keeps as a list)."""
    if isinstance(value, tuple):
        return True
    if isinstance(value, list):
        return any(_holds_tuple(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_tuple(item) for item in value.values())
    return False


def _not_plain(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` is not plain data JSON keeps exactly, or None when it is."""
    if depth > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):  # JSON writes an int in decimal: past Python's digit limit it raises ValueError
        try:
            str(value)
        except ValueError:
            return "an int too long to write in decimal"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "NaN or infinity"
    if isinstance(value, (list, tuple)):
        items: Any = value
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return "a dict key that is not a string"
        items = value.values()
    else:
        return f"holds a {type(value).__name__}"
    for item in items:
        why = _not_plain(item, depth + 1)
        if why is not None:
            return why
    return None


__all__ = ["MAX_DEPTH", "MAX_STATE_BYTES", "OTHERS", "assigned", "harvest", "load", "plain", "save", "state_file"]
