"""``codeact run --session NAME``: a program's plain-data globals kept for the next run of the same session.

Only plain data survives (numbers, strings, booleans, None, and lists, tuples and dicts of them, as JSON keeps them:
a tuple comes back as a list); functions, classes and tool results that are not plain data start anew. The state
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
    # a keyword (`if`) is an identifier too, and would make the prelude a syntax error
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


def prelude(state: Mapping[str, Any]) -> str:
    """A program that sets ``state``'s globals (Python literals of plain data)."""
    return "\n".join(f"{name} = {value!r}" for name, value in state.items()) or "None"


def assigned(code: str) -> list[str]:
    """The names ``code`` binds at its top level (assignments, loops, with, imports, definitions)."""
    try:
        tree = ast.parse(code)
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


def harvest(code: str, state: Mapping[str, Any] | None, tools: Mapping[str, Tool]) -> str:
    """A program whose value is a dict of the plain-data globals bound by ``code`` or kept in ``state``."""
    names = [n for n in dict.fromkeys([*(state or {}), *assigned(code)]) if not n.startswith("_") and
             not offers(tools, n)]
    lines = ["__codeact_state = {}"]
    for name in names:
        lines += ["try:", f"    __codeact_value = {name}",
                  "    if isinstance(__codeact_value, (int, float, str, bool, list, dict, tuple, type(None))):",
                  f"        __codeact_state[{name!r}] = __codeact_value",
                  "except NameError:", "    pass"]
    lines.append("__codeact_state")
    return "\n".join(lines)


def plain(value: Any) -> dict[str, Any]:
    """The entries of ``value`` that are plain data all the way down (what JSON keeps)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and _plain(v)}


def _plain(value: Any, depth: int = 0) -> bool:
    if depth > 50:
        return False
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):  # JSON writes an int in decimal: past Python's digit limit it raises ValueError
        try:
            str(value)
        except ValueError:
            return False
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


__all__ = ["MAX_STATE_BYTES", "assigned", "harvest", "load", "plain", "prelude", "save", "state_file"]
