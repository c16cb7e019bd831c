"""outline: the types, functions, methods and imports of source files, parsed on the host.

Python is parsed with the host's ``ast`` (:mod:`codeact.tools.outline_python`); JavaScript, TypeScript/TSX, Go, Rust,
Java, C#, C, C++, Ruby, PHP and Kotlin with tree-sitter grammars installed with the runtime
(:mod:`codeact.tools.outline_langs`). The sandbox has neither, and regular expressions get structure wrong. Files are
found by the same walk as ``glob`` (workspace only, .gitignore honoured, skipped folders left out, links not
followed); nothing in the workspace is written. A file that could cost more than a moment to parse (one over
:data:`~codeact.tools.outline_langs.IN_PROCESS_BYTES` in a tree-sitter language) is parsed in a worker process only,
which the run's deadline and memory limit end.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import gc
import json
import marshal
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core import notices
from ..core.beneath import open_listed
from ..core.limits import Deadline
from ..core.pathnames import quote
from ..core.patterns import check_pattern, compile_uncached
from ..core.tool import Cut, ToolContext
from ..errors import ToolError
from .outline_cache import KIND_CODES, FileItems, OutlineCache, Stamp
from .outline_langs import BY_ENDING, IN_PROCESS_BYTES, KINDS, LANGUAGES, Item, TooCostly, language_of
from .outline_names import NameFilter
from .outline_python import SUFFIXES as PYTHON_SUFFIXES
from .outline_python import error_item, outline_python

MAX_FILE_BYTES = 1024 * 1024  # larger files are skipped, and reported as an "error" item
# Python files larger than this are parsed in a worker only: ast's tree of a dense file (``x=a,a,a,...``) takes
# hundreds of times its size (1 MiB: 670 MiB), past the run's memory limit, in the host
PYTHON_IN_PROCESS_BYTES = 64 * 1024
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
    keeps items whose ``name`` matches the regular expression whole. Files parsed once are remembered in your cache
    folder until they change; a call stopped at the deadline keeps what it parsed, so the same call again goes on.
    """
    from .search import Glob, matching_files

    if glob is not None and (not isinstance(glob, str) or not glob.strip()):
        raise ToolError("glob must be a file pattern such as '*.go' or 'src/**/*.ts', or left out (every language)")
    if kind is not None and kind not in KINDS:
        raise ToolError(f"kind must be one of {', '.join(map(repr, KINDS))}, got {kind!r}")
    check_pattern(name, "name")
    try:
        wanted = compile_uncached(name) if name is not None else None
    except (re.error, TypeError, RecursionError, OverflowError) as exc:
        raise ToolError(f"name must be a regular expression, got {name!r}: {exc}") from None
    root = ctx.workspace.root
    base = ctx.workspace.resolve(path, must_exist=True)
    if base.is_file():
        listed = [base.relative_to(root).as_posix()] if glob is None or Glob(glob).matches(base.name) else []
    else:
        listed = matching_files(ctx, glob or EVERY_LANGUAGE, path)[0]
    files = [rel for rel in listed if rel.lower().endswith(ENDINGS) or _script_language(f"{root}/", rel) is not None]
    _say_what_was_not_read(listed, files, path, glob)
    cache = OutlineCache.for_workspace(root, ctx.environ, with_names=wanted is not None)
    try:
        clock = ctx.run_deadline()
        names = NameFilter(wanted, root, clock) if wanted is not None else None
        parsing = _Parsing(root, clock, int(ctx.limits.memory))
        picked, errors = _read(parsing, files, cache, kind, names)
        if base == root and glob is None:
            cache.keep_only(set(files))  # deleted files leave the cache
        if errors:
            shown = ", ".join(errors[:5]) + (f" and {len(errors) - 5} more" if len(errors) > 5 else "")
            notices.note("outline()", f"{len(errors)} of {len(files)} files have a kind='error' item ({shown}): "
                                      f"not parsed (Python source Python {sys.version_info[0]}.{sys.version_info[1]} "
                                      "does not read, over 1 MiB, unreadable) or read past a parse error; its "
                                      "docstring says why")
        picked.sort(key=lambda entry: entry[0])  # the listing's order already: one pass
        return _fitting(picked, cache, parsing, kind, names, int(ctx.limits.tool_result))
    finally:
        cache.save()


