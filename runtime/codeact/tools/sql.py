"""The sql tool: SQLite on a database file inside the workspace (or in memory), with file access fenced off.

This module checks the call and the database's path and tells the outcome; the statements run in a worker process
(codeact.tools.sql_worker) that the run's deadline kills."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ..core import notices
from ..core.limits import Deadline
from ..core.tool import ToolContext
from ..errors import PolicyError, ToolError
from .sql_worker import CALL_PRAGMAS, QUERY_PRAGMAS, READ_PRAGMAS, REFUSED_FUNCTIONS, pragma_refusal

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
    tables and sorts are kept in memory, under that limit). Each call runs in a process of its own (about 20 ms):
    write many rows in one call (``INSERT INTO t VALUES (1), (2), ...``), not one call a row.
    """
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
            return _run(ctx, database, statements, deadline, db)
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


_WORKER = str(Path(__file__).resolve().with_name("sql_worker.py"))  # run by path: no codeact import there
_DETAIL = "running the query"


def _run(ctx: ToolContext, database: _Database | None, statements: list[str], deadline: Deadline,
         db: str) -> list[dict]:
    """The statements run on ``database`` (``None``: in memory) in a worker process (codeact.tools.sql_worker) that
    the run's deadline kills and the run's memory limit bounds: one SQLite function call can run for hours in C,
    where nothing but a kill stops it. Where Landlock is, the worker may open files in the database's folder only
    (it confines itself once it has imported what it needs): SQLite opens the database and its journal by path, so
    a folder on the way swapped for a link to an outside folder meanwhile leads to files it may not open, never to
    outside ones."""
    from . import confine

    ruleset = None
    if database is not None and database.folder is not None:
        ruleset = confine.write_ruleset(database.folder)  # None where there is no Landlock: unconfined, as documented
    request = {"path": ":memory:" if database is None else database.path, "statements": statements,
               "ruleset": ruleset, "seconds": deadline.remaining() + 1,  # the parent's kill first
               "writes_left": None if database is None else max(0, int(ctx.limits.writes) - deadline.written),
               "max_bytes": max(1 << 20, int(ctx.limits.memory) // 4), "heap": _heap_limit(ctx),
               "cap": int(ctx.limits.tool_result)}
    try:
        reply = _ask(ctx, request, deadline)
    finally:
        if ruleset is not None:
            os.close(ruleset)
    if "error" not in reply:
        names, cap = reply["names"], int(ctx.limits.tool_result)
        if reply["cut"] is not None:
            kept, total = reply["cut"]
            notices.note("sql()", f"returned {kept:,} of {total:,} rows (the {cap:,}-byte tool-result limit); add "
                                  "LIMIT/OFFSET to page, select fewer columns, or aggregate in SQL (COUNT, GROUP BY)")
        return [dict(zip(names, row)) for row in reply["rows"]]
    raise _error(ctx, reply, database, db, deadline)


def _ask(ctx: ToolContext, request: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
    """``request`` answered by a worker; the deadline's error if the deadline killed it, the memory error if it
    was ended by a signal (most likely at its address-space bound), a ToolError if it failed otherwise."""
    import marshal

    from .proc import Child

    source = _request_file(marshal.dumps(request))
    try:
        passed = () if request["ruleset"] is None else (request["ruleset"],)
        child = Child.start([sys.executable, "-I", "-S", _WORKER], ctx.workspace.root, deadline, "sql", _DETAIL,
                            memory=int(ctx.limits.memory), stdin=source, pass_fds=passed)
    finally:
        os.close(source)
    if child is None:
        raise ToolError("sql could not start its worker process (SQLite runs there); nothing was run")
    with child:
        data = b"".join(child)
    code = child.returncode
    if code is not None and code < 0:
        return {"error": "memory", "message": f"ended by signal {-code}"}
    try:
        reply = marshal.loads(data)
        if not isinstance(reply, dict):
            raise ValueError(reply)
    except (ValueError, EOFError, TypeError):
        raise ToolError(f"sql's worker process failed (exit status {code}) and returned nothing; the statements may "
                        "have run in part (each commits unless inside BEGIN ... COMMIT)") from None
    return reply


def _request_file(body: bytes) -> int:
    """A descriptor reading ``body`` from its start: the worker's stdin (a memory file where the system has one,
    else an unnamed temporary file), so no pipe can block this process however long the query."""
    try:
        fd = os.memfd_create("codeact-sql", getattr(os, "MFD_CLOEXEC", 0))
    except (AttributeError, OSError):  # pragma: no cover - no memfd_create (macOS, old kernels)
        import tempfile

        with tempfile.TemporaryFile() as spare:
            fd = os.dup(spare.fileno())
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _error(ctx: ToolContext, reply: dict[str, Any], database: _Database | None, db: str,
           deadline: Deadline) -> Exception:
    """The error a worker's ``reply`` tells of, as the program sees it (with its note, where one is due)."""
    kind, message = reply["error"], reply["message"]
    if kind == "memory":
        text = (f"SQL error: the query needs more than the {_heap_limit(ctx) // (1 << 20)} MiB memory limit "
                "(CODEACT_MEMORY raises it); add LIMIT or aggregate in SQL")
        notices.note("sql()", text + " (temporary tables and sorts are kept in memory, under this limit)")
        return ToolError(text)
    if kind == "refused":
        return PolicyError(message)
    if kind == "full":
        text = (f"sql(db={db!r}) was refused: the database would grow past this run's write limit of "
                f"{int(ctx.limits.writes):,} bytes (what create(), edit() and sql() may write in one run); write "
                "less, or raise CODEACT_WRITES")
        notices.note("sql()", text)
        return ToolError(text)
    if kind == "interrupted":
        return deadline.stopped("sql", _DETAIL)
    shown = "memory" if database is None else database.shown
    if kind == "connect":
        return ToolError(f"SQL error: {message} (opening {shown}; did a folder on its way change meanwhile?)")
    if kind == "open":
        return ToolError(f"SQL error: {message} (opening {shown})")
    if kind == "confine":  # never run unconfined once confinement was meant to hold
        return OSError(f"sql: the process that opens files could not be confined to the database's folder "
                       f"({message}); nothing was run")
    statement = str(reply.get("statement", "")).strip().rstrip(";")
    statement = statement if len(statement) <= 200 else statement[:200] + "..."
    return ToolError(f"SQL error: {message} (in: {statement})")


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
        _refuse_hot_journal(os.open(f"{real}-journal", os.O_RDONLY) if os.path.exists(f"{real}-journal") else None,
                            shown, real.name)
        return _Database(str(real), real.name, None, shown)
    try:
        _check_file(folder, real.name, f"db {shown}")
        for suffix in _SIDE_FILES:
            _check_file(folder, real.name + suffix, f"db {shown}: {real.name}{suffix}", side=True)
        try:
            journal: int | None = os.open(real.name + "-journal", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                                          dir_fd=folder)
        except FileNotFoundError:
            journal = None
        _refuse_hot_journal(journal, shown, real.name)
    except BaseException:
        os.close(folder)
        raise
    return _Database(str(real), real.name, folder, shown)


def _refuse_hot_journal(journal: int | None, shown: str, name: str) -> None:
    """Refuse a database beside a hot rollback journal (``journal``: its descriptor, closed here): opening the
    database plays it back and then deletes the super-journal its tail names, which may be any file SQLite can
    remove (a repository can commit both)."""
    if journal is None:
        return
    try:
        head = os.read(journal, 1)
    finally:
        os.close(journal)
    if head not in (b"", b"\0"):  # SQLite's test (hasHotJournal): a first byte that is not zero, magic or not
        raise PolicyError(f"db {shown}: {name}-journal is a hot rollback journal (left by a write that did not "
                          "finish); opening the database would play it back and may delete another file it names. "
                          "Recover it with sqlite3 through bash if you trust it, or remove the journal")


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


MAX_STATEMENTS = 100_000  # statements one call runs: each is a string held by the host and sent to the worker


def split_statements(script: str, deadline: Deadline | None = None) -> list[str]:
    """``script`` cut into complete statements, quotes, comments and trigger bodies respected.

    One pass finds the ``;`` outside quotes and comments; SQLite's ``complete_statement`` is asked only at those,
    and within a statement only at its first and where ``END`` may come before (a trigger's body ends so): the
    work grows with the script's length, not its square. ``deadline`` is checked at each statement asked about."""
    import sqlite3

    out: list[str] = []
    start, first = 0, True
    for end in _semicolons(script):
        if deadline is not None:  # at every ';': inside a trigger's body each may be looked at
            deadline.check("sql", "splitting the query into statements")
        if not (first or _may_end_trigger(script, start, end)):
            continue
        current = script[start:end + 1]
        if sqlite3.complete_statement(current):
            if _has_sql(current):
                if len(out) == MAX_STATEMENTS:
                    raise ToolError(f"the query holds more than {MAX_STATEMENTS:,} statements; insert many rows in "
                                    "one (INSERT INTO t VALUES (1), (2), ...), or split the work over calls")
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
    """Whether ``text`` holds more than blanks, ``;`` and comments (``--`` and ``/* */``: a statement of comments
    alone runs as nothing, and the rows returned are the last statement's)."""
    import re

    text = re.sub(r"--[^\n]*|/\*.*?(?:\*/|$)", " ", text, flags=re.S)  # whichever starts first, as SQLite reads
    return bool(text.replace(";", "").strip())


def _heap_limit(ctx: ToolContext) -> int:
    """What SQLite may allocate in all: the run's memory limit (the sandbox's heap), at least 16 MiB."""
    return max(16 << 20, int(ctx.limits.memory))


__all__ = ["CALL_PRAGMAS", "QUERY_PRAGMAS", "READ_PRAGMAS", "REFUSED_FUNCTIONS", "pragma_refusal", "split_statements",
           "sql"]
