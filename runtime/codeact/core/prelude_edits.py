"""The rewrite's edits that call the sandbox prelude (codeact.core.prelude): each replaces, on the same line, an
idiom the sandbox answers differently from CPython (or not at all) with a call of the helper that answers as CPython
does. A line the sandbox already runs right is left as written.

Each edit is ``(start, end, depth, text)`` in byte offsets of the program (codeact.core.rewrite applies them).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .prelude import text as prelude_text

Edit = tuple[int, int, int, str]
# re functions: the position of the pattern, of the flags, and of the template (-1: none)
_RE_CALLS = {"search": (0, 2, -1), "match": (0, 2, -1), "fullmatch": (0, 2, -1), "findall": (0, 2, -1),
             "finditer": (0, 2, -1), "split": (0, 3, -1), "sub": (0, 4, 1), "subn": (0, 4, 1),
             "compile": (0, 1, -1)}
_RE_FLAGS = {"A": 256, "ASCII": 256, "I": 2, "IGNORECASE": 2, "M": 8, "MULTILINE": 8, "S": 16, "DOTALL": 16,
             "L": 4, "LOCALE": 4, "U": 32, "UNICODE": 32, "NOFLAG": 0, "X": 64, "VERBOSE": 64}
# `import m` / `from m import n` served by the prelude: module -> the expression it becomes (None: the sandbox's own
# module), and per name the expression of that member (names not listed come from the sandbox's module)
_MODULES: dict[str, tuple[str | None, dict[str, str]]] = {
    "heapq": ("codeact_heapq()", {n: f"codeact_heapq().{n}" for n in (
        "heappush", "heappop", "heapify", "heapreplace", "heappushpop", "nlargest", "nsmallest", "merge")}),
    "io": ("codeact_io()", {"StringIO": "codeact_StringIO"}),
    "collections": (None, {"ChainMap": "codeact_ChainMap"}),
    "functools": (None, {"cmp_to_key": "codeact_cmp_to_key", "total_ordering": "codeact_total_ordering"}),
    "typing": (None, {"TypedDict": "codeact_TypedDict"}),
    "dataclasses": (None, {n: f"codeact_dataclasses().{n}" for n in (
        "fields", "asdict", "astuple", "replace", "is_dataclass")}),
    "configparser": ("codeact_configparser()", {"ConfigParser": "codeact_ConfigParser",
                                                "RawConfigParser": "codeact_ConfigParser"}),
    "urllib.parse": (None, {"urlparse": "codeact_urlparse", "urlsplit": "codeact_urlsplit"}),
    "string": (None, {"Template": "codeact_Template"}),
}
_SET_METHODS_MANY = ("union", "intersection", "difference", "symmetric_difference")
_COMPARE_DUNDERS = {"__lt__", "__gt__", "__le__", "__ge__"}


class Source:
    """The program being rewritten: its tree, the names it binds, and byte offsets of its lines."""

    def __init__(self, tree: Any, bound: set[str], offset: Callable[[int | None, int | None], int],
                 code: str) -> None:
        self.tree, self.bound, self.offset, self.code = tree, bound, offset, code
        self.nodes = list(ast.walk(tree))  # walked once: every edit below looks at them

    def span(self, node: Any) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset))

    def text(self, node: Any) -> str:
        return ast.get_source_segment(self.code, node) or ""


def prelude_edits(src: Source) -> tuple[list[Edit], tuple[str, ...]]:
    """Every prelude edit of the program, and the classes it declares ``@dataclass(order=True)``."""
    edits: list[Edit] = []
    edits += _re_edits(src)
    edits += _file_edits(src)
    edits += _str_edits(src)
    edits += _import_edits(src)
    ordered, order_edits = _ordered_dataclasses(src)
    edits += order_edits
    edits += _object_edits(src, ordered)
    edits += _literal_edits(src)
    return edits, ordered


# ------------------------------------------------------------------------------------------------------------ re
def _re_names(src: Source) -> tuple[set[str], dict[str, str]]:
    """The names the program gives the ``re`` module, and those it imports from it (local name -> function)."""
    modules: set[str] = set()
    functions: dict[str, str] = {}
    for node in src.nodes:
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "re"}
        elif isinstance(node, ast.ImportFrom) and node.module == "re":
            functions |= {a.asname or a.name: a.name for a in node.names if a.name in _RE_CALLS}
    return modules, functions


def _flags_value(node: Any, modules: set[str]) -> int | None:
    """The value of a flags expression made of ``re.X`` names, ``|`` and numbers; ``None`` when not known here."""
    if node is None:
        return 0
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
            and node.attr in _RE_FLAGS):
        return _RE_FLAGS[node.attr]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.Add)):
        left, right = _flags_value(node.left, modules), _flags_value(node.right, modules)
        return None if left is None or right is None else left | right
    return None


def _simple(node: Any) -> bool:
    """Whether evaluating ``node`` twice is harmless (names, attributes, constants and operators on them)."""
    return all(isinstance(n, (ast.Name, ast.Attribute, ast.Constant, ast.BinOp, ast.operator, ast.Load))
               for n in ast.walk(node))


def _literal(node: Any) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.lineno == node.end_lineno:
        return node.value
    return None


def _re_edits(src: Source) -> list[Edit]:
    """Patterns and templates of ``re`` calls made to read as CPython's (see codeact.core.prelude.text): a literal
    rewritten in place, anything else passed through the helper at run time; ``re.sub`` with a function and
    ``re.subn`` through the prelude's own."""
    modules, functions = _re_names(src)
    if not modules and not functions:
        return []
    edits: list[Edit] = []
    for node in src.nodes:
        if not isinstance(node, ast.Call):
            continue
        func, name = node.func, None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
            name = func.attr
        elif isinstance(func, ast.Name) and func.id in functions and func.id not in src.bound - set(functions):
            name = functions[func.id]
        elif isinstance(func, ast.Attribute) and func.attr in ("sub", "subn") and len(node.args) >= 1:
            edits += _argument_edit(src, node.args[0], "template", 0)  # a compiled pattern's sub(template, text)
            continue
        if name not in _RE_CALLS or any(isinstance(a, ast.Starred) for a in node.args):
            continue
        at_pattern, at_flags, at_template = _RE_CALLS[name]
        keywords = {k.arg: k.value for k in node.keywords}
        if None in keywords:
            continue
        flags_node = node.args[at_flags] if len(node.args) > at_flags else keywords.get("flags")
        pattern = node.args[at_pattern] if len(node.args) > at_pattern else keywords.get("pattern")
        template = (node.args[at_template] if len(node.args) > at_template else keywords.get("repl")
                    ) if at_template >= 0 else None
        if name in ("sub", "subn") and (name == "subn" or (template is not None and _literal(template) is None
                                                             and not _is_str_expression(template))):
            start, end = src.span(func)
            edits.append((start, end, 0, "codeact_re_subn" if name == "subn" else "codeact_re_sub"))
            continue  # the helper reads the pattern, the template and the flags itself
        flags = _flags_value(flags_node, modules)
        if pattern is not None:
            flags_text = str(flags) if flags is not None else (src.text(flags_node) if _simple(flags_node) else "0")
            edits += _argument_edit(src, pattern, "pattern", flags, flags_text)
        if template is not None:
            edits += _argument_edit(src, template, "template", 0)
    return edits


