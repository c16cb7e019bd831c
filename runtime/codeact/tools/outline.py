"""outline: the classes, functions, methods and imports of Python files, parsed with the host's ``ast``.

The sandbox has no ``ast``, and regular expressions get structure wrong (decorators, nested functions, docstrings,
``import a, b``). Files are found by the same walk as ``glob`` (workspace only, .gitignore honoured, skipped folders
left out, links not followed); nothing is written.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import ast
import json
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

from ..core import notices
from ..core.limits import Deadline
from ..core.pathnames import needs_quoting, quote
from ..core.tool import ToolContext
from ..errors import ToolError
from .outline_cache import OutlineCache

MAX_FILE_BYTES = 1024 * 1024  # larger files are skipped, and reported as an "error" item
PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
KINDS = ("class", "function", "method", "import", "error")


def outline(ctx: ToolContext, *, path: str = ".", glob: str = "*.py", kind: str | None = None,
            name: str | None = None) -> list[dict]:
    """Python definitions and imports: ``[{"path", "kind", "name", "qualname", "line", "end_line", "docstring",
    "bases", "decorators"}]``.

    One item per class, function, method or import in the files matching ``glob`` under ``path``, sorted by path
    and line, parsed with the host's ``ast``. ``kind``: ``class``, ``function``, ``method`` (a function directly in
    a class body), ``import`` or ``error``. ``name`` of an import is the module (``os.path``; ``.core`` for
    ``from .core import x``), one item per module of the statement. ``qualname`` is Python's ``__qualname__``
    (``Cls.meth``, ``outer.<locals>.inner``; an import's is its module after its scope's qualname). ``line`` is
    the line of ``def``/``class`` (not of a decorator), 1-based, inclusive with ``end_line``. ``docstring`` is the
    docstring's first line, else ``None``. ``bases``: a class's bases as written (``["Base", "Generic[T]"]``;
    keywords such as ``metaclass=M`` too), else ``[]``; ``decorators``: a class's or function's decorators as
    written (``["dataclass(frozen=True)"]``), else ``[]``. A file that does not parse gives one ``error`` item
    (``name`` and ``qualname`` ``None``, the error's lines, ``docstring`` the SyntaxError message; a note says how
    many); a file over 1 MiB gives an ``error`` item with ``line`` ``None``. A ``path`` naming a file is parsed
    whatever its name (if it matches ``glob``); otherwise only ``.py``, ``.pyi`` and ``.pyw`` files are read.
    The filters run here, so a whole-repository question fits the result: ``kind="class"`` keeps one kind (errors are
    always kept), ``name=r"Test\\w*"`` keeps items whose ``name`` matches the regular expression whole.
    Files parsed once are remembered by path, size and modification time in your cache folder.
    """
    from . import grep_glob
    from .walk import Glob

    if not isinstance(glob, str) or not glob.strip():
        raise ToolError("glob must be a file pattern such as '*.py' or 'src/**/*.py'")
    if kind is not None and kind not in KINDS:
        raise ToolError(f"kind must be one of {', '.join(map(repr, KINDS))}, got {kind!r}")
    try:
        wanted = re.compile(name) if name is not None else None
    except (re.error, TypeError) as exc:
        raise ToolError(f"name must be a regular expression, got {name!r}: {exc}") from None
    base = ctx.workspace.resolve(path, must_exist=True)
    if base.is_file():
        shown = base.relative_to(ctx.workspace.root).as_posix()
        files = [shown] if Glob(glob).matches(base.name) else []
    else:
        files = [f for f in grep_glob.matching_files(ctx, glob, path)[0] if f.endswith(PYTHON_SUFFIXES)]
    clock = ctx.run_deadline()
    cache = OutlineCache.for_workspace(ctx.workspace.root, ctx.environ)
    parsed = _parse_in_workers(ctx.workspace.root, [rel for rel in files if not cache.fresh(ctx.workspace.root / rel,
                                                                                              rel)], clock)

    def parse(file: Path, rel: str) -> list[dict[str, Any]]:
        found = parsed.pop(rel, None)
        return outline_file(file, rel) if found is None else found

    items: list[dict[str, Any]] = []
    errors: list[str] = []
    try:
        for done, rel in enumerate(files):
            if done % 64 == 0:
                clock.check("outline", f"parsing file {done + 1} of {len(files)} (narrow path or glob)")
            found = cache.items(ctx.workspace.root / rel, rel, parse)
            if needs_quoting(rel):  # a name that is not UTF-8, as git quotes it (codeact.core.pathnames)
                found = [{**item, "path": quote(rel)} for item in found]
            if found and found[0]["kind"] == "error":
                errors.append(found[0]["path"])
            if kind is not None or wanted is not None:
                found = [i for i in found if i["kind"] == "error" or ((kind is None or i["kind"] == kind) and
                         (wanted is None or wanted.fullmatch(i["name"] or "") is not None))]
            items.extend(found)
        if base == ctx.workspace.root and glob == "*.py":
            cache.keep_only(set(files))  # deleted files leave the cache
    finally:
        cache.save()
    if errors:
        shown_errors = ", ".join(errors[:5]) + (f" and {len(errors) - 5} more" if len(errors) > 5 else "")
        notices.note("outline()", f"{len(errors)} of {len(files)} files were not parsed ({shown_errors}; each has "
                                  f"a kind='error' item saying why: a syntax Python {sys.version_info[0]}."
                                  f"{sys.version_info[1]} does not read, over 1 MiB, unreadable)")
    items.sort(key=lambda item: (item["path"], item["line"] or 0))
    return _fitting(items, int(ctx.limits.tool_result))


PARALLEL_MIN = 64  # files to parse before worker processes pay for their start
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from codeact.tools.outline import main; main()"


def _parse_in_workers(root: Path, rels: list[str], clock: Deadline) -> dict[str, list[dict[str, Any]]]:
    """The items of many files parsed by worker processes, one per CPU (at most 8), each killed at the deadline;
    ``{}`` when there are too few files or CPUs (the files are then parsed here, one by one)."""
    workers = min(os.cpu_count() or 1, 8, len(rels) // (PARALLEL_MIN // 2))
    if workers < 2 or len(rels) < PARALLEL_MIN:
        return {}
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from .proc import Child

    runtime = str(Path(__file__).resolve().parents[2])

    def one(part: list[str]) -> dict[str, list[dict[str, Any]]]:
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="codeact-outline-", suffix=".json") as spec:
            json.dump({"root": str(root), "files": part}, spec)
            spec.flush()
            child = Child.start([sys.executable, "-I", "-S", "-c", _BOOT, runtime, spec.name], root, clock,
                                "outline", f"parsing {len(rels)} files")
            if child is None:
                return {}
            with child:
                data = b"".join(child)
        try:
            return json.loads(data)  # type: ignore[no-any-return]
        except ValueError:
            return {}  # a worker that failed: its files are parsed here

    with ThreadPoolExecutor(workers) as pool:
        found: dict[str, list[dict[str, Any]]] = {}
        for part in pool.map(one, [rels[i::workers] for i in range(workers)]):
            found.update(part)
    return found


def main() -> None:
    """An outline worker: the files named in the JSON file ``argv[2]``, parsed; ``{rel: items}`` on stdout."""
    request = json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
    root = Path(request["root"])
    out = json.dumps({rel: outline_file(root / rel, rel) for rel in request["files"]}).encode()
    view = memoryview(out)
    while view:
        view = view[os.write(1, view):]


def _fitting(items: list[dict[str, Any]], cap: int) -> list[dict[str, Any]]:
    """The items that fit the tool-result limit, and a note naming the filters when they do not all fit."""
    if len(json.dumps(items)) <= cap:
        return items
    kept, total = 0, 0
    for item in items:
        total += len(json.dumps(item)) + 2
        if total > cap:
            break
        kept += 1
    notices.note("outline()", f"returned {kept:,} of {len(items):,} items, the first in path order (the {cap:,}-byte "
                              "tool-result limit); narrow with kind= (e.g. kind='class'), name= (a regular "
                              "expression), path= or glob=")
    return items[:kept]


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
    _visit(tree, rel, "", "module", items, _Source(data))
    return items


class _Source:
    """A file's text by node: the source of a base or a decorator exactly as written (``ast`` columns are UTF-8
    byte offsets), else ``ast.unparse``."""

    __slots__ = ("data", "starts")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts: list[int] | None = None

    def text(self, node: ast.AST) -> str:
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None:
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


def _error(rel: str, line: int | None, message: str, end_line: int | None = None) -> dict[str, Any]:
    return {"path": rel, "kind": "error", "name": None, "qualname": None, "line": line,
            "end_line": end_line if end_line is not None and line is not None and end_line >= line else line,
            "docstring": message, "bases": [], "decorators": []}


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")  # where statements nest: definitions are statements


def _visit(node: ast.AST, rel: str, prefix: str, scope: str, items: list[dict[str, Any]], source: _Source) -> None:
    """Collect the definitions and imports below ``node``; ``prefix`` is the qualname prefix of its scope
    (``""``, ``"Cls."``, ``"f.<locals>."``) and ``scope`` its kind (``module``, ``class``, ``function``). Only
    statement lists are walked (``if``/``try``/``with``/``match`` bodies too), never expressions."""
    for field in _BODIES:
        for child in getattr(node, field, ()):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = prefix + child.name
                is_class = isinstance(child, ast.ClassDef)
                kind = "class" if is_class else ("method" if scope == "class" else "function")
                doc = ast.get_docstring(child)
                bases = ([source.text(b) for b in child.bases] + [source.text(k) for k in child.keywords]
                         if isinstance(child, ast.ClassDef) else [])
                items.append({"path": rel, "kind": kind, "name": child.name, "qualname": qualname,
                              "line": child.lineno, "end_line": child.end_lineno or child.lineno,
                              "docstring": None if doc is None else doc.split("\n", 1)[0], "bases": bases,
                              "decorators": [source.text(d) for d in child.decorator_list]})
                _visit(child, rel, qualname + ("." if is_class else ".<locals>."),
                       "class" if is_class else "function", items, source)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                if isinstance(child, ast.Import):
                    modules = [alias.name for alias in child.names]
                else:
                    modules = ["." * child.level + (child.module or "")]
                for module in modules:
                    items.append({"path": rel, "kind": "import", "name": module, "qualname": prefix + module,
                                  "line": child.lineno, "end_line": child.end_lineno or child.lineno,
                                  "docstring": None, "bases": [], "decorators": []})
            else:
                _visit(child, rel, prefix, scope, items, source)