# A file whose items pass the filters: its path, the stamp its kept items were validated with (None: parsed in this
# run), its items when parsed in this run, and how many items pass.
Picked = tuple[str, "Stamp | None", "FileItems | None", int]
# The same, with its kinds and names for a name= filter, before the names are matched.
Named = tuple[str, "Stamp | None", "FileItems | None", str, list[str]]


def _read(parsing: _Parsing, files: list[str], cache: OutlineCache, kind: str | None,
          wanted: NameFilter | None) -> tuple[list[Picked], list[str]]:
    """The files (in ``files``' order) with items that pass the filters, and those with an ``error`` item. A file
    whose stamp is the one kept is counted from the cache's kinds (and names) alone; the rest are parsed, by workers
    when many (and when costly), and kept. Items are read back only when returned (:func:`_fitting`)."""
    prefix = parsing.prefix
    stamps, lstat, apart = cache.stamps, os.lstat, parsing.apart
    listed: list[tuple[str, os.stat_result | None, Stamp | None]] = []
    stale: list[str] = []
    for rel in files:  # the hot loop of a cached outline: one lstat and one dict look-up a file
        try:
            info: os.stat_result | None = lstat(prefix + rel)
        except OSError:
            info = None
        entry = stamps.get(rel)
        now = None if info is None else (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        if entry is None or entry[1:5] != now:
            stale.append(rel)
            if now is not None and now[0] <= MAX_FILE_BYTES and now[0] > (
                    PYTHON_IN_PROCESS_BYTES if rel.lower().endswith(PYTHON_SUFFIXES) else IN_PROCESS_BYTES):
                apart.add(rel)  # parsed by a worker only
            now = None
        listed.append((rel, info, now))
    parsed: dict[str, FileItems] = {}
    parsing.detail = f"parsing {len(stale)} files" + (
        " (those parsed by then are kept: the same call again goes on from there)" if cache.file else "")
    try:
        _parse_in_workers(parsing, stale, parsed)
        _parse_the_rest(parsing, stale, parsed)
    finally:  # at the deadline too: what was parsed is kept, and the next run goes on from there
        for rel, info, _ in listed:
            if info is not None and rel in parsed:
                cache.store(rel, info, parsed[rel])
    code = KIND_CODES.get(kind or "")
    picked: list[Picked] = []
    errors: list[str] = []
    named: list[Named] = []  # counted once their names are matched
    for rel, _, kept in listed:
        found = None
        if kept is None:
            found = parsed[rel]
            kinds = found.kinds
        else:
            kinds = stamps[rel][5]
        if kinds.startswith("!"):
            errors.append(quote(rel))
        if wanted is not None:
            named.append((rel, kept, found, kinds, (found.names if found is not None else
                                                    cache.names.get(rel, "")).split("\0")))
            continue
        count = len(kinds) if code is None else kinds.count(code) + (kinds.count("!") if code != "!" else 0)
        if count:
            picked.append((rel, kept, found, count))  # quoted when returned
    if wanted is not None:
        picked += _named(named, wanted, code)
    return picked, errors


def _named(named: list[Named], wanted: NameFilter, code: str | None) -> list[Picked]:
    """The files of ``named`` with items whose name ``wanted`` matches (of kind ``code``, if given) or an error item:
    every distinct name is matched at once, where the run's deadline stops a pattern that backtracks."""
    wanted.ask(one for *_, kinds, names in named for letter, one in zip(kinds, names)
               if letter != "!" and (code is None or letter == code))
    picked: list[Picked] = []
    for rel, kept, found, kinds, names in named:
        count = sum(1 for letter, one in zip(kinds, names) if letter == "!" or (
            (code is None or letter == code) and one in wanted))
        if count:
            picked.append((rel, kept, found, count))
    return picked


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


def _fitting(picked: list[Picked], cache: OutlineCache, parsing: _Parsing, kind: str | None,
             wanted: NameFilter | None, cap: int) -> Cut:
    """The items as dicts, each file's in line order, as many as fit the tool-result limit; a note when not all do
    (the rest are only counted, never read back). Sized as the runner counts (JSON, non-ASCII kept), so that the
    runner need not encode the answer again."""
    total = sum(count for *_, count in picked)
    out: list[dict[str, Any]] = []
    size, full = 2, False
    for rel, items in _items_in_order(picked, cache, parsing):
        if wanted is not None:
            wanted.ask(item[1] or "" for item in items)  # names asked already are not asked again
        if kind is not None or wanted is not None:
            items = [item for item in items if item[0] == "error" or ((kind is None or item[0] == kind) and (
                wanted is None or (item[1] or "") in wanted))]
        shown = quote(rel)
        entries = [{"path": shown, **dict(zip(FIELDS, item))} for item in sorted(items, key=lambda i: i[3] or 0)]
        whole = len(json.dumps(entries, ensure_ascii=False))  # one measure a file; item by item only where the limit falls
        if size + whole <= cap:
            out += entries
            size += whole
            continue
        for entry in entries:
            size += len(json.dumps(entry, ensure_ascii=False)) + 2
            if size > cap:
                break
            out.append(entry)
        full = True
        break
    if full:
        notices.note("outline()", f"returned {len(out):,} of {total:,} items, the first in path order (the {cap:,}-"
                                  "byte tool-result limit); narrow with kind= (e.g. kind='class'), name= (a regular "
                                  "expression), path= or glob=")
    return Cut(out, 0, within=cap)


def _items_in_order(picked: list[Picked], cache: OutlineCache,
                    parsing: _Parsing) -> Iterator[tuple[str, list[Item]]]:
    """Each picked file's items, read from the cache in batches that grow as more are wanted (a file whose kept
    items changed since its stamp was checked is parsed again)."""
    start, step = 0, 32
    while start < len(picked):
        part = picked[start:start + step]
        blobs = cache.items((rel, kept) for rel, kept, found, _ in part if found is None and kept is not None)
        for rel, _, found, _ in part:
            blob = found.blob if found is not None else blobs.get(rel)
            yield rel, marshal.loads(blob if blob is not None else parsing.one(rel).blob)
        start, step = start + step, min(step * 2, 512)


PARALLEL_MIN = 64  # files to parse before worker processes pay for their start
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from codeact.tools.outline import main; main()"
_RUNTIME = str(Path(__file__).resolve().parents[2])  # the folder holding the codeact package
_WAIT_S = 0.005  # how long this process sleeps while only workers have files left to parse


class _Parsing:
    """One call's parsing: the workspace, the run's deadline and memory limit (the workers' bound), what the
    deadline's error says (``detail``), and the files this process leaves to a worker (``apart``: over
    :data:`~codeact.tools.outline_langs.IN_PROCESS_BYTES`, or found too costly here)."""

    __slots__ = ("apart", "clock", "detail", "memory", "prefix", "root")

    def __init__(self, root: Path, clock: Deadline, memory: int) -> None:
        self.root, self.prefix, self.clock, self.memory = root, f"{root}/", clock, memory
        self.detail = "parsing files"
        self.apart: set[str] = set()

    def here(self, rel: str) -> FileItems | None:
        """``rel`` parsed in this process, or ``None`` (and ``rel`` left to a worker) where that could cost more
        than a moment."""
        try:
            return FileItems.of(outline_file(self.prefix, rel, bounded=True))
        except TooCostly:
            self.apart.add(rel)
            return None

    def one(self, rel: str) -> FileItems:
        """``rel`` parsed here, or by a worker where it is costly."""
        found: dict[str, FileItems] = {}
        _parse_the_rest(self, [rel], found)
        return found[rel]

    def start(self, rels: list[str], spec: str, batch: int) -> Any:
        """A worker parsing ``rels`` (listed in the file ``spec``) and sending ``batch`` files at a time, or
        ``None`` where it cannot be started."""
        from .proc import Child

        Path(spec).write_bytes(marshal.dumps((self.prefix, rels, batch)))
        return Child.start([sys.executable, "-I", "-c", _BOOT, _RUNTIME, spec], self.root, self.clock, "outline",
                           self.detail, stream=True, memory=self.memory)


class _Share:
    """A worker's part of the files: it parses them from the front and sends them in order (``sent`` arrived so
    far), while this process takes the last ones not yet taken (``back``), down to ``floor`` (the files before it
    are the worker's alone: those ``apart``); the part is done when ``sent`` reaches ``back``. ``ended``: the
    worker's output ended (it finished, failed, or was killed)."""

    __slots__ = ("back", "child", "ended", "floor", "rels", "sent")

    def __init__(self, rels: list[str], floor: int = 0) -> None:
        self.rels, self.sent, self.back, self.floor = rels, 0, len(rels), floor
        self.child: Any = None
        self.ended = False

    def receive(self, found: dict[str, FileItems]) -> None:
        """Read the worker's batches into ``found`` until its output ends (a thread of its own)."""
        pending = bytearray()
        try:
            with self.child as child:
                for data in child:
                    pending += data
                    while len(pending) >= 4 and len(pending) >= 4 + (size := int.from_bytes(pending[:4], "little")):
                        try:
                            batch = marshal.loads(pending[4:4 + size])
                            found.update(zip(self.rels[self.sent:self.sent + len(batch)],
                                             map(FileItems._make, batch)))
                        except (ValueError, EOFError, TypeError):
                            return  # a worker that failed: the rest of its part is parsed after
                        self.sent += len(batch)
                        del pending[:4 + size]
        finally:
            self.ended = True


def _parse_in_workers(parsing: _Parsing, rels: list[str], found: dict[str, FileItems]) -> None:
    """Many files parsed into ``found`` by this process and a worker process for each other CPU (eight processes at
    most): each worker parses its part from the front (the part's files ``apart`` first), sending a batch at a
    time, and this process parses from the back of the part with the most left, so that no CPU waits for another.
    At the deadline the workers are killed; what arrived before is in ``found`` when the deadline's error is
    raised. Nothing when there are too few files or CPUs; a file no one sent (a worker that failed) is left out:
    the caller parses what is not in ``found``."""
    processes = min(os.cpu_count() or 1, 8, len(rels) // (PARALLEL_MIN // 2))
    if processes < 2 or len(rels) < PARALLEL_MIN:
        return
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    workers, apart = processes - 1, parsing.apart
    shares = []
    for i in range(workers):
        part = rels[len(rels) * i // workers:len(rels) * (i + 1) // workers]
        costly = [rel for rel in part if rel in apart] if apart else []
        if costly:
            part = costly + [rel for rel in part if rel not in apart]
        shares.append(_Share(part, len(costly)))
    with tempfile.TemporaryDirectory(prefix="codeact-outline-") as scratch, ThreadPoolExecutor(workers) as pool:
        receiving = []
        try:
            for number, share in enumerate(shares):
                share.child = parsing.start(share.rels, f"{scratch}/{number}.bin", WORKER_BATCH)
                if share.child is not None:
                    receiving.append(pool.submit(share.receive, found))
                else:
                    share.ended = True
            _parse_from_the_back(shares, parsing, found)
        finally:
            for share in shares:
                if share.child is not None:
                    share.child.proc.kill()
            for future in receiving:
                future.exception()  # every batch that arrived is in ``found`` before this returns or raises
        for future in receiving:
            future.result()  # the deadline's error, if a worker was stopped by it


def _left_here(share: _Share) -> int:
    """How many files of ``share`` this process may still take."""
    return share.back - (share.sent if share.sent > share.floor else share.floor)


def _parse_from_the_back(shares: list[_Share], parsing: _Parsing, found: dict[str, FileItems]) -> None:
    """This process's part of :func:`_parse_in_workers`: the last file not taken of the part with the most left,
    until every part is done (a worker whose part is done is killed: what it parses now is parsed already); then,
    while only workers have files left (those ``apart``), it waits for them."""
    import time

    clock, detail = parsing.clock, parsing.detail
    collecting = gc.isenabled()
    gc.disable()  # parsing makes no cycles: the collector would only walk its garbage, again and again
    try:
        done = 0
        while True:
            share = max(shares, key=_left_here)
            clock.check("outline", detail)
            if _left_here(share) > 0:
                share.back -= 1
                rel = share.rels[share.back]
                items = parsing.here(rel)
                if items is not None:
                    found[rel] = items
                done += 1
                if done % 16:
                    continue
            elif all(one.ended or one.sent >= one.back for one in shares):
                return
            else:
                time.sleep(_WAIT_S)
            for one in shares:
                if one.child is not None and one.back <= one.sent:
                    one.child.proc.kill()
    finally:
        if collecting:
            gc.enable()


def _parse_the_rest(parsing: _Parsing, rels: list[str], found: dict[str, FileItems]) -> None:
    """Each of ``rels`` not yet in ``found`` parsed into it: here, one by one, the deadline checked before each,
    and those ``apart`` (or found too costly here) by a worker."""
    clock, late = parsing.clock, []
    for done, rel in enumerate(rels):
        if rel in found:
            continue
        if rel not in parsing.apart:
            clock.check("outline", f"parsing file {done + 1} of {len(rels)} (narrow path or glob)")
            items = parsing.here(rel)
            if items is not None:
                found[rel] = items
                continue
        late.append(rel)
    if late:
        _parse_apart(parsing, late, found)


def _parse_apart(parsing: _Parsing, rels: list[str], found: dict[str, FileItems]) -> None:
    """``rels`` parsed into ``found`` by a worker process sending one file at a time, even for a single file: the
    run's deadline kills it (and its error is raised here). A file whose parse ended the worker otherwise (most
    likely at the run's memory limit) gets an ``error`` item, and a new worker goes on with the files after it."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="codeact-outline-") as scratch:
        while rels:
            share = _Share(rels)
            share.child = parsing.start(rels, f"{scratch}/apart.bin", 1)
            if share.child is None:
                raise ToolError(f"outline() could not start a process to parse {quote(rels[0])} in (files over "
                                f"{IN_PROCESS_BYTES // 1024} KiB are parsed in one): {sys.executable} did not start")
            share.receive(found)  # the deadline's error, if it was stopped by it
            if share.sent >= len(rels):
                return
            found[rels[share.sent]] = FileItems.of([error_item(None, _ended(share.child, parsing.memory))])
            rels = rels[share.sent + 1:]


def _ended(child: Any, memory: int) -> str:
    """Why a worker that ended before sending a file gives no items for it."""
    import signal

    code = child.proc.returncode
    if code is None or code >= 0:
        how = f"exit status {code}" if code is not None else "no answer"
    else:
        try:
            how = signal.Signals(-code).name
        except ValueError:
            how = f"signal {-code}"
    from .confine import CHILD_HEADROOM

    return (f"not parsed: the process parsing it ended ({how}), most likely as it needed more memory than the "
            f"run's limit of {memory >> 20} MiB (and {CHILD_HEADROOM >> 20} MiB for the parser) allows; raise "
            "CODEACT_MEMORY")


WORKER_BATCH = 64  # files a worker sends at once


def main() -> None:
    """An outline worker: the files named in the marshal file ``argv[2]`` (a prefix, the paths under it, and how
    many to send at once), parsed in order; batches of their :class:`FileItems` as tuples on stdout, each a 4-byte
    little-endian length and its ``marshal`` form."""
    prefix, rels, batch = marshal.loads(Path(sys.argv[2]).read_bytes())
    gc.disable()  # parsing makes no cycles, and this process ends when it is done
    for start in range(0, len(rels), batch):
        out = marshal.dumps([tuple(FileItems.of(outline_file(prefix, rel)))
                             for rel in rels[start:start + batch]])
        view = memoryview(len(out).to_bytes(4, "little") + out)
        while view:
            view = view[os.write(1, view):]


_SHEBANG = re.compile(rb"#!\S*?(?:/env(?:\s+-\S+)*\s+|/)(python|node|ruby|php)[0-9.]*\b")
_BY_INTERPRETER = {b"python": "Python", b"node": "JavaScript", b"ruby": "Ruby", b"php": "PHP"}


def _interpreter(source: bytes) -> str | None:
    """The language a script's ``#!`` line names, if it reads it."""
    found = _SHEBANG.match(source)
    return _BY_INTERPRETER[found[1]] if found else None


def _script_language(prefix: str, rel: str) -> str | None:
    """The language the ``#!`` line of ``rel`` (a file with no ending outline knows) names, if it reads it."""
    name = rel.rsplit("/", 1)[-1]
    if name.lower().endswith(ENDINGS) or "." in name:
        return None
    try:
        opened = open_listed(prefix[:-1], rel)
    except (OSError, ToolError):
        return None
    try:
        return _interpreter(os.read(opened.fd, 128))
    except OSError:
        return None
    finally:
        os.close(opened.fd)


MAX_ITEM_TEXT = 256  # characters of an item's name, qualname, docstring, each base and decorator; past it cut


def _cut(text: str | None) -> str | None:
    return text if text is None or len(text) <= MAX_ITEM_TEXT else text[:MAX_ITEM_TEXT - 1] + "\u2026"


def _capped(items: list[Item]) -> list[Item]:
    """``items`` with each text cut to :data:`MAX_ITEM_TEXT` (a mark at the cut): a qualname holds every name
    above it, so 98 classes nested one in the next, each named with 10,000 characters (a 1 MB file), made items of
    48 MB, held by the host and written to the outline cache."""
    def long(item: Item) -> bool:
        return any(isinstance(text, str) and len(text) > MAX_ITEM_TEXT for text in (item[1], item[2], item[5])) or \
            any(len(text) > MAX_ITEM_TEXT for text in (*item[6], *item[7]))

    return [(kind, _cut(name), _cut(qualname), line, end, _cut(doc), [str(_cut(b)) for b in bases],
             [str(_cut(d)) for d in decorators]) if long((kind, name, qualname, line, end, doc, bases, decorators))
            else (kind, name, qualname, line, end, doc, bases, decorators)
            for kind, name, qualname, line, end, doc, bases, decorators in items]


def outline_file(prefix: str, rel: str, bounded: bool = False) -> list[Item]:
    """:func:`_outline_file`, each item's texts cut (:func:`_capped`)."""
    return _capped(_outline_file(prefix, rel, bounded))


def _outline_file(prefix: str, rel: str, bounded: bool = False) -> list[Item]:
    """The items of the file ``prefix + rel`` (``prefix``: the workspace root and a ``/``), in source order (an
    ``error`` item first); ``rel`` names it in messages. Opened part by part, no link followed: a folder swapped for
    a link since the listing is refused, never followed. ``bounded`` (the host): raise
    :class:`~codeact.tools.outline_langs.TooCostly` for a tree-sitter file that could take more than a moment."""
    try:
        opened = open_listed(prefix[:-1], rel)
    except (OSError, ToolError) as exc:
        return [error_item(None, f"cannot read: {getattr(exc, 'strerror', None) or exc}")]
    try:
        size = opened.stat.st_size
        if size > MAX_FILE_BYTES:
            return [error_item(None, f"skipped: {size} bytes is over the {MAX_FILE_BYTES} byte (1 MiB) limit")]
        data = os.read(opened.fd, MAX_FILE_BYTES + 1)
    except OSError as exc:
        return [error_item(None, f"cannot read: {exc.strerror}")]
    finally:
        os.close(opened.fd)
    lang = language_of(rel)
    if rel.lower().endswith(PYTHON_SUFFIXES) or (lang is None and _interpreter(data) == "Python"):
        if bounded and len(data) > PYTHON_IN_PROCESS_BYTES:
            raise TooCostly  # ast's tree of a dense file is hundreds of times its size
        return outline_python(data, rel)
    if lang is None:
        by_line = _interpreter(data)
        lang = next((one for one in LANGUAGES if one.name == by_line), None)
    if lang is None:
        return [error_item(None, "not a language outline reads")]
    try:
        from .outline_langs import outline_source

        return outline_source(lang, data, bounded)
    except ImportError as exc:
        return [error_item(None, f"the {lang.name} grammar is not installed ({exc.name}); the runtime's "
                                 "requirements.txt installs it: run `.codeact/bin/codeact doctor`")]
    except (RecursionError, MemoryError, ValueError) as exc:
        return [error_item(None, f"{lang.name} could not be parsed: {exc}")]
