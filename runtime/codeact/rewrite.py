"""A host-side source rewrite that lets the sandbox take a built-in's bound method as a value.

Monty cannot hold ``d.get``, ``s.upper`` or ``counter.get`` as a value (only call them on the spot), so
``max(d, key=d.get)`` fails there. :func:`bind_methods` rewrites each such attribute load, on its own line, into a
lambda that binds the receiver at the moment of reference::

    d.get  ->  (lambda _r: (lambda *_a, **_k: _r.get(*_a, **_k)) if type(_r).__name__ in (...) else _r.get)(d)

Only attribute loads whose name is a method of a built-in type are touched, and only when the receiver turns out to
be a built-in at run time: a dataclass field named ``get`` keeps its value. Line numbers never change, so errors
report the program's own lines. ``str.lower`` (a method taken from the type) becomes ``lambda _s, ...: _s.lower()``.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# Built-in types whose bound methods the sandbox cannot take as values, by the name ``type(x).__name__`` gives there.
_TYPE_NAMES = ("str", "bytes", "list", "dict", "set", "frozenset", "tuple", "int", "float", "bool", "Counter",
               "defaultdict", "deque", "Match", "Pattern")
_TYPES = ("str", "bytes", "list", "dict", "set", "frozenset", "tuple", "int", "float")
# Attribute names followed by something other than "(": a cheap test before the host's ``ast`` is imported.
_CANDIDATE = re.compile(r"\.\s*([a-z_][a-z0-9_]*)\b(?!\s*\()")


@lru_cache(maxsize=1)
def method_names() -> frozenset[str]:
    """Public method names of the built-in types whose bound methods the rewrite wraps."""
    import collections

    kinds: list[type] = [str, bytes, list, dict, set, frozenset, tuple, int, float, collections.Counter,
                         collections.defaultdict, collections.deque, type(re.compile("")),
                         type(re.match("", ""))]
    return frozenset(name for kind in kinds for name in dir(kind)
                     if not name.startswith("_") and callable(getattr(kind, name)))


def bind_methods(code: str) -> str:
    """``code`` with every built-in bound method taken as a value wrapped so the sandbox can hold it.

    Returns ``code`` unchanged when there is nothing to wrap or the host's Python cannot parse it (a newer syntax
    the sandbox may still accept).
    """
    candidates = {m[1] for m in _CANDIDATE.finditer(code)}
    if not candidates:
        return code  # most programs: nothing to look up
    names = method_names()
    if candidates.isdisjoint(names):
        return code  # no ast import, no parse
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in (*n.posonlyargs, *n.args, *n.kwonlyargs, n.vararg, n.kwarg) if a is not None}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    if "type" not in bound:
        guard = f"type(_r).__name__ in {_TYPE_NAMES!r}"
    elif "isinstance" not in bound and not bound.intersection(_TYPES):
        guard = f"isinstance(_r, ({', '.join(_TYPES)}))"
    else:
        return code
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    starts = _line_starts(code)
    edits: list[tuple[int, int, int, str]] = []  # (start, end, depth, text) in byte offsets
    for depth, node in _attributes(tree):
        if node.attr not in names or not isinstance(node.ctx, ast.Load):
            continue
        receiver = node.value
        if (isinstance(receiver, ast.Name) and receiver.id in _TYPES and receiver.id not in bound):
            # str.lower: a method taken from the type, called or not
            at = _offset(starts, node.lineno, node.col_offset)
            end = _offset(starts, node.end_lineno, node.end_col_offset)
            edits.append((at, end, depth, f"(lambda _s, *_a, **_k: _s.{node.attr}(*_a, **_k))"))
            continue
        if id(node) in called:
            continue
        tail = _offset(starts, receiver.end_lineno, receiver.end_col_offset)
        end = _offset(starts, node.end_lineno, node.end_col_offset)
        if receiver.end_lineno != node.end_lineno:
            continue  # `x\n.get` across lines: rewriting it would move a line
        at = _offset(starts, receiver.lineno, receiver.col_offset)
        prefix = (f"(lambda _r: (lambda *_a, **_k: _r.{node.attr}(*_a, **_k)) if {guard} "
                  f"else _r.{node.attr})(")
        edits.append((at, at, depth, prefix))
        edits.append((tail, end, depth, ")"))
    if not edits:
        return code
    data = code.encode("utf-8")
    # from the end; at one offset the deeper (inner) edit first, so the outer prefix lands left of it
    for start, end, _depth, text in sorted(edits, key=lambda e: (e[0], e[1], e[2]), reverse=True):
        data = data[:start] + text.encode("utf-8") + data[end:]
    return data.decode("utf-8")


def _attributes(tree: Any) -> list[tuple[int, Any]]:
    """Every ``ast.Attribute`` with its nesting depth among attributes (outer first)."""
    import ast

    found: list[tuple[int, Any]] = []
    stack: list[tuple[Any, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.Attribute):
            found.append((depth, node))
            depth += 1
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return found


def _line_starts(code: str) -> list[int]:
    """Byte offset of the start of each line (1-based index: ``starts[lineno]``), as ``ast`` counts lines."""
    starts = [0, 0]
    total = 0
    for line in code.encode("utf-8").splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def _offset(starts: list[int], lineno: int | None, col: int | None) -> int:
    return starts[lineno or 1] + (col or 0)
