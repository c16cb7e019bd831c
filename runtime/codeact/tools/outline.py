"""outline: the types, functions, methods and imports of source files, parsed on the host.

Python is parsed with the host's ``ast`` (:mod:`codeact.tools.outline_python`); JavaScript, TypeScript/TSX, Go, Rust,
Java, C#, C, C++, Ruby, PHP and Kotlin with tree-sitter grammars installed with the runtime
(:mod:`codeact.tools.outline_langs`). The sandbox has neither, and regular expressions get structure wrong. Files are
found by the same walk as ``glob`` (workspace only, .gitignore honoured, skipped folders left out, links not
followed); nothing in the workspace is written.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import marshal
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ..core import notices
from ..core.limits import Deadline
from ..core.pathnames import quote
from ..core.tool import ToolContext
from ..errors import ToolError
from .outline_cache import KIND_CODES, FileItems, OutlineCache
from .outline_langs import BY_ENDING, KINDS, LANGUAGES, Item, language_of
from .outline_python import SUFFIXES as PYTHON_SUFFIXES
from .outline_python import error_item, outline_python

MAX_FILE_BYTES = 1024 * 1024  # larger files are skipped, and reported as an "error" item
ENDINGS = (*PYTHON_SUFFIXES, *BY_ENDING)
LANGUAGE_NAMES = ("Python", *(lang.name for lang in LANGUAGES))
EVERY_LANGUAGE = "*.{" + ",".join(ending[1:] for ending in ENDINGS) + "}"
FIELDS = ("kind", "name", "qualname", "line", "end_line", "docstring", "bases", "decorators")


def outline(ctx: ToolContext, *, path: str = ".", glob: str | None = None, kind: str | None = None,
            name: str | None = None) -> list[dict]:
    """Types, functions, methods and imports of Python, JS/TS, Go, Rust, Java, C#, C, C++, Ruby, PHP, Kotlin files.

    Returns ``[{"path", "kind", "name", "qualname", "line", "end_line", "docstring", "bases", "decorators"}]``,
    sorted by path and line. Languages are told by file ending (a script by its ``#!`` line); by default every
    such file under ``path`` is read, or those matching ``glob`` (``*.go``; ``src/**/*.ts``). ``kind``:
    ``class``, ``struct``, ``interface``, ``trait``, ``enum``, ``type`` (an alias), ``module`` (a namespace),
    ``function``, ``method`` (a function that belongs to a type), ``import`` or ``error``. ``qualname``: the owning
    types and the name (``Cls.meth``; Python's ``outer.<locals>.inner``; a Go method's receiver type, a Rust one's
    ``impl`` type). ``name`` of an import is what it imports (``os.path``, ``./util``, ``fmt``). ``line`` and
    ``end_line``: 1-based, inclusive (a Python ``def`` line, not its decorator's). ``docstring`` (a Python
    docstring's first line), ``bases`` and ``decorators`` are Python's (as written), else ``None``/``[]``. A file that
    does not parse gives an ``error`` item (``docstring`` says why; Python: no other item; other languages: the
    parser's best reading follows); one over 1 MiB an ``error`` item with ``line`` ``None``. A file of a language
    outline does not read is named in a note. ``kind=`` keeps one kind (errors are always kept), ``name=r"Test\\w*"``
    keeps items whose ``name`` matches the regular expression whole. Files parsed once are remembered by path, size
    and modification time in your cache folder.
    """
    from .search import Glob, matching_files

    if glob is not None and (not isinstance(glob, str) or not glob.strip()):
        raise ToolError("glob must be a file pattern such as '*.go' or 'src/**/*.ts', or left out (every language)")
    if kind is not None and kind not in KINDS:
        raise ToolError(f"kind must be one of {', '.join(map(repr, KINDS))}, got {kind!r}")
    try:
        wanted = re.compile(name) if name is not None else None
    except (re.error, TypeError) as exc:
        raise ToolError(f"name must be a regular expression, got {name!r}: {exc}") from None
    root = ctx.workspace.root
    base = ctx.workspace.resolve(path, must_exist=True)
    if base.is_file():
        listed = [base.relative_to(root).as_posix()] if glob is None or Glob(glob).matches(base.name) else []
    else:
        listed = matching_files(ctx, glob or EVERY_LANGUAGE, path)[0]
    files = [rel for rel in listed if rel.lower().endswith(ENDINGS) or _interpreter(root / rel) is not None]
    _say_what_was_not_read(listed, files, path, glob)
    cache = OutlineCache.for_workspace(root, ctx.environ)
    try:
        picked, errors = _read(root, files, cache, ctx.run_deadline(), kind, wanted)
        if base == root and glob is None:
            cache.keep_only(set(files))  # deleted files leave the cache
        if errors:
            shown = ", ".join(errors[:5]) + (f" and {len(errors) - 5} more" if len(errors) > 5 else "")
            notices.note("outline()", f"{len(errors)} of {len(files)} files have a kind='error' item ({shown}): "
                                      f"not parsed (a syntax Python {sys.version_info[0]}.{sys.version_info[1]} does "
                                      "not read, over 1 MiB, unreadable) or read past a parse error; its docstring "
                                      "says why")
        picked.sort(key=lambda entry: entry[0])
        return _fitting(picked, int(ctx.limits.tool_result))
    finally:
        cache.save()


Picked = tuple[str, FileItems, "list[int] | None"]  # a file, its items, those the filters keep (None: all)


def _read(root: Path, files: list[str], cache: OutlineCache, clock: Deadline, kind: str | None,
          wanted: re.Pattern[str] | None) -> tuple[list[Picked], list[str]]:
    """Each file's items (kept ones from the cache, the rest parsed, by workers when many) that pass the filters,
    by path as shown; and the files with an ``error`` item. Filtered on the kinds and names alone: the items
    themselves are read back only when returned (:func:`_fitting`)."""
    prefix = str(root) + "/"
    known: list[tuple[str, os.stat_result | None, FileItems | None]] = []
    for rel in files:
        try:
            info: os.stat_result | None = os.lstat(prefix + rel)
        except OSError:
            info = None
        known.append((rel, info, None if info is None else cache.lookup(rel, info)))
    parsed = _parse_in_workers(root, [rel for rel, _, found in known if found is None], clock)
    code = KIND_CODES.get(kind or "")
    picked: list[Picked] = []
    errors: list[str] = []
    for done, (rel, info, found) in enumerate(known):
        if found is None:
            if rel not in parsed and done % 16 == 0:
                clock.check("outline", f"parsing file {done + 1} of {len(files)} (narrow path or glob)")
            found = parsed.pop(rel, None) or FileItems.of(outline_file(prefix + rel, rel))
            if info is not None:
                cache.store(rel, info, found)
        if found.kinds.startswith("!"):
            errors.append(quote(rel))
        keep: list[int] | None = None
        if code is not None or wanted is not None:
            names = found.all_names() if wanted is not None else []
            keep = [i for i, letter in enumerate(found.kinds) if letter == "!" or (
                (code is None or letter == code) and (wanted is None or wanted.fullmatch(names[i]) is not None))]
        if found.kinds if keep is None else keep:
            picked.append((rel, found, keep))  # quoted when returned
    return picked, errors


def _say_what_was_not_read(listed: list[str], files: list[str], path: str, glob: str | None) -> None:
    """A note for a ``path`` or ``glob`` that names no file, or files of languages outline does not read."""
    where = f"path={path!r}" + (f", glob={glob!r}" if glob is not None else "")
    if not listed:
        what = "no file" if glob is not None else f"no file of a language outline reads ({', '.join(LANGUAGE_NAMES)})"
        notices.note("outline()", f"{what} matches {where}")
        return
    if len(files) < len(listed):
        unread = Counter(os.path.splitext(rel)[1].lower() or "(no ending)" for rel in listed
                         if not rel.lower().endswith(ENDINGS))
        kinds = ", ".join(f"{ending} ({count})" for ending, count in unread.most_common(6))
        notices.note("outline()", f"{len(listed) - len(files)} of {len(listed)} files matching {where} are in no "
                                  f"language outline reads, by ending: {kinds}; it reads {', '.join(LANGUAGE_NAMES)}")


def _fitting(picked: list[Picked], cap: int) -> list[dict[str, Any]]:
    """The items as dicts, each file's in line order, as many as fit the tool-result limit; a note when not all do
    (the rest are only counted, never read back)."""
    total = sum(len(found.kinds) if keep is None else len(keep) for _, found, keep in picked)
    out: list[dict[str, Any]] = []
    size, full = 2, False
    for rel, found, keep in picked:
        items = found.items()
        chosen = items if keep is None else [items[i] for i in keep]
        shown = quote(rel)
        entries = [{"path": shown, **dict(zip(FIELDS, item))} for item in sorted(chosen, key=lambda i: i[3] or 0)]
        whole = len(json.dumps(entries))  # one measure a file; item by item only where the limit falls
        if size + whole <= cap:
            out += entries
            size += whole
            continue
        for entry in entries:
            size += len(json.dumps(entry)) + 2
            if size > cap:
                break
            out.append(entry)
        full = True
        break
    if full:
        notices.note("outline()", f"returned {len(out):,} of {total:,} items, the first in path order (the {cap:,}-"
                                  "byte tool-result limit); narrow with kind= (e.g. kind='class'), name= (a regular "
                                  "expression), path= or glob=")
    return out


PARALLEL_MIN = 64  # files to parse before worker processes pay for their start
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from codeact.tools.outline import main; main()"


def _parse_in_workers(root: Path, rels: list[str], clock: Deadline) -> dict[str, FileItems]:
    """The items of many files parsed by worker processes, one per CPU (at most 8), each killed at the deadline;
    ``{}`` when there are too few files or CPUs (the files are then parsed here, one by one)."""
    workers = min(os.cpu_count() or 1, 8, len(rels) // (PARALLEL_MIN // 2))
    if workers < 2 or len(rels) < PARALLEL_MIN:
        return {}
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from .proc import Child

    runtime = str(Path(__file__).resolve().parents[2])

    def one(part: list[str]) -> dict[str, FileItems]:
        with tempfile.NamedTemporaryFile("wb", prefix="codeact-outline-", suffix=".bin") as spec:
            marshal.dump((str(root), part), spec)
            spec.flush()
            child = Child.start([sys.executable, "-I", "-c", _BOOT, runtime, spec.name], root, clock,
                                "outline", f"parsing {len(rels)} files")
            if child is None:
                return {}
            with child:
                data = b"".join(child)
        try:
            return {rel: FileItems(*entry) for rel, entry in marshal.loads(data).items()}
        except (ValueError, EOFError, TypeError):
            return {}  # a worker that failed: its files are parsed here

    with ThreadPoolExecutor(workers) as pool:
        found: dict[str, FileItems] = {}
        for part in pool.map(one, [rels[i::workers] for i in range(workers)]):
            found.update(part)
    return found


def main() -> None:
    """An outline worker: the files named in the marshal file ``argv[2]``, parsed; ``{rel: (kinds, names, items)}``
    (:class:`FileItems`) on stdout."""
    root, rels = marshal.loads(Path(sys.argv[2]).read_bytes())
    out = marshal.dumps({rel: FileItems.of(outline_file(Path(root) / rel, rel))[:3] for rel in rels})
    view = memoryview(out)
    while view:
        view = view[os.write(1, view):]


_SHEBANG = re.compile(rb"#!\S*?(?:/env(?:\s+-\S+)*\s+|/)(python|node|ruby|php)[0-9.]*\b")
_BY_INTERPRETER = {b"python": "Python", b"node": "JavaScript", b"ruby": "Ruby", b"php": "PHP"}


def _interpreter(source: Path | bytes) -> str | None:
    """The language a script's ``#!`` line names (a file with no ending outline knows), if it reads it."""
    if isinstance(source, Path):
        if source.name.lower().endswith(ENDINGS) or "." in source.name:
            return None
        try:
            with open(source, "rb") as handle:
                source = handle.read(128)
        except OSError:
            return None
    found = _SHEBANG.match(source)
    return _BY_INTERPRETER[found[1]] if found else None


_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def outline_file(file: os.PathLike[str] | str, rel: str) -> list[Item]:
    """The items of one file, in source order (an ``error`` item first); ``rel`` names it in messages."""
    try:  # no link followed: the walk lists none, and a file swapped for one since is refused here
        fd = os.open(file, _READ)
        try:
            size = os.fstat(fd).st_size
            if size > MAX_FILE_BYTES:
                return [error_item(None, f"skipped: {size} bytes is over the {MAX_FILE_BYTES} byte (1 MiB) limit")]
            data = os.read(fd, MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        return [error_item(None, f"cannot read: {exc.strerror}")]
    lang = language_of(rel)
    if rel.lower().endswith(PYTHON_SUFFIXES) or (lang is None and _interpreter(data) == "Python"):
        return outline_python(data, rel)
    if lang is None:
        by_line = _interpreter(data)
        lang = next((one for one in LANGUAGES if one.name == by_line), None)
    if lang is None:
        return [error_item(None, "not a language outline reads")]
    try:
        from .outline_langs import outline_source

        return outline_source(lang, data)
    except ImportError as exc:
        return [error_item(None, f"the {lang.name} grammar is not installed ({exc.name}); the runtime's "
                                 "requirements.txt installs it: run `.codeact/bin/codeact doctor`")]
    except (RecursionError, MemoryError, ValueError) as exc:
        return [error_item(None, f"{lang.name} could not be parsed: {exc}")]
