"""The sql tool: SQLite on a database file inside the workspace (or in memory), with file access fenced off."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from typing import Any, NamedTuple, cast

from ..core import notices
from ..core.limits import Deadline
from ..core.tool import ToolContext
from ..errors import PolicyError, ToolError

_SIDE_FILES = ("-journal", "-wal", "-shm")  # the files SQLite keeps beside a database


def sql(ctx: ToolContext, *, query: str, db: str = ":memory:") -> list[dict]:
    """Run SQLite ``query`` on ``db`` (a workspace path, created if missing; default a fresh in-memory database).

    ``query`` may hold several statements separated by ``;``; they run in order (each commits unless you write
    BEGIN ... COMMIT) and the rows of the LAST one are returned as dicts (``[]`` if it returns no rows). So one
    call can build and query a scratch table: ``sql(query="CREATE TABLE t(x); INSERT INTO t VALUES (1); SELECT * FROM t")``.
    ATTACH, DETACH, VACUUM INTO and extension loading are refused: they reach files outside the workspace; so is
    fts3_tokenizer(), which reaches native code in the host. PRAGMAs are limited to the informational ones
    (``PRAGMA table_info(t)``, ``index_list``, ``integrity_check``, reading ``user_version`` ...) and ``foreign_keys``/``recursive_triggers``, which last only for the call.
    The query is stopped at the run's deadline, and SQLite's memory is capped at the run's memory limit (temporary
    tables and sorts are kept in memory, under that limit).
    """
    import sqlite3  # noqa: F401  # before the confined thread, which cannot read the module's files

    deadline = ctx.run_deadline()

    if not isinstance(query, str) or not query.strip():
        raise ValueError("query must be a non-empty SQL string")
    statements = split_statements(query, deadline)
    if not statements:
        raise ValueError("query holds no SQL statement")
    deadline.check("sql", "opening the database")
    if db == ":memory:":
        return _run(ctx, None, statements, deadline, db)
    database = _database(ctx, db)
    try:
        before = database.size()
        try:
            if database.folder is None:  # pragma: no cover - Windows: no folder descriptor to confine to
                return _run(ctx, database, statements, deadline, db)
            from . import confine

            run = notices.carried(lambda: _run(ctx, database, statements, deadline, db))
            return cast("list[dict]", confine.run_writing_below(database.folder, run, "sql"))
        finally:  # what the file grew by counts against the write limit
            deadline.written += max(0, database.size() - before)
    finally:
        database.close()


class _Database(NamedTuple):
    """A database file checked inside the workspace: its real path (what SQLite opens), its name, the descriptor of
    its folder (reached with no link followed; ``None`` on Windows) and the name the program sees."""

    path: str
    name: str
    folder: int | None
    shown: str

    def size(self) -> int:
        """The file's size now (0 if it is missing), looked up in its folder."""
        try:
            if self.folder is None:  # pragma: no cover - Windows
                return os.stat(self.path).st_size
            return os.stat(self.name, dir_fd=self.folder, follow_symlinks=False).st_size
        except OSError:
            return 0

    def close(self) -> None:
        if self.folder is not None:
            os.close(self.folder)