def _is_str_expression(node: Any) -> bool:
    return isinstance(node, (ast.JoinedStr, ast.BinOp)) or _literal(node) is not None


def _argument_edit(src: Source, node: Any, kind: str, flags: int | None, flags_text: str = "0") -> list[Edit]:
    """One pattern or template argument made CPython's: a one-line literal replaced by its translation (nothing
    when it needs none), any other expression wrapped in the helper."""
    value = _literal(node)
    if isinstance(node, ast.Constant) and not isinstance(node.value, str):
        return []  # bytes patterns are matched alike
    start, end = src.span(node)
    if value is not None and flags is not None:
        new = (prelude_text.codeact_re_translate(value, flags) if kind == "pattern"
               else prelude_text.codeact_re_translate_template(value))
        return [] if new == value else [(start, end, 0, repr(new))]
    if isinstance(node, ast.Constant) and node.lineno != node.end_lineno:
        pass  # a literal over several lines: wrapped like any expression
    helper = "codeact_re_pattern" if kind == "pattern" else "codeact_re_template"
    tail = f", {flags_text})" if kind == "pattern" else ")"
    return [(start, start, 1, helper + "("), (end, end, 1, tail)]


# ------------------------------------------------------------------------------------------------------------ files
def _file_edits(src: Source) -> list[Edit]:
    """``p.read_text(encoding=...)`` and ``open(p, errors=...)`` (or an encoding other than UTF-8), which the
    sandbox refuses, through the prelude's readers."""
    edits: list[Edit] = []
    for node in src.nodes:
        if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
            continue
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "read_text" and (node.args or node.keywords)
                and func.value.end_lineno == func.end_lineno):
            receiver_end = src.offset(func.value.end_lineno, func.value.end_col_offset)
            start = src.offset(func.value.lineno, func.value.col_offset)
            args_at = src.offset((node.args or node.keywords)[0].lineno, (node.args or node.keywords)[0].col_offset)
            edits.append((start, start, 0, "codeact_read_text("))
            edits.append((receiver_end, args_at, 0, ", "))
        elif isinstance(func, ast.Name) and func.id == "open" and "open" not in src.bound:
            keywords = {k.arg: k.value for k in node.keywords}
            encoding = keywords.get("encoding", node.args[3] if len(node.args) > 3 else None)
            plain_encoding = encoding is None or (
                isinstance(encoding, ast.Constant) and isinstance(encoding.value, str)
                and _is_utf8(encoding.value))
            if "errors" in keywords or len(node.args) > 4 or not plain_encoding:
                start, end = src.span(func)
                edits.append((start, end, 0, "codeact_open"))
    return edits


