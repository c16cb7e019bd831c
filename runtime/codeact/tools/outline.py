"""outline: the classes, functions, methods and imports of Python files, parsed with the host's ``ast``.

The sandbox has no ``ast``, and regular expressions get structure wrong (decorators, nested functions, docstrings,
``import a, b``). Files are found by the same walk as ``glob`` (workspace only, .gitignore honoured, skipped folders
left out, links not followed); nothing is written.
"""
from __future__ import annotations

import ast
import os
import warnings
from typing import Any

from ..errors import ToolError
from .base import ToolContext

MAX_FILE_BYTES = 1024 * 1024  # larger files are skipped, and reported as an "error" item
PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
KINDS = ("class", "function", "method", "import", "error")


def outline(ctx: ToolContext, *, path: str = ".", glob: str = "*.py") -> list[dict]:
    """Python definitions and imports: ``[{"path", "kind", "name", "qualname", "line", "end_line", "docstring"}]``.

    One item per class, function, method or import in the files matching ``glob`` under ``path``, sorted by path
    and line, parsed with the host's ``ast``. ``kind``: ``class``, ``function``, ``method`` (a function directly in
    a class body), ``import`` or ``error``. ``name`` of an import is the module (``os.path``; ``.core`` for
    ``from .core import x``), one item per module of the statement. ``qualname`` is Python's ``__qualname__``
    (``Cls.meth``, ``outer.<locals>.inner``; an import's is its module after its scope's qualname). ``line`` is
    the line of ``def``/``class`` (not of a decorator), 1-based, inclusive with ``end_line``. ``docstring`` is the
    docstring's first line, else ``None``. A file that does not parse gives one ``error`` item (``name`` and
    ``qualname`` ``None``, the error's lines, ``docstring`` the SyntaxError message); a file over 1 MiB gives an
    ``error`` item with ``line`` ``None``. A ``path`` naming a file is parsed whatever its name (if it matches
    ``glob``); otherwise only ``.py``, ``.pyi`` and ``.pyw`` files are read.
    """
    from . import search
    from .walk import Glob

    if not isinstance(glob, str) or not glob.strip():
        raise ToolError("glob must be a file pattern such as '*.py' or 'src/**/*.py'")
    base = ctx.workspace.resolve(path, must_exist=True)
    if base.is_file():
        shown = ctx.workspace.display(base)
        files = [shown] if Glob(glob).matches(base.name) else []
    else:
        files = [f for f in search.glob(ctx, pattern=glob, path=path) if f.endswith(PYTHON_SUFFIXES)]
    clock = ctx.run_deadline()
    items: list[dict[str, Any]] = []
    for done, rel in enumerate(files):
        clock.check("outline", f"parsing file {done + 1} of {len(files)} (narrow path or glob)")
        items.extend(outline_file(ctx.workspace.root / rel, rel))
    items.sort(key=lambda item: (item["path"], item["line"] or 0))
    return items


def outline_file(file: os.PathLike[str] | str, rel: str) -> list[dict[str, Any]]:
    """The items of one file, in source order; ``rel`` is the path they report."""
    try:  # no link followed: the walk lists none, and a file swapped for one since is refused here
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                return [_error(rel, None, f"skipped: {size} bytes is over the {MAX_FILE_BYTES} byte (1 MiB) limit")]
            data = handle.read()
    except OSError as exc:
        return [_error(rel, None, f"cannot read: {exc.strerror}")]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning (invalid escapes) would reach the run's stderr
            tree = ast.parse(data, filename=rel)
    except SyntaxError as exc:
        line = exc.lineno or _nul_line(data)
        return [_error(rel, line, exc.msg, getattr(exc, "end_lineno", None) if exc.lineno else line)]
    except ValueError as exc:  # a NUL byte (some Python versions), an unknown encoding
        return [_error(rel, _nul_line(data), str(exc))]
    except (RecursionError, MemoryError):
        return [_error(rel, None, "too deeply nested to parse")]
    items: list[dict[str, Any]] = []
    _visit(tree, rel, "", "module", items)
    return items


def _nul_line(data: bytes) -> int | None:
    """The line of the first NUL byte (the parser reports none), if any."""
    nul = data.find(b"\0")
    return data.count(b"\n", 0, nul) + 1 if nul >= 0 else None


def _error(rel: str, line: int | None, message: str, end_line: int | None = None) -> dict[str, Any]:
    return {"path": rel, "kind": "error", "name": None, "qualname": None, "line": line,
            "end_line": end_line if end_line is not None and line is not None and end_line >= line else line,
            "docstring": message}


def _visit(node: ast.AST, rel: str, prefix: str, scope: str, items: list[dict[str, Any]]) -> None:
    """Collect the definitions and imports below ``node``; ``prefix`` is the qualname prefix of its scope
    (``""``, ``"Cls."``, ``"f.<locals>."``) and ``scope`` its kind (``module``, ``class``, ``function``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            qualname = prefix + child.name
            is_class = isinstance(child, ast.ClassDef)
            kind = "class" if is_class else ("method" if scope == "class" else "function")
            doc = ast.get_docstring(child)
            items.append({"path": rel, "kind": kind, "name": child.name, "qualname": qualname,
                          "line": child.lineno, "end_line": child.end_lineno or child.lineno,
                          "docstring": None if doc is None else doc.split("\n", 1)[0]})
            _visit(child, rel, qualname + ("." if is_class else ".<locals>."), "class" if is_class else "function",
                   items)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            if isinstance(child, ast.Import):
                modules = [alias.name for alias in child.names]
            else:
                modules = ["." * child.level + (child.module or "")]
            for module in modules:
                items.append({"path": rel, "kind": "import", "name": module, "qualname": prefix + module,
                              "line": child.lineno, "end_line": child.end_lineno or child.lineno,
                              "docstring": None})
        else:
            _visit(child, rel, prefix, scope, items)