def _run(ctx: ToolContext, database: _Database | None, statements: list[str], deadline: Deadline,
         db: str) -> list[dict]:
    """The statements run on ``database`` (``None``: in memory). Where Landlock is, in a thread that may open files
    in the database's folder only: SQLite opens the database and its journal by path, so a folder on the way
    swapped for a link to an outside folder meanwhile leads to files it may not open, never to outside ones."""
    import sqlite3

    refused: list[str] = []
    target = ":memory:" if database is None else database.path
    try:
        conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False, uri=False)
    except sqlite3.Error as exc:
        assert database is not None  # memory always opens
        raise ToolError(f"SQL error: {exc} (opening {database.shown}; did a folder on its way change meanwhile?)"
                        ) from None
    try:
        if database is not None:  # the file may grow by what is left of the run's write limit, no more (set
            # before the authorizer, which refuses this PRAGMA to programs)
            left = max(0, int(ctx.limits.writes) - deadline.written)
            try:
                page = int(conn.execute("PRAGMA page_size").fetchone()[0])
                pages = int(conn.execute("PRAGMA page_count").fetchone()[0]) + left // page
                conn.execute(f"PRAGMA max_page_count = {max(1, pages)}")
            except sqlite3.Error as exc:  # not a database, locked, ...: as any statement's error
                raise ToolError(f"SQL error: {exc} (opening {database.shown})") from None
        _fence(conn, refused, deadline, max(1 << 20, int(ctx.limits.memory) // 4), _heap_limit(ctx))
        rows: list[dict[str, Any]] = []
        for statement in statements:
            try:
                cursor = conn.execute(statement)
                rows = _fetch(cursor, int(ctx.limits.tool_result)) if cursor.description else []
            except MemoryError:
                text = (f"SQL error: the query needs more than the {_heap_limit(ctx) // (1 << 20)} MiB memory limit "
                        "(CODEACT_MEMORY raises it); add LIMIT or aggregate in SQL")
                notices.note("sql()", text + " (temporary tables and sorts are kept in memory, under this limit)")
                raise ToolError(text) from None
            except sqlite3.Error as exc:
                if refused:
                    raise PolicyError(refused[-1]) from None
                if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc) and database is not None:
                    text = (f"sql(db={db!r}) was refused: the database would grow past this run's write limit of "
                            f"{int(ctx.limits.writes):,} bytes (what create(), edit() and sql() may write in one "
                            "run); write less, or raise CODEACT_WRITES")
                    notices.note("sql()", text)
                    raise ToolError(text) from None
                if deadline.expired() and "interrupt" in str(exc):
                    raise deadline.stopped("sql", "running the query") from None
                shown = statement.strip().rstrip(";")
                shown = shown if len(shown) <= 200 else shown[:200] + "..."
                raise ToolError(f"SQL error: {exc} (in: {shown})") from None
        return rows
    finally:
        conn.close()


def _database(ctx: ToolContext, db: str) -> _Database:
    """The database file ``db``: inside the workspace, writable there, its folder existing and opened with no link
    followed, and neither it nor a journal file beside it a symbolic link (SQLite opens those by name and follows
    a link: an outside path's existence would show in the answer) or a file with other hard links (another name of
    it may lie outside the workspace: SQLite would write there)."""
    from . import atomic

    real = ctx.workspace.resolve_for_write(db)
    shown = ctx.workspace.display(real)
    parts = real.relative_to(ctx.workspace.root).parts
    if not parts:
        raise IsADirectoryError(f"db {shown} is a folder; give a database file path")
    try:
        folder = atomic.open_folder(ctx.workspace.root, parts[:-1], f"db {shown}")
    except FileNotFoundError:
        raise FileNotFoundError(f"db {shown}: its folder does not exist") from None
    if folder is None:  # pragma: no cover - Windows: checked by path
        if real.is_dir():
            raise IsADirectoryError(f"db {shown} is a folder; give a database file path")
        if not real.parent.is_dir():
            raise FileNotFoundError(f"db {shown}: its folder does not exist")
        for suffix in _SIDE_FILES:
            if os.path.islink(f"{real}{suffix}"):
                raise PolicyError(f"db {shown}: {real.name}{suffix} is a symbolic link; SQLite would follow it: "
                                  "remove the link (a database's journal files are its own)")
        return _Database(str(real), real.name, None, shown)
    try:
        _check_file(folder, real.name, f"db {shown}")
        for suffix in _SIDE_FILES:
            _check_file(folder, real.name + suffix, f"db {shown}: {real.name}{suffix}", side=True)
    except BaseException:
        os.close(folder)
        raise
    return _Database(str(real), real.name, folder, shown)


def _check_file(folder: int, name: str, what: str, *, side: bool = False) -> None:
    """Refuse the database's file (``side``: a journal file of it) ``name`` in ``folder`` if it is a link, a folder,
    a special file or a file with other hard links; nothing to refuse if it is missing. ``what`` names it."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        if side:
            raise PolicyError(f"{what} is a symbolic link; SQLite would follow it: remove the link (a database's "
                              "journal files are its own)")
        raise PolicyError(f"{what} became a symbolic link after it was checked; nothing was opened")
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(f"{what} is a folder; give a database file path")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{what} is not a regular file (a pipe, socket or device); sql opens database files only")
    if info.st_nlink > 1:
        raise PolicyError(f"{what} has {info.st_nlink} hard links; sql refuses it: another name of the same file "
                          "may lie outside the workspace, and SQLite would write there too. Copy it to a file of "
                          "its own (cp) and query the copy")


def split_statements(script: str, deadline: Deadline | None = None) -> list[str]:
    """``script`` cut into complete statements, quotes, comments and trigger bodies respected.

    One pass finds the ``;`` outside quotes and comments; SQLite's ``complete_statement`` is asked only at those,
    and within a statement only at its first and where ``END`` may come before (a trigger's body ends so): the
    work grows with the script's length, not its square. ``deadline`` is checked at each statement asked about."""
    import sqlite3

    out, start, first = [], 0, True
    for end in _semicolons(script):
        if not (first or _may_end_trigger(script, start, end)):
            continue
        if deadline is not None:
            deadline.check("sql", "splitting the query into statements")
        current = script[start:end + 1]
        if sqlite3.complete_statement(current):
            if _has_sql(current):
                out.append(current)
            start, first = end + 1, True
        else:
            first = False
    rest = script[start:]
    if rest and sqlite3.complete_statement(rest + ";"):  # as if the last statement had its ';'
        if _has_sql(rest):
            out.append(rest + ";")
    elif _has_sql(rest):
        out.append(rest)  # a last statement without its ';'
    return out


_TOKENS = None  # the compiled pattern of what _semicolons stops at


def _semicolons(script: str) -> Iterator[int]:
    """The offsets of the ``;`` outside quotes (``'``, ``"``, backquotes, ``[...]``) and comments, as SQLite's
    ``complete_statement`` reads them; nothing after an unclosed quote or ``/*`` comment."""
    import re

    global _TOKENS
    if _TOKENS is None:
        _TOKENS = re.compile(r";|'|\"|`|\[|--|/\*")
    closing = {"'": "'", '"': '"', "`": "`", "[": "]", "--": "\n", "/*": "*/"}
    at = 0
    while True:
        found = _TOKENS.search(script, at)
        if found is None:
            return
        token = found.group()
        if token == ";":
            yield found.start()
            at = found.end()
            continue
        close = script.find(closing[token], found.end())
        if close < 0:
            return
        at = close + len(closing[token])


def _may_end_trigger(script: str, start: int, end: int) -> bool:
    """Whether the ``;`` at ``end`` may follow ``END`` (ignoring blanks and comments): where a statement SQLite
    found incomplete at an earlier ``;`` (a trigger's body) can end. Never False where it may."""
    before = script[max(start, end - 4096):end].rstrip()
    if not before and end - 4096 > start:
        return True  # only blanks as far as it looks: ask SQLite
    if before.endswith("*/") or "--" in before[before.rfind("\n") + 1:]:
        return True  # a comment before the ';': ask SQLite
    word = before[-3:]
    return word.lower() == "end" and (len(before) == 3 or not (before[-4].isalnum() or before[-4] in "_$"))


def _has_sql(text: str) -> bool:
    lines = [line.split("--", 1)[0] for line in text.splitlines()]
    return bool("".join(lines).replace(";", "").strip())


def _heap_limit(ctx: ToolContext) -> int:
    """What SQLite may allocate in all: the run's memory limit (the sandbox's heap), at least 16 MiB."""
    return max(16 << 20, int(ctx.limits.memory))


# PRAGMAs a program may run. Others change files or the whole process: temp_store_directory makes SQLite create its
# files wherever it names, for every connection of the process (the warm server's too), journal_mode=WAL adds
# files, writable_schema corrupts, heap limits and threads are process-wide.
READ_PRAGMAS = frozenset((  # informational: they read, with or without an object name
    "collation_list", "compile_options", "data_version", "foreign_key_check", "foreign_key_list", "freelist_count",
    "function_list", "index_info", "index_list", "index_xinfo", "integrity_check", "module_list", "page_count",
    "pragma_list", "quick_check", "table_info", "table_list", "table_xinfo"))
QUERY_PRAGMAS = frozenset((  # settings a program may read (with no value), never set
    "application_id", "auto_vacuum", "cache_size", "encoding", "journal_mode", "page_size", "schema_version",
    "user_version"))
CALL_PRAGMAS = frozenset(("foreign_keys", "recursive_triggers"))  # per connection: they end with the call
# SQL functions that reach the host's process: load_extension() loads native code; fts3_tokenizer() reads (one
# argument) and sets (two) the address of a tokenizer's C function table, which SQLite then calls: a pointer leak
# and a crash or code execution in the host (the warm server), whatever the database.
REFUSED_FUNCTIONS = {"load_extension": "loads native code into the host",
                     "fts3_tokenizer": "reads and sets native code addresses in the host process"}


def pragma_refusal(name: str, value: Any) -> str | None:
    """Why ``PRAGMA name`` (with ``value``, None when it only reads) is refused, or None when it may run."""
    low = name.lower()
    if low in READ_PRAGMAS or low in CALL_PRAGMAS or (low in QUERY_PRAGMAS and value is None):
        return None
    allowed = ", ".join(sorted(READ_PRAGMAS | CALL_PRAGMAS))
    reads = ", ".join(sorted(QUERY_PRAGMAS))
    return (f"PRAGMA {low} is refused: only informational PRAGMAs run (others change files, or settings of the "
            f"whole process that outlive the call); allowed: {allowed}; read only, without a value: {reads}")


def _fence(conn: Any, refused: list[str], deadline: Deadline, max_bytes: int, heap: int) -> None:
    import sqlite3

    if hasattr(conn, "enable_load_extension"):
        conn.enable_load_extension(False)
    # the authorizer does not see a function a database's own schema calls (a CHECK constraint): these names are
    # taken over on the connection itself, so no statement nor schema reaches SQLite's own functions
    for name, why in REFUSED_FUNCTIONS.items():
        for arity in (1, 2, 3):
            conn.create_function(name, arity, _refusing(name, why, refused))
    # a recursive CTE or a huge in-memory table must not take the host's memory: SQLite fails with "out of memory"
    # (set before the authorizer, which refuses these PRAGMAs to programs). Temporary tables, indices and sorts stay
    # in memory too, under that same limit: on disk they would go to a temporary file outside the workspace, which
    # neither the write limit (max_page_count bounds the main database only) nor anything else bounds
    conn.execute(f"PRAGMA hard_heap_limit = {int(heap)}")
    conn.execute("PRAGMA temp_store = MEMORY")
    blocked = {sqlite3.SQLITE_ATTACH: "ATTACH (and VACUUM INTO) reach files outside the workspace",
               sqlite3.SQLITE_DETACH: "DETACH is not needed: ATTACH is refused"}

    def authorize(action: int, arg1: Any, arg2: Any, _db: Any, _trigger: Any) -> int:
        if action in blocked:
            refused.append(f"refused: {blocked[action]}; use the db argument to open a workspace database")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and isinstance(arg2, str) and arg2.lower() in REFUSED_FUNCTIONS:
            refused.append(f"refused: {arg2.lower()}() {REFUSED_FUNCTIONS[arg2.lower()]}")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA:
            why = pragma_refusal(str(arg1), arg2)
            if why:
                refused.append(why)
                return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    conn.set_authorizer(authorize)
    if sys.version_info >= (3, 11):  # setlimit is 3.11+: one string or blob may not eat the memory limit at once
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH), max_bytes))
    conn.set_progress_handler(lambda: 1 if deadline.expired() else 0, 10_000)
    bounded = _bounded_printf(max_bytes)
    for name in ("printf", "format"):
        conn.create_function(name, -1, bounded, deterministic=True)