def _is_utf8(encoding: str) -> bool:
    return encoding.lower().replace("_", "-") in ("utf-8", "utf8", "u8")


# ------------------------------------------------------------------------------------------------------------ str
def _str_edits(src: Source) -> list[Edit]:
    """``str.maketrans(...)`` and ``s.translate(table)``, which the sandbox lacks, through the prelude."""
    if "str" in src.bound:
        return []
    edits: list[Edit] = []
    for node in src.nodes:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        func = node.func
        if func.attr == "maketrans" and isinstance(func.value, ast.Name) and func.value.id in ("str", "bytes"):
            start, end = src.span(func)
            edits.append((start, end, 0, "codeact_maketrans"))
        elif (func.attr in _SET_METHODS_MANY and isinstance(func.value, ast.Name) and func.value.id in (
                "set", "frozenset") and func.value.id not in src.bound):
            start, end = src.span(func)  # set.intersection(*sets): the method taken from the type
            edits.append((start, end, 0, f"codeact_set_call({func.attr!r})"))
        elif (func.attr in _SET_METHODS_MANY and len(node.args) > 1 and not node.keywords
              and not any(isinstance(a, ast.Starred) for a in node.args)
              and func.value.end_lineno == node.args[0].lineno):
            start = src.offset(func.value.lineno, func.value.col_offset)
            receiver_end = src.offset(func.value.end_lineno, func.value.end_col_offset)
            edits.append((start, start, 0, "codeact_set_method("))
            edits.append((receiver_end, src.offset(node.args[0].lineno, node.args[0].col_offset), 0,
                          f", {func.attr!r}, "))
        elif (func.attr == "translate" and len(node.args) == 1 and not node.keywords
              and func.value.end_lineno == node.args[0].lineno):
            start = src.offset(func.value.lineno, func.value.col_offset)
            receiver_end = src.offset(func.value.end_lineno, func.value.end_col_offset)
            edits.append((start, start, 0, "codeact_translate("))
            edits.append((receiver_end, src.offset(node.args[0].lineno, node.args[0].col_offset), 0, ", "))
    return edits


