"""A host-side source rewrite that lets the sandbox run idioms it cannot run as written, line for line.

Monty cannot hold ``d.get``, ``s.upper`` or ``counter.get`` as a value (only call them on the spot), so
``max(d, key=d.get)`` fails there. :func:`bind_methods` rewrites each such attribute load, on its own line, into a
lambda that binds the receiver at the moment of reference::

    d.get  ->  (lambda _r: (lambda *_a, **_k: _r.get(*_a, **_k)) if type(_r).__name__ in (...) else _r.get)(d)

Only attribute loads whose name is a method of a built-in type are touched, and only when the receiver turns out to
be a built-in at run time: a dataclass field named ``get`` keeps its value. Line numbers never change, so errors
report the program's own lines. ``str.lower`` (a method taken from the type) becomes ``lambda _s, ...: _s.lower()``.

``hasattr(x, "keys")``, ``getattr(s, "upper", None)`` and ``callable(f)`` answer False/None on built-in values in
the sandbox; with a literal name, :func:`_builtin_attr_edits` answers them from CPython's own attribute lists of the
built-in types, by the value's type at run time (anything else goes to the sandbox's ``hasattr`` as before).

Nor can the sandbox call a tool from a function that a built-in calls back (``sorted(ps, key=lambda p:
len(view(path=p)))``). Where ``sorted``, ``min``, ``max``, ``map``, ``filter`` or ``list.sort`` get the program's own
function (a lambda or a ``def``), the built-in's name is replaced by a stand-in that calls the function from a
comprehension, once per item and in order, with the same result.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# Built-in types whose bound methods the sandbox cannot take as values, by the name ``type(x).__name__`` gives there.
_TYPE_NAMES = ("str", "bytes", "list", "dict", "set", "frozenset", "tuple", "int", "float", "bool", "Counter",
               "defaultdict", "deque", "Match", "Pattern")
_TYPES = ("str", "bytes", "list", "dict", "set", "frozenset", "tuple", "int", "float")
_CONSTRUCTORS = frozenset({"fromkeys", "maketrans", "fromhex", "from_bytes"})  # class and static methods
_SET_MANY = frozenset({"union", "intersection", "difference", "symmetric_difference"})
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


_ATTR_CALL = re.compile(r"\b(?:hasattr|getattr|callable)\s*\(")


@lru_cache(maxsize=1)
def _builtin_types() -> tuple[tuple[str, type], ...]:
    """The built-in types as the sandbox names them (``type(x).__name__``), with CPython's type of that name."""
    import collections

    kinds: list[type] = [str, bytes, list, dict, set, frozenset, tuple, int, float, bool, collections.Counter,
                         collections.defaultdict, collections.deque]
    named = [(k.__name__, k) for k in kinds]
    return (*named, ("Pattern", type(re.compile(""))), ("Match", type(re.match("", ""))))


@lru_cache(maxsize=1)
def _attribute_table() -> dict[str, tuple[str, ...]]:
    """Every attribute name of each built-in type, by the sandbox's name of the type."""
    return {name: tuple(sorted(dir(kind))) for name, kind in _builtin_types()}


def types_having(attr: str) -> tuple[str, ...]:
    """The sandbox names of the built-in types that have ``attr`` in CPython."""
    return tuple(name for name, kind in _builtin_types() if hasattr(kind, attr))


def rewrite(code: str) -> str:
    """``code`` rewritten, line for line (see :func:`rewrite_for_sandbox`, which also gives the prelude)."""
    return rewrite_for_sandbox(code)[0]