# A conversion of SQLite's printf: flags, width, precision (a number, or * taken from the arguments), the letter.
_CONVERSION = re.compile(r"%[-+ 0#!,]*(\*|\d*)(?:\.(\*|\d*))?(.)", re.S)


def _bounded_printf(max_bytes: int) -> Any:
    """SQLite's ``printf``/``format`` with no character repeated past ``max_bytes``: a ``%c`` of a huge precision
    (``printf('%.*c', 2000000000, 'x')``) repeats it in one step of the query, seconds long, where the progress
    handler cannot stop it, and answers NULL (too big). That answer is given at once; any other call is SQLite's own
    printf, on a connection of its own (the name is taken over on the program's)."""
    own: list[Any] = []

    def printf(*args: Any) -> Any:
        if not args or not isinstance(args[0], str):
            return None if not args else _sqlite_printf(own, args, max_bytes)
        taken = 1
        for conversion in _CONVERSION.finditer(args[0]):
            width, precision, letter = conversion.groups()
            if width == "*":
                taken += 1
            if precision == "*":
                precision = args[taken] if taken < len(args) else 0
                taken += 1
            if letter == "c" and isinstance(precision, (int, str)) and str(precision).lstrip("-").isdigit() \
                    and int(precision) > max_bytes:
                return None  # what SQLite answers past its length limit
        return _sqlite_printf(own, args, max_bytes)

    return printf