# ------------------------------------------------------------------------------------------------------------ imports
def _import_edits(src: Source) -> list[Edit]:
    """``import heapq``, ``from io import StringIO``, ``collections.ChainMap``, ... bound to the prelude's
    stand-ins on the same line."""
    edits: list[Edit] = []
    module_names: dict[str, str] = {}  # local name -> module, for `module.member`
    for node in src.nodes:
        if isinstance(node, ast.Import) and any(a.name in _MODULES for a in node.names):
            parts = []
            for alias in node.names:
                local = alias.asname or alias.name
                whole, _members = _MODULES.get(alias.name, (None, {}))
                if alias.name in _MODULES:
                    module_names[local] = alias.name
                if whole is not None:
                    parts.append(f"{local} = {whole}")
                else:
                    parts.append(f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else ""))
            edits.append(_statement(src, node, "; ".join(parts)))
        elif isinstance(node, ast.ImportFrom) and node.module in _MODULES and node.level == 0:
            whole, members = _MODULES[node.module]
            ours = [a for a in node.names if a.name in members]
            if not ours and whole is None:
                continue
            theirs = [a for a in node.names if a.name not in members]
            parts = []
            if theirs:
                if whole is not None:  # a name the prelude's module lacks: the sandbox has none either
                    parts += [f"{a.asname or a.name} = {whole}.{a.name}" for a in theirs]
                else:
                    parts.append(f"from {node.module} import " + ", ".join(
                        a.name + (f" as {a.asname}" if a.asname else "") for a in theirs))
            parts += [f"{a.asname or a.name} = {members[a.name]}" for a in ours]
            edits.append(_statement(src, node, "; ".join(parts)))
    for node in src.nodes:  # module.member -> the stand-in, where the program imported the module
        if (isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute))
                and ast.unparse(node.value) in module_names
                and _MODULES[module_names[ast.unparse(node.value)]][0] is None):
            members = _MODULES[module_names[ast.unparse(node.value)]][1]
            if node.attr in members:
                start, end = src.span(node)
                edits.append((start, end, 2, members[node.attr]))
    edits += _typed_dict_classes(src)
    return edits


def _statement(src: Source, node: Any, text: str) -> Edit:
    """``node``'s whole text replaced by ``text``, the lines it spanned kept (as empty ones)."""
    start, end = src.span(node)
    return (start, end, 0, text + "\n" * ((node.end_lineno or node.lineno) - node.lineno))


def _typed_dict_classes(src: Source) -> list[Edit]:
    """``class Movie(TypedDict): ...`` (a class the sandbox cannot derive) becomes ``Movie = codeact_TypedDict``: its
    instances are dicts, as in CPython."""
    edits: list[Edit] = []
    for node in src.nodes:
        if isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id == "TypedDict") or (isinstance(b, ast.Attribute)
                                                                      and b.attr == "TypedDict")
                for b in node.bases) and not node.decorator_list:
            edits.append(_statement(src, node, f"{node.name} = codeact_TypedDict"))
    return edits


# ------------------------------------------------------------------------------------------------------------ objects
def _ordered_dataclasses(src: Source) -> tuple[tuple[str, ...], list[Edit]]:
    """Classes declared ``@dataclass(order=True)``: the option dropped (the sandbox refuses it) and the class named
    so that the prelude's comparisons order it by its fields (``"Name"``, or ``"Name-field-field"`` less the
    fields declared ``field(compare=False)``, an argument the sandbox refuses too and is dropped)."""
    ordered: list[str] = []
    edits: list[Edit] = []
    for node in src.nodes:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "field"
                and any(k.arg == "compare" for k in node.keywords) and node.lineno == node.end_lineno):
            kept = ast.Call(func=node.func, args=node.args, keywords=[k for k in node.keywords if k.arg != "compare"])
            start, end = src.span(node)
            edits.append((start, end, 0, ast.unparse(kept)))
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            if (isinstance(decorator, ast.Call) and decorator.lineno == decorator.end_lineno
                    and any(k.arg == "order" for k in decorator.keywords)):
                order = next(k.value for k in decorator.keywords if k.arg == "order")
                if isinstance(order, ast.Constant) and order.value is True:
                    ordered.append("-".join([node.name, *_not_compared(node)]))
                kept = ast.Call(func=decorator.func, args=decorator.args,
                                keywords=[k for k in decorator.keywords if k.arg != "order"])
                start, end = src.span(decorator)
                edits.append((start, end, 0, ast.unparse(kept)))
    return tuple(ordered), edits


