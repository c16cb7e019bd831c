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
from collections.abc import Callable, Iterator, Mapping
from keyword import iskeyword
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import UsageError
from ..privatedir import ensure_private_dir
from ..pyast import parse
from .limits import DECIMAL_BITS, decimal_fits, within
from .tool import Tool
from .toolset import offers


@functools.lru_cache(maxsize=1)
def _name_rule() -> re.Pattern[str]:
    """The session names the hooks let through (the spec is imported only by runs that name a session: every run
    imports this module for :func:`assigned`)."""
    from ..enforcement.spec import SESSION_NAME

    return re.compile(SESSION_NAME)

MAX_STATE_BYTES = 8 << 20  # a session's state is data for the next program, not a database
RESTORE_BYTES_PER_VALUE = 256  # of the run's memory limit, for each value of the state it restores (restorable)


def state_file(workspace: Path, name: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where session ``name`` of ``workspace`` is kept; :class:`UsageError` for a name that is not a plain word."""
    if not _name_rule().fullmatch(name):
        raise UsageError(f"--session {name!r}: use letters, digits, '.', '_' or '-' (at most 64, first a letter or "
                         "digit)")
    import hashlib

    key = hashlib.sha256(str(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return paths.xdg_dir("state", environ) / "codeact" / "sessions" / key / f"{name}.json"


def restorable(memory: int | None) -> int | None:
    """How many values (each list, dict, key and item, as :func:`_walk` counts them) a run with ``memory`` bytes
    of sandbox memory restores (``None``: no bound). Restoring takes the host some 190 to 300 bytes a value
    (``json.loads``, then each value bound as the sandbox's inputs, before the run's limits hold): 8 MiB of JSON
    can be 4 million empty lists, a GB in the host."""
    return None if memory is None else max(1, memory // RESTORE_BYTES_PER_VALUE)


def load(workspace: Path, name: str, environ: Mapping[str, str] | None = None, *, memory: int | None = None,
         on_note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The globals session ``name`` kept (``{}`` for a new session, an unreadable file or a sessions folder that
    is not private), those past :func:`restorable` for ``memory`` left out: each is named to ``on_note`` (the
    values are counted in the text before any is read: JSON shares nothing, so a few KB in the sandbox can be
    millions of values)."""
    path = state_file(workspace, name, environ)
    try:  # a state another user could have written is no state of this user's (saving it says why)
        ensure_private_dir(path.parent.parent, what="sessions folder", create=False)
        ensure_private_dir(path.parent, what="sessions folder", create=False)
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}
    left = restorable(memory)
    data: dict[str, Any] = {}
    lost: list[str] = []
    try:
        for key, piece in _entries(text):
            count = _count_text(piece)
            if left is not None and count > left:
                lost.append(key if key is not None else "all of it (saved by an earlier version)")
                continue
            value = json.loads(piece)
            if key is None:  # an earlier version's file: one object, counted whole
                if not isinstance(value, dict):
                    return {}
                data.update(value)
            else:
                data[key] = value
            left = None if left is None else left - count
    except (ValueError, RecursionError):  # RecursionError: a file nested deeper than json.loads goes
        return {}
    if lost and on_note is not None:
        on_note(f"session {name!r}: not restored (a run of {(memory or 0) >> 20} MiB restores at most "
                f"{restorable(memory):,} values: lists, dicts, keys and items, as JSON writes them out): "
                f"{', '.join(lost)}; they are no longer kept. Raise the run's memory (--memory, CODEACT_MEMORY) to "
                "restore them")
    # a keyword (`if`) is an identifier too, but no program can name it
    return {k: v for k, v in data.items() if isinstance(k, str) and k.isidentifier() and not iskeyword(k)}


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


def _entries(text: str) -> Iterator[tuple[str | None, str]]:
    """Each global of a state's text and its value's JSON text, as :func:`save` writes them (one a line); an
    earlier version's one-line object as ``(None, text)``. ValueError for anything else."""
    if not text.startswith("{\n"):
        yield None, text
        return
    decoder = json.JSONDecoder()
    for line in text.split("\n")[1:]:  # JSON writes no newline in a string (U+2028 stays: not split here)
        if line in ("}", ""):
            continue
        key, end = decoder.raw_decode(line)
        if not isinstance(key, str) or line[end:end + 2] != ": ":
            raise ValueError("not a state")
        yield key, line[end + 2:].removesuffix(",")