def _sqlite_printf(own: list[Any], args: tuple[Any, ...], max_bytes: int) -> Any:
    import sqlite3

    if not own:
        helper = sqlite3.connect(":memory:")
        if sys.version_info >= (3, 11):
            helper.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_bytes)
        own.append(helper)
    return own[0].execute(f"SELECT printf({', '.join('?' * len(args))})", args).fetchone()[0]


def _refusing(name: str, why: str, refused: list[str]) -> Any:
    def refuse(*_args: Any) -> Any:
        refused.append(f"refused: {name}() {why}")
        raise ValueError(f"{name}() is refused")
    return refuse


def _fetch(cursor: Any, cap: int) -> list[Any]:
    """Rows as dicts, fetched until their JSON size passes ``cap`` (then the cut is marked as the runner does)."""
    names: list[str] = []
    for d in cursor.description:  # "SELECT a.id, b.id" gives id and id_2, not one id
        name, n = d[0], 2
        while name in names:
            name, n = f"{d[0]}_{n}", n + 1
        names.append(name)
    rows: list[Any] = []
    size = 0
    while True:
        batch = cursor.fetchmany(500)
        if not batch:
            return rows
        for i, values in enumerate(batch):
            row = dict(zip(names, values))
            size += len(json.dumps(row, default=str)) + 2  # as the runner counts it
            if size > cap:
                more = len(batch) - i
                while True:  # counted, not kept: the note tells the real number (the deadline still stops it)
                    counted = len(cursor.fetchmany(5000))
                    if not counted:
                        break
                    more += counted
                notices.note("sql()", f"returned {len(rows):,} of {len(rows) + more:,} rows (the {cap:,}-byte "
                                      "tool-result limit); add LIMIT/OFFSET to page, select fewer columns, or "
                                      "aggregate in SQL (COUNT, GROUP BY)")
                return rows
            rows.append(row)