def compares(src: Source, ordered: tuple[str, ...]) -> bool:
    """Whether the program orders objects of its own classes: it defines a comparison method, declares an ordered
    dataclass or uses ``cmp_to_key`` (then the prelude takes its comparisons and sorts)."""
    defined = {n.name for n in src.nodes if isinstance(n, ast.FunctionDef)}
    return bool(defined & _COMPARE_DUNDERS) or bool(ordered) or "cmp_to_key" in src.code


def _not_compared(node: Any) -> list[str]:
    """The fields of a dataclass declared ``field(compare=False)``."""
    found = []
    for item in node.body:
        value = item.value if isinstance(item, ast.AnnAssign) else None
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "field"
                and isinstance(item.target, ast.Name) and any(
                    k.arg == "compare" and isinstance(k.value, ast.Constant) and k.value.value is False
                    for k in value.keywords)):
            found.append(item.target.id)
    return found


def _object_edits(src: Source, ordered: tuple[str, ...]) -> list[Edit]:
    """Where the program defines comparison methods (or ordered dataclasses, or uses cmp_to_key): comparisons,
    ``sorted``, ``min``, ``max`` and ``list.sort`` through the prelude; where it defines ``__len__``: ``len``;
    ``vars(obj)`` always."""
    defined = {n.name for n in src.nodes if isinstance(n, ast.FunctionDef)}
    ordering = compares(src, ordered)
    edits: list[Edit] = []
    for node in src.nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in src.bound:
            name = node.func.id
            stand_in = {"len": "codeact_len" if "__len__" in defined else None, "vars": "codeact_vars"}.get(name)
            if ordering and name in ("sorted", "min", "max"):
                stand_in = f"codeact_{name}"
            if stand_in:
                start, end = src.span(node.func)
                edits.append((start, end, 0, stand_in))
        elif (ordering and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "sort" and not node.args and node.func.value.lineno == node.func.end_lineno
              and {k.arg for k in node.keywords} <= {"key", "reverse"}):
            receiver = node.func.value
            start = src.offset(receiver.lineno, receiver.col_offset)
            receiver_end = src.offset(receiver.end_lineno, receiver.end_col_offset)
            call_end = src.offset(node.end_lineno, node.end_col_offset)
            if node.keywords:
                first = node.keywords[0]
                edits.append((start, start, 0, "codeact_list_sort("))
                edits.append((receiver_end, src.offset(first.lineno, first.col_offset), 0, ", "))
            else:
                edits.append((start, start, 0, "codeact_list_sort("))
                edits.append((receiver_end, call_end, 0, ")"))
        elif (ordering and isinstance(node, ast.Compare) and len(node.ops) == 1
              and isinstance(node.ops[0], (ast.Lt, ast.Gt, ast.LtE, ast.GtE))
              and node.left.end_lineno == node.comparators[0].lineno):
            op = {ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=", ast.GtE: ">="}[type(node.ops[0])]
            start = src.offset(node.left.lineno, node.left.col_offset)
            left_end = src.offset(node.left.end_lineno, node.left.end_col_offset)
            right = node.comparators[0]
            right_start = src.offset(right.lineno, right.col_offset)
            end = src.offset(right.end_lineno, right.end_col_offset)
            edits.append((start, start, 3, "codeact_cmp("))
            edits.append((left_end, right_start, 3, f", {op!r}, "))
            edits.append((end, end, 3, ")"))
    return edits


# ------------------------------------------------------------------------------------------------------------ literals
def _literal_edits(src: Source) -> list[Edit]:
    """Sets and displays whose CPython value the sandbox builds differently: ``set(xs)`` and ``{e for ...}`` of
    ints are built in CPython's order (codeact_set); a set of number literals, which CPython iterates in hash order
    (the sandbox: as written), is written in CPython's order; a set whose literal items CPython finds equal
    (``1`` and ``True``) keeps CPython's first item."""
    edits: list[Edit] = []
    for node in src.nodes:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set"
                and "set" not in src.bound and len(node.args) == 1 and not node.keywords
                and not isinstance(node.args[0], ast.Starred)):
            start, end = src.span(node.func)  # set(ints): built in CPython's order
            edits.append((start, end, 0, "codeact_set"))
        elif isinstance(node, ast.SetComp) and "set" not in src.bound:
            start, end = src.span(node)
            edits.append((start, start + 1, 0, "codeact_set(["))
            edits.append((end - 1, end, 0, "])"))
        elif isinstance(node, ast.Set) and node.elts and node.lineno == node.end_lineno and all(
                isinstance(e, ast.Constant) and type(e.value) in (int, float, bool) for e in node.elts):
            values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            cpython = list(set(values))  # the host's CPython iterates the same set in its own order
            order = list(dict.fromkeys(values))
            if [repr(v) for v in cpython] != [repr(v) for v in order]:
                start, end = src.span(node)
                edits.append((start, end, 0, "{" + ", ".join(repr(v) for v in cpython) + "}"))
    return edits