def _count_text(text: str) -> int:
    """The values of JSON ``text`` as :func:`_walk` counts them, without reading it: its strings made one
    character, then one for the whole, one for each ``,`` and ``:``, one for each list or dict that is not empty."""
    bare = _STRING.sub("0", text)
    return (1 + bare.count(",") + bare.count(":") + bare.count("[") + bare.count("{") - bare.count("[]")
            - bare.count("{}"))


def save(workspace: Path, name: str, values: Mapping[str, Any], environ: Mapping[str, str] | None = None, *,
         memory: int | None = None) -> str:
    """Keep ``values`` as session ``name``; returns a note naming what was too large to keep, or why nothing was
    kept ("" when all was). At most :data:`MAX_STATE_BYTES` of JSON, and (``memory``: the run's limit) what
    :func:`restorable` says a run of that memory restores. The state lies in private folders
    (:func:`codeact.privatedir.ensure_private_dir`): a sessions folder that is a link or another user's keeps
    nothing."""
    path = state_file(workspace, name, environ)
    # name by name while they fit: each value counted first (once per object: a shared list is walked once) and
    # encoded only when it may fit, at most twice the limit encoded in all (400 names of one shared 20 MB list
    # must not mean 400 encodings); never encoded whole (it may be 100 GB as JSON)
    lines: list[str] = []
    lost: list[str] = []
    left, work, values_left = MAX_STATE_BYTES, 2 * MAX_STATE_BYTES, restorable(memory)
    memo: dict[int, _Info] = {}
    for key, value in values.items():
        budget = left if values_left is None else min(left, values_left)
        walked = _walk(value, 0, memo, set(), budget) if work > 0 else None
        if not isinstance(walked, tuple):
            lost.append(key)
            continue
        piece, fits, is_json = within(value, min(left, work))
        work -= len(piece)
        line = json.dumps(key, ensure_ascii=False) + ": " + piece
        size = len(line.encode()) + 2
        if fits and is_json and size <= left:
            lines.append(line)
            left -= size
            values_left = None if values_left is None else values_left - walked[2]
        else:
            lost.append(key)
    text = "{\n" + ",\n".join(lines) + "\n}\n"
    note = ""
    if lost:
        past = "" if memory is None else f"past the {restorable(memory):,} values a run of {memory >> 20} MiB " \
                                         "restores, or "
        note = f"session {name!r}: not kept ({past}over {MAX_STATE_BYTES >> 20} MiB): " + ", ".join(lost)
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
    with a key that is not a string, NaN, lists nested deeper than :data:`MAX_DEPTH`, more values than
    :data:`MAX_STATE_BYTES` (each is a byte of JSON at least) ... The value comes from the sandbox with its sharing
    (``[[a] * 1000] * 1000`` is two lists): each object is walked once (:func:`_walk`)."""
    if not isinstance(value, dict):
        return {}
    kept: dict[str, Any] = {}
    lost: list[str] = []
    listed: list[str] = []  # kept, with a tuple in them that comes back a list
    memo: dict[int, _Info] = {}
    for key, item in value.items():
        if key == OTHERS:
            lost += [f"{entry[0]} (a {entry[1]})" for entry in item if isinstance(entry, list) and len(entry) == 2
                     and all(isinstance(part, str) for part in entry) and entry[1] not in _CODE_TYPES] \
                if isinstance(item, list) else []
            continue
        if not isinstance(key, str):
            continue
        walked = _walk(item, 0, memo, set(), MAX_STATE_BYTES)
        if isinstance(walked, tuple):
            kept[key] = item
            if walked[1]:
                listed.append(key)
        else:
            lost.append(f"{key} ({walked})")
    if listed:
        from . import notices

        notices.note("--session", "kept as lists for the next run (JSON has no tuples; a session keeps what JSON "
                     f"keeps): {', '.join(listed)}; compare with list(...) or make them tuples again")
    if lost:
        from . import notices

        notices.note("--session", "not kept for the next run (only plain data JSON keeps exactly): "
                     + ", ".join(lost) + f"; keep lists, str-keyed dicts, finite numbers, at most {MAX_DEPTH} levels "
                     f"deep and {MAX_STATE_BYTES >> 20} MiB as JSON (a set as a list, NaN as None)")
    return kept


# what the sandbox's conversion writes for a list or dict met again inside itself (as repr shows it)
_HELD_ITSELF = frozenset(("[...]", "{...}"))
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _flat(items: Any, depth: int, count: int, budget: int) -> _Info | str | None:
    """:func:`_walk` of a container whose ``items`` are all numbers, strings, booleans or None (``count``: what the
    container counts before them), with their types looked at in C; ``None`` for any other container."""
    kinds = set(map(type, items))
    if not kinds <= _SCALARS:
        return None
    if not items:
        return 0, False, count
    if depth + 1 > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    if str in kinds and not _HELD_ITSELF.isdisjoint(items):
        return "holds itself, or the text '[...]' or '{...}', which the sandbox gives for it"
    if float in kinds and not all(map(math.isfinite, [x for x in items if type(x) is float])):
        return "NaN or infinity"
    count += len(items)
    if count > budget:  # counted first: nothing below looks at more items than the budget
        return f"over {MAX_STATE_BYTES >> 20} MiB as JSON"
    # each distinct int once, told by comparison (writing 4,299 digits is ~240 us: [10**4299] * 100_000 was 24 s)
    wide = {id(x): x for x in items if type(x) is int and x.bit_length() > DECIMAL_BITS} if int in kinds else {}
    if not all(map(decimal_fits, wide.values())):
        return "an int too long to write in decimal"
    return 1, False, count


_Info = tuple[int, bool, int]  # a plain value's height (levels below it), whether it holds a tuple, its values


def _leaf(value: Any) -> _Info | str | None:
    """:func:`_walk` of a string, None, a boolean or a float, why anything but an int, list, tuple or dict is not
    plain; ``None`` for those."""
    if isinstance(value, str) and value in _HELD_ITSELF:
        return "holds itself, or the text '[...]' or '{...}', which the sandbox gives for it"
    if value is None or isinstance(value, (bool, str)):
        return 0, False, 1
    if isinstance(value, float):
        return (0, False, 1) if math.isfinite(value) else "NaN or infinity"
    if not isinstance(value, (int, list, tuple, dict)):
        return f"holds a {type(value).__name__}"
    return None


def _walk(value: Any, depth: int, memo: dict[int, _Info], busy: set[int], budget: int) -> _Info | str:
    """``value`` (at ``depth``) as plain data JSON keeps exactly: its :data:`_Info`, or why it is not (more than
    ``budget`` values, as JSON writes them out: each list, dict, key and item). Each list, dict and tuple is walked
    once (``memo``, by id: ``value`` holds them all meanwhile), so a value shared a million times costs one visit,
    and the work is bounded by the objects there are, however many times JSON would repeat them."""
    if depth > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    leaf = _leaf(value)
    if leaf is not None:
        return leaf
    known = memo.get(id(value))
    if known is not None:
        return f"nested deeper than {MAX_DEPTH} levels" if depth + known[0] > MAX_DEPTH else known
    if isinstance(value, int):  # JSON writes an int in decimal: past Python's digit limit it raises ValueError
        if not decimal_fits(value):
            return "an int too long to write in decimal"
        memo[id(value)] = (0, False, 1)
        return memo[id(value)]
    if id(value) in busy:  # it holds itself: as deep as JSON can go
        return f"nested deeper than {MAX_DEPTH} levels"
    items: Any = value
    height, holds_tuple, count = 0, isinstance(value, tuple), 1
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return "a dict key that is not a string"
        items, count = value.values(), 1 + len(value)
    flat = _flat(items if isinstance(items, (list, tuple)) else list(items), depth, count, budget)
    if flat is not None:  # numbers and strings only, looked at in C: a million ints in a fraction of a second
        if isinstance(flat, tuple):
            flat = (flat[0], holds_tuple, flat[2])
            memo[id(value)] = flat
        return flat
    busy.add(id(value))
    for item in items:
        got = _walk(item, depth + 1, memo, busy, budget)
        if isinstance(got, str):
            return got
        height, holds_tuple, count = max(height, got[0] + 1), holds_tuple or got[1], count + got[2]
        if count > budget:
            return f"over {MAX_STATE_BYTES >> 20} MiB as JSON"
    busy.discard(id(value))
    memo[id(value)] = (height, holds_tuple, count)
    return memo[id(value)]


__all__ = ["MAX_DEPTH", "MAX_STATE_BYTES", "OTHERS", "assigned", "harvest", "load", "plain", "restorable", "save",
           "state_file"]
