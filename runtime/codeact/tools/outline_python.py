"""outline's Python: the host's ``ast``, exact (the sandbox has none, and regular expressions get structure wrong:
decorators, nested functions, docstrings, ``import a, b``)."""
from __future__ import annotations

import ast
import warnings

from ..pyast import parse
from .outline_langs import Item

SUFFIXES = (".py", ".pyi", ".pyw")


def outline_python(data: bytes, rel: str) -> list[Item]:
    """The items of one Python file's bytes, in source order; one ``error`` item if it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning (invalid escapes) would reach the run's stderr
            tree = parse(data, rel)
    except SyntaxError as exc:
        line = exc.lineno or _nul_line(data)
        return [error_item(line, exc.msg, getattr(exc, "end_lineno", None) if exc.lineno else line)]
    except ValueError as exc:  # a NUL byte (some Python versions), an unknown encoding
        return [error_item(_nul_line(data), str(exc))]
    except RecursionError:
        return [error_item(None, "too deeply nested to parse")]
    except MemoryError:  # a flat file can be too large to parse as well (`x = [a, a, ...]`, 500,000 items)
        return [error_item(None, "not parsed: it needed more memory than the run's limit allows (the parser's tree is "
                                 "hundreds of times the file); raise CODEACT_MEMORY")]
    items: list[Item] = []
    _visit(tree, "", "module", items, _Source(data))
    return items


class _Source:
    """A file's text by node: the source of a base or a decorator exactly as written (``ast`` columns are UTF-8
    byte offsets), else ``ast.unparse``."""

    __slots__ = ("data", "lines", "starts")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.lines: list[bytes] | None = None
        self.starts: list[int] | None = None

    def text(self, node: ast.AST) -> str:
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None:
            return ast.unparse(node)
        if node.lineno == end_line:  # type: ignore[attr-defined]  # within one line: its bytes, no offsets counted
            if self.lines is None:
                self.lines = self.data.split(b"\n")
            if end_line <= len(self.lines) and end_col <= len(line := self.lines[end_line - 1]):
                try:
                    return line[node.col_offset:end_col].decode("utf-8")  # type: ignore[attr-defined,no-any-return]
                except UnicodeDecodeError:
                    return ast.unparse(node)
        if self.starts is None:
            starts, at = [0], self.data.find(b"\n")
            while at >= 0:
                starts.append(at + 1)
                at = self.data.find(b"\n", at + 1)
            self.starts = starts
        start = self.starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        try:
            text = self.data[start:self.starts[end_line - 1] + end_col].decode("utf-8")
        except (IndexError, UnicodeDecodeError):
            return ast.unparse(node)
        return text if "\n" not in text else " ".join(part.strip() for part in text.splitlines())


def _nul_line(data: bytes) -> int | None:
    """The line of the first NUL byte (the parser reports none), if any."""
    nul = data.find(b"\0")
    return data.count(b"\n", 0, nul) + 1 if nul >= 0 else None


def error_item(line: int | None, message: str, end_line: int | None = None) -> Item:
    """An ``error`` item: the file was not read (``line`` ``None``) or does not parse (where, and why)."""
    return ("error", None, None, line, end_line if end_line is not None and line is not None and end_line >= line
            else line, message, [], [])


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")  # where statements nest: definitions are statements
_NESTING: dict[type, tuple[str, ...]] = {}  # a node type -> those of its fields (none: nothing to walk there)
_DEFINITIONS = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))  # ``ast.parse`` makes no subclass


def _bodies(of_type: type) -> tuple[str, ...]:
    """The fields of :data:`_BODIES` a node type has."""
    found = _NESTING.get(of_type)
    if found is None:
        found = _NESTING[of_type] = tuple(field for field in _BODIES if field in getattr(of_type, "_fields", ()))
    return found


def _summary(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str | None:
    """The first line of the definition's docstring as ``ast.get_docstring`` cleans it (the rest is not cleaned)."""
    first = node.body[0] if node.body else None
    if type(first) is not ast.Expr or type(first.value) is not ast.Constant or not isinstance(first.value.value, str):
        return None
    line = first.value.value.split("\n", 1)[0].expandtabs().lstrip()
    if line:
        return line
    doc = ast.get_docstring(node)  # a docstring that starts on its second line
    return None if doc is None else doc.split("\n", 1)[0]


def _visit(node: ast.AST, prefix: str, scope: str, items: list[Item], source: _Source) -> None:
    """Collect the definitions and imports below ``node``; ``prefix`` is the qualname prefix of its scope
    (``""``, ``"Cls."``, ``"f.<locals>."``) and ``scope`` its kind (``module``, ``class``, ``function``). Only
    statement lists are walked (``if``/``try``/``with``/``match`` bodies too), never expressions."""
    for field in _bodies(type(node)):
        for child in getattr(node, field, ()):
            of_type = type(child)
            if of_type in _DEFINITIONS:
                assert isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                qualname = prefix + child.name
                is_class = of_type is ast.ClassDef
                kind = "class" if is_class else ("method" if scope == "class" else "function")
                doc = _summary(child)
                bases = ([source.text(b) for b in child.bases] + [source.text(k) for k in child.keywords]
                         if isinstance(child, ast.ClassDef) else [])
                items.append((kind, child.name, qualname, child.lineno, child.end_lineno or child.lineno,
                              doc, bases,
                              [source.text(d) for d in child.decorator_list]))
                _visit(child, qualname + ("." if is_class else ".<locals>."),
                       "class" if is_class else "function", items, source)
            elif of_type is ast.Import or of_type is ast.ImportFrom:
                assert isinstance(child, (ast.Import, ast.ImportFrom))
                if isinstance(child, ast.Import):
                    modules = [alias.name for alias in child.names]
                else:
                    modules = ["." * child.level + (child.module or "")]
                for module in modules:
                    items.append(("import", module, prefix + module, child.lineno, child.end_lineno or child.lineno,
                                  None, [], []))
            elif _NESTING.get(of_type, of_type) and _bodies(of_type):  # a type seen before with no body: skipped
                _visit(child, prefix, scope, items, source)