# ------------------------------------------------------------------------------------------------------------ notes
_SET_OPS = (ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor)
_SET_METHODS = {"union", "intersection", "difference", "symmetric_difference", "copy"}
_ORDER_SHOWN = {"list", "tuple", "enumerate", "print", "str", "repr", "zip", "next", "iter"}


def set_order_notes(src: Source) -> list[tuple[int, str]]:
    """Lines where the program iterates a set it built at run time: the sandbox's sets keep the order items were
    added, CPython's iterate in hash order (a literal set of numbers is already written in CPython's order), so
    the answer may differ in its order: said as a note, with the fix."""
    sets: set[str] = set()

    def is_set(node: Any) -> bool:
        """A set built other than in CPython's order: added to, or made by a set operation."""
        if isinstance(node, ast.Set):
            return not all(isinstance(e, ast.Constant) for e in node.elts)
        if isinstance(node, ast.Name):
            return node.id in sets
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id == "frozenset" and node.func.id not in src.bound and bool(node.args)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return node.func.attr in _SET_METHODS and is_set(node.func.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _SET_OPS):
            return is_set(node.left) or is_set(node.right)
        return False

    empty = {t.id for n in src.nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
             and isinstance(n.value.func, ast.Name) and n.value.func.id == "set" and not n.value.args
             for t in n.targets if isinstance(t, ast.Name)}
    for _ in range(2):  # names bound to sets, then names bound to expressions of those
        for node in src.nodes:
            if isinstance(node, ast.Assign) and is_set(node.value):
                sets |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and is_set(node.value):
                sets.add(node.target.id)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("add", "update") and isinstance(node.func.value, ast.Name)
                  and node.func.value.id in empty):
                sets.add(node.func.value.id)
    return _iterations(src, is_set)


def _iterations(src: Source, is_set: Callable[[Any], bool]) -> list[tuple[int, str]]:
    """The note on the first line that iterates a set ``is_set`` picks out."""
    lines: set[int] = set()
    for node in src.nodes:
        if isinstance(node, (ast.For, ast.comprehension)) and is_set(node.iter):
            lines.add(node.iter.lineno)
        elif (isinstance(node, ast.Call) and node.args and is_set(node.args[0]) and (
                (isinstance(node.func, ast.Name) and node.func.id in _ORDER_SHOWN)
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "join"))):
            lines.add(node.lineno)
    return [(line, f"line {line}: iterates a set: here a set keeps the order its items were added, CPython's "
             "follows their hashes (numbers mostly ascending), so the order may differ from CPython's; write "
             "sorted(...) where the order matters") for line in sorted(lines)[:1]]


__all__ = ["Source", "compares", "prelude_edits", "set_order_notes"]