def rewrite_for_sandbox(code: str) -> tuple[str, str, list[tuple[int, str]]]:
    """``code`` rewritten, line for line, so that idioms the sandbox cannot run as written run there, and the
    prelude source the rewritten code needs ('' when none), and notes (line, text) on differences no rewrite
    closes (codeact.core.prelude_edits.set_order_notes): built-in bound methods taken as values
    (:func:`bind_methods`), functions that ``sorted``, ``min``, ``max``, ``map`` or ``filter`` call back, which may
    then call tools (:func:`_callback_edits`), the sandbox's gaps the prelude covers
    (codeact.core.prelude_edits).

    Returns ``code`` unchanged when there is nothing to do or the host's Python cannot parse it (a newer syntax
    the sandbox may still accept).
    """
    candidates = {m[1] for m in _CANDIDATE.finditer(code)}
    callbacks = (_CALLBACK.search(code) is not None or _ATTR_CALL.search(code) is not None
                 or (_PATHS.search(code) is not None and _USES_PATHLIB.search(code) is not None)
                 or (_FILE_ITERATION.search(code) is not None and _OPENS.search(code) is not None)
                 or (_OPENS.search(code) is not None and "newline" in code))
    gaps = _SETS.search(code) is not None or _PRELUDE_GAPS.search(code) is not None
    if not candidates and not callbacks and not gaps:
        return code, "", []  # most programs: nothing to look up
    if not callbacks and not gaps and candidates.isdisjoint(method_names()):
        return code, "", []  # no ast import, no parse
    import ast

    from ..pyast import parse
    from . import prelude, prelude_edits

    try:
        tree = parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return code, "", []
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in (*n.posonlyargs, *n.args, *n.kwonlyargs, n.vararg, n.kwarg) if a is not None}
    defs = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    bound |= defs | {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    starts = _line_starts(code)
    source = prelude_edits.Source(tree, bound, lambda line, col: _offset(starts, line, col), code)
    edits, ordered = prelude_edits.prelude_edits(source)
    notes = prelude_edits.set_order_notes(source)
    compares = prelude_edits.compares(source, ordered)
    edits += (_method_edits(tree, bound, starts) + _callback_edits(tree, bound, defs, starts, compares)
              + _builtin_attr_edits(tree, bound, starts) + _sandbox_gap_edits(tree, bound, starts, compares))
    if not edits:
        return code, "", notes
    new = _apply(code.encode("utf-8"), edits).decode("utf-8")
    names = prelude.names_in(new)
    return new, prelude.source_for(names, ordered) if names else "", notes


bind_methods = rewrite  # the name the first version had


def _apply(data: bytes, edits: list[tuple[int, int, int, str]]) -> bytes:
    """``data`` with each edit's byte range ``start:end`` replaced by its text, built once from the pieces in order
    (a copy of the whole program per edit is quadratic in a long program). Edits never overlap; at one offset an
    insertion comes before a replacement, and the outer (shallower) edit left of the inner one."""
    pieces: list[bytes] = []
    done = 0
    for start, end, _depth, text in sorted(edits, key=lambda e: (e[0], e[1], e[2])):
        if start < done:
            raise ValueError(f"overlapping rewrite edits at byte {start}")
        pieces += (data[done:start], text.encode("utf-8"))
        done = end
    pieces.append(data[done:])
    return b"".join(pieces)


def _method_edits(tree: Any, bound: set[str], starts: list[int]) -> list[tuple[int, int, int, str]]:
    """Edits that wrap each built-in bound method taken as a value: ``d.get`` -> a lambda bound to ``d``."""
    import ast

    names = method_names()
    if "type" not in bound:
        guard = f"type(_r).__name__ in {_TYPE_NAMES!r}"
    elif "isinstance" not in bound and not bound.intersection(_TYPES):
        guard = f"isinstance(_r, ({', '.join(_TYPES)}))"
    else:
        return []
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    edits: list[tuple[int, int, int, str]] = []  # (start, end, depth, text) in byte offsets
    for depth, node in _attributes(tree):
        if node.attr not in names or not isinstance(node.ctx, ast.Load):
            continue
        receiver = node.value
        if (isinstance(receiver, ast.Name) and receiver.id in _TYPES and receiver.id not in bound):
            if node.attr in _CONSTRUCTORS or (receiver.id in ("set", "frozenset") and node.attr in _SET_MANY):
                continue  # dict.fromkeys(...), str.maketrans(...): from the type; set.union(...): the prelude's
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
    return edits


# The sandbox cannot call a tool from a function that a built-in calls back. These stand-ins call the function
# from a comprehension instead, once per item and in order as the built-in does, with the same results (stable
# order, the first of equal maxima). Only the built-in's name is replaced: the arguments stay as written.
_CALLBACK = re.compile(r"\b(?:map|filter|next)\s*\(|\bkey\s*=|\.relative_to\s*\(")
# cheap tests before a parse: paths exist only where pathlib is used, files only where open() is called
_PATHS = re.compile(r"\bsorted\s*\(")
_USES_PATHLIB = re.compile(r"\bpathlib\b|\bPath\b")
_FILE_ITERATION = re.compile(r"\b(?:enumerate|zip|list|tuple)\s*\(")
_OPENS = re.compile(r"\bopen\s*\(")
_SETS = re.compile(r"\bset\s*\(|\bfrozenset\s*\(|\{[^{}:]*\bfor\b[^{}:]*\}")  # sets built at run time
# a cheap test for the gaps the prelude covers (codeact.core.prelude_edits) before a parse
_PRELUDE_GAPS = re.compile(r"\bre\b|read_text|\bopen\s*\(|maketrans|\.translate\b|heapq|\bio\b|ChainMap|cmp_to_key|"
                           r"total_ordering|TypedDict|dataclass|__(?:len|lt|gt|le|ge)__|\bvars\s*\(|configparser|Template|"
                           r"urlparse|urlsplit|\.(?:union|intersection|difference|symmetric_difference)\s*\(|"
                           r"\{[^{}]*\b(?:True|False)\b|\{\s*-?[\d.]+\s*,")
_STAND_INS = {name: f"codeact_{name}" for name in ("sorted", "min", "max", "map", "filter")}  # codeact.core.prelude


def _callback_edits(tree: Any, bound: set[str], defs: set[str], starts: list[int],
                    compares: bool = False) -> list[tuple[int, int, int, str]]:
    """Edits that replace ``sorted``/``min``/``max``/``map``/``filter`` by a stand-in where the function they
    would call back is the program's own (a lambda or a ``def``), which may call tools."""
    import ast

    lambdas = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda)
               for t in n.targets if isinstance(t, ast.Name)}

    def own(node: Any) -> bool:
        """The program's own function, or an OS function (``os.path.getsize``): either may suspend."""
        if isinstance(node, ast.Attribute):
            root: Any = node
            while isinstance(root, ast.Attribute):
                root = root.value
            return isinstance(root, ast.Name) and root.id in ("os", "Path", "pathlib") and root.id not in bound
        return isinstance(node, ast.Lambda) or (isinstance(node, ast.Name) and node.id in defs | lambdas)

    edits: list[tuple[int, int, int, str]] = []
    for node in ast.walk(tree):
        if compares and isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and getattr(
                node.func, "id", getattr(node.func, "attr", "")) in ("sorted", "min", "max", "sort"):
            continue  # the prelude's comparisons take these (codeact.core.prelude_edits)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sort"
                and not node.args and node.keywords and "type" not in bound and "sorted" not in bound
                and {k.arg for k in node.keywords} <= {"key", "reverse"}
                and own(next((k.value for k in node.keywords if k.arg == "key"), None))):
            receiver = node.func.value  # xs.sort(key=f): in place, as list.sort does; other objects' sort as is
            at = _offset(starts, receiver.lineno, receiver.col_offset)
            tail = _offset(starts, receiver.end_lineno, receiver.end_col_offset)
            first = node.keywords[0]
            arg = _offset(starts, first.lineno, first.col_offset)
            if receiver.end_lineno == first.lineno:
                edits.append((at, at, 0, "codeact_list_sort("))
                edits.append((tail, arg, 0, ", "))
            continue
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _STAND_INS
                and node.func.id not in bound):
            continue
        name, args, kwargs = node.func.id, node.args, {k.arg: k.value for k in node.keywords}
        if any(isinstance(a, ast.Starred) for a in args) or None in kwargs:
            continue
        if name == "sorted":
            fits = len(args) == 1 and set(kwargs) <= {"key", "reverse"} and own(kwargs.get("key"))
        elif name in ("min", "max"):
            fits = len(args) == 1 and "key" in kwargs and set(kwargs) <= {"key", "default"} and own(kwargs["key"])
        else:
            fits = len(args) == 2 and not kwargs and own(args[0])
        if fits:
            at = _offset(starts, node.func.lineno, node.func.col_offset)
            edits.append((at, _offset(starts, node.func.end_lineno, node.func.end_col_offset), 0, _STAND_INS[name]))
    return edits


# Paths sort by their parts in CPython; the sandbox's paths do not compare at all. Files iterate by line in CPython;
# the sandbox's only in a for loop. These stand-ins give CPython's answer and leave other values to the built-in.
def _sandbox_gap_edits(tree: Any, bound: set[str], starts: list[int],
                       compares: bool = False) -> list[tuple[int, int, int, str]]:
    """``sorted(paths)``, ``p.relative_to(base)`` and ``enumerate(f)``/``zip(f, ...)``/``list(f)`` over an open
    file, rewritten to stand-ins that answer as CPython does."""
    import ast

    if "type" in bound:
        return []
    files = _file_names(tree)
    edits: list[tuple[int, int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "sorted" and "sorted" not in bound and len(node.args) == 1
                and not compares
                and {k.arg for k in node.keywords} <= {"reverse"} and not isinstance(node.args[0], ast.Starred)):
            at = _offset(starts, func.lineno, func.col_offset)
            edits.append((at, _offset(starts, func.end_lineno, func.end_col_offset), 0, "codeact_sorted"))
        elif (isinstance(func, ast.Name) and func.id == "next" and "next" not in bound and 1 <= len(node.args) <= 2
              and isinstance(node.args[0], ast.GeneratorExp) and not node.keywords):
            # a generator expression is a list in the sandbox (monty#364): its first item, as next() would give
            at = _offset(starts, func.lineno, func.col_offset)
            edits.append((at, _offset(starts, func.end_lineno, func.end_col_offset), 0, "codeact_next"))
        elif (isinstance(func, ast.Name) and func.id in ("enumerate", "zip", "list", "tuple")
              and func.id not in bound and node.args and isinstance(node.args[0], ast.Name)
              and node.args[0].id in files):
            first = node.args[0]
            at = _offset(starts, first.lineno, first.col_offset)
            edits.append((at, at, 1, "codeact_lines("))
            stop = _offset(starts, first.end_lineno, first.end_col_offset)
            edits.append((stop, stop, 1, ")"))
        elif isinstance(func, ast.Name) and func.id == "open" and "open" not in bound:
            # monty's open() drops newline= and always translates '\r\n': refuse any other choice loudly
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg == "newline" and not (isinstance(value, ast.Constant) and value.value is None):
                    at = _offset(starts, value.lineno, value.col_offset)
                    edits.append((at, at, 1, "codeact_newline("))
                    stop = _offset(starts, value.end_lineno, value.end_col_offset)
                    edits.append((stop, stop, 1, ")"))
        elif (isinstance(func, ast.Attribute) and func.attr == "relative_to" and len(node.args) == 1
              and not node.keywords and func.value.end_lineno == node.args[0].lineno):
            receiver = func.value
            at = _offset(starts, receiver.lineno, receiver.col_offset)
            tail = _offset(starts, receiver.end_lineno, receiver.end_col_offset)
            arg = _offset(starts, node.args[0].lineno, node.args[0].col_offset)
            edits.append((at, at, 0, "codeact_relative_to("))
            edits.append((tail, arg, 0, ", "))
    return edits


def _file_names(tree: Any) -> set[str]:
    """Names the program binds to ``open(...)``: ``with open(p) as f`` and ``f = open(p)``."""
    import ast

    def opens(node: Any) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"

    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            names |= {i.optional_vars.id for i in node.items
                      if opens(i.context_expr) and isinstance(i.optional_vars, ast.Name)}
        elif isinstance(node, ast.Assign) and opens(node.value):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _builtin_attr_edits(tree: Any, bound: set[str], starts: list[int]) -> list[tuple[int, int, int, str]]:
    """Edits that replace ``hasattr``/``getattr`` (with a literal attribute name) and ``callable`` by stand-ins
    that answer as CPython does for built-in values; the arguments stay as written."""
    import ast

    if "type" in bound:
        return []
    edits: list[tuple[int, int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in bound
                and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)):
            continue
        name, args = node.func.id, node.args
        text = None
        if name == "callable" and len(args) == 1:
            text = "codeact_callable"
        elif (name == "hasattr" and len(args) == 2
              and not (isinstance(args[1], ast.Constant) and isinstance(args[1].value, str))):
            # a computed name: CPython's attribute names of the built-in types, by type, as data in the program
            text = f"(lambda _r, _n: _n in {_attribute_table()!r}.get(type(_r).__name__, ()) or hasattr(_r, _n))"
        elif (name in ("hasattr", "getattr") and len(args) in ((2,) if name == "hasattr" else (2, 3))
              and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)
              and args[1].value.isidentifier()):
            attr, kinds = args[1].value, types_having(args[1].value)
            if not kinds:
                continue
            if name == "hasattr":
                text = f"(lambda _r, _n: type(_r).__name__ in {kinds!r} or hasattr(_r, _n))"
            elif attr in method_names():  # a bound method: the value the program gets calls it on the receiver
                text = (f"(lambda _r, _n, *_d: (lambda *_a, **_k: _r.{attr}(*_a, **_k)) "
                        f"if type(_r).__name__ in {kinds!r} else getattr(_r, _n, *_d))")
        if text is not None:
            at = _offset(starts, node.func.lineno, node.func.col_offset)
            edits.append((at, _offset(starts, node.func.end_lineno, node.func.end_col_offset), 0, text))
    return edits


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
