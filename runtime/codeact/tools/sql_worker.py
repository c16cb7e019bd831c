"""sql's statements in a process of their own, which the run's deadline kills.

One SQLite function call is one step of SQLite's virtual machine, and neither the progress handler nor
``interrupt()`` stops a step: a ``printf`` of a huge width, ``instr`` of long strings (quadratic), ``replace`` or
``trim`` of huge values each run for seconds to hours in SQLite's C code. So codeact.tools.sql runs the statements in
this worker, which it kills at the run's deadline, bounded by the run's memory limit (``RLIMIT_AS``).

Run as ``python -I -S sql_worker.py`` (the standard library only, no ``codeact`` import: it starts in milliseconds).
It reads one request (:mod:`marshal`, on stdin), opens the database (confining itself first, where the request gives
a Landlock ruleset), fences the connection, runs the statements and writes one answer (:mod:`marshal`, on stdout):
``{"names": [...], "rows": [(...), ...], "cut": None or (kept, total)}``, or ``{"error": KIND, "message": ...}``.
The PRAGMA allow-list and the refused functions live here; codeact.tools.sql imports them back.
"""
# Imports are few and the standard library's: each costs every sql call its start-up time.
# Imports inside functions are lazy: ctypes only for a worker that confines itself, sqlite3's C half in _sqlite.
from __future__ import annotations

import marshal
import os
import sys
import time

TYPE_CHECKING = False  # not `typing`: an import every call would pay for
if TYPE_CHECKING:
    from typing import Any

# PRAGMAs a program may run. Others change files or the whole process: temp_store_directory makes SQLite create its
# files wherever it names, journal_mode=WAL adds files, writable_schema corrupts, heap limits and threads are
# process-wide.
READ_PRAGMAS = frozenset((  # informational: they read, with or without an object name
    "collation_list", "compile_options", "data_version", "foreign_key_check", "foreign_key_list", "freelist_count",
    "function_list", "index_info", "index_list", "index_xinfo", "integrity_check", "module_list", "page_count",
    "pragma_list", "quick_check", "table_info", "table_list", "table_xinfo"))
QUERY_PRAGMAS = frozenset((  # settings a program may read (with no value), never set
    "application_id", "auto_vacuum", "cache_size", "encoding", "journal_mode", "page_size", "schema_version",
    "user_version"))
CALL_PRAGMAS = frozenset(("foreign_keys", "recursive_triggers"))  # per connection: they end with the call
# SQL functions that reach the process: load_extension() loads native code; fts3_tokenizer() reads (one argument)
# and sets (two) the address of a tokenizer's C function table, which SQLite then calls: a pointer leak and a crash
# or code execution, whatever the database.
REFUSED_FUNCTIONS = {"load_extension": "loads native code into the host",
                     "fts3_tokenizer": "reads and sets native code addresses in the host process"}
PROGRESS_STEPS = 10_000  # virtual-machine steps between two looks at the deadline
# Landlock (as codeact.tools.confine calls it): the same numbers on every architecture
_RESTRICT_SELF, _PR_SET_NO_NEW_PRIVS = 446, 38


def pragma_refusal(name: str, value: Any) -> str | None:
    """Why ``PRAGMA name`` (with ``value``, None when it only reads) is refused, or None when it may run."""
    low = name.lower()
    if low in READ_PRAGMAS or low in CALL_PRAGMAS or (low in QUERY_PRAGMAS and value is None):
        return None
    allowed = ", ".join(sorted(READ_PRAGMAS | CALL_PRAGMAS))
    reads = ", ".join(sorted(QUERY_PRAGMAS))
    return (f"PRAGMA {low} is refused: only informational PRAGMAs run (others change files, or settings of the "
            f"whole process that outlive the call); allowed: {allowed}; read only, without a value: {reads}")


def main() -> None:
    """The worker: one request on stdin, one answer on stdout (see the module's docstring)."""
    request = marshal.loads(sys.stdin.buffer.read())
    try:
        reply = _serve(request)
    except MemoryError:  # past the address-space bound, in Python's own objects
        reply = {"error": "memory", "message": "out of memory"}
    out = memoryview(marshal.dumps(reply))
    while out:
        out = out[os.write(1, out):]


def _serve(request: dict[str, Any]) -> dict[str, Any]:
    """Open the database (confined first, where ``ruleset`` is given), fence it, run the statements."""
    sqlite3 = _sqlite()

    ruleset = request["ruleset"]
    if ruleset is not None:  # everything this process needs is imported by now: it cannot read a module later
        why = _confine(ruleset)
        if why:
            return {"error": "confine", "message": why}
    path, statements = request["path"], request["statements"]
    try:
        conn = sqlite3.connect(path, isolation_level=None, uri=False)
    except sqlite3.Error as exc:
        return {"error": "connect", "message": str(exc)}
    try:
        if request["writes_left"] is not None:  # the file may grow by what is left of the run's write limit, no
            # more (set before the authorizer, which refuses this PRAGMA to programs)
            try:
                page = int(conn.execute("PRAGMA page_size").fetchone()[0])
                pages = int(conn.execute("PRAGMA page_count").fetchone()[0]) + request["writes_left"] // page
                conn.execute(f"PRAGMA max_page_count = {max(1, pages)}")
            except sqlite3.Error as exc:  # not a database, locked, ...: as any statement's error
                return {"error": "open", "message": str(exc)}
        refused: list[str] = []
        _fence(conn, refused, time.monotonic() + request["seconds"], request["max_bytes"], request["heap"])
        return _execute(conn, statements, refused, request["cap"], file=request["writes_left"] is not None)
    finally:
        conn.close()


def _execute(conn: Any, statements: list[str], refused: list[str], cap: int, file: bool) -> dict[str, Any]:
    """The statements run in order; the rows of the last (at most ``cap`` bytes of them), or the first error."""
    sqlite3 = _sqlite()

    answer: dict[str, Any] = {"names": [], "rows": [], "cut": None}
    for statement in statements:
        try:
            cursor = conn.execute(statement)
            answer = _fetch(cursor, cap) if cursor.description else {"names": [], "rows": [], "cut": None}
        except MemoryError:
            return {"error": "memory", "message": "out of memory"}
        except sqlite3.Error as exc:
            if refused:
                return {"error": "refused", "message": refused[-1]}
            text = str(exc)
            if isinstance(exc, sqlite3.OperationalError) and "full" in text and file:
                return {"error": "full", "message": text}
            if isinstance(exc, sqlite3.OperationalError) and "interrupt" in text:
                return {"error": "interrupted", "message": text}
            return {"error": "sql", "message": text, "statement": statement}
    return answer


def _sqlite() -> Any:
    """The sqlite3 module's C half, which holds all this worker uses (connect, the errors, the authorizer's codes):
    ``sqlite3`` itself adds its date adapters, and with them ``datetime``, to every call's start-up."""
    try:
        import _sqlite3

        return _sqlite3
    except ImportError:  # pragma: no cover - a Python whose sqlite3 is built otherwise
        import sqlite3

        return sqlite3


def _confine(ruleset: int) -> str | None:
    """Restrict this process (one thread: the main one) by the Landlock ``ruleset`` the parent built: it may open
    files below the database's folder only. Why it could not, or None."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            return f"errno {ctypes.get_errno()}"
    except (ImportError, OSError, AttributeError) as exc:
        return str(exc)
    os.close(ruleset)
    return None


def _fence(conn: Any, refused: list[str], deadline: float, max_bytes: int, heap: int) -> None:
    """What a program's statements may not do on ``conn``; ``deadline``: the ``time.monotonic()`` they stop at."""
    sqlite3 = _sqlite()

    if hasattr(conn, "enable_load_extension"):
        conn.enable_load_extension(False)
    # the authorizer does not see a function a database's own schema calls (a CHECK constraint): these names are
    # taken over on the connection itself, so no statement nor schema reaches SQLite's own functions
    for name, why in REFUSED_FUNCTIONS.items():
        for arity in (1, 2, 3):
            conn.create_function(name, arity, _refusing(name, why, refused))
    # a recursive CTE or a huge in-memory table fails with "out of memory" at the run's memory limit (set before the
    # authorizer, which refuses these PRAGMAs to programs). Temporary tables, indices and sorts stay in memory too,
    # under that same limit: on disk they would go to a temporary file outside the workspace, which neither the
    # write limit (max_page_count bounds the main database only) nor anything else bounds
    conn.execute(f"PRAGMA hard_heap_limit = {int(heap)}")
    conn.execute("PRAGMA temp_store = MEMORY")
    blocked = {sqlite3.SQLITE_ATTACH: "ATTACH (and VACUUM INTO) reach files outside the workspace",
               sqlite3.SQLITE_DETACH: "DETACH is not needed: ATTACH is refused"}
    deny, ok = int(sqlite3.SQLITE_DENY), int(sqlite3.SQLITE_OK)

    def authorize(action: int, arg1: Any, arg2: Any, _db: Any, _trigger: Any) -> int:
        if action in blocked:
            refused.append(f"refused: {blocked[action]}; use the db argument to open a workspace database")
            return deny
        if action == sqlite3.SQLITE_FUNCTION and isinstance(arg2, str) and arg2.lower() in REFUSED_FUNCTIONS:
            refused.append(f"refused: {arg2.lower()}() {REFUSED_FUNCTIONS[arg2.lower()]}")
            return deny
        if action == sqlite3.SQLITE_PRAGMA:
            why = pragma_refusal(str(arg1), arg2)
            if why:
                refused.append(why)
                return deny
        return ok

    conn.set_authorizer(authorize)
    if sys.version_info >= (3, 11):  # setlimit is 3.11+: one string or blob may not eat the memory limit at once
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH), max_bytes))
    # the parent kills this process at the deadline; this stops it between steps a little later should the parent
    # be gone
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, PROGRESS_STEPS)


def _refusing(name: str, why: str, refused: list[str]) -> Any:
    def refuse(*_args: Any) -> Any:
        refused.append(f"refused: {name}() {why}")
        raise ValueError(f"{name}() is refused")
    return refuse


def _fetch(cursor: Any, cap: int) -> dict[str, Any]:
    """The rows, fetched until their JSON size (as the runner counts it) passes ``cap``; then the rest are counted,
    not kept (``cut``: how many were kept of how many)."""
    names: list[str] = []
    for d in cursor.description:  # "SELECT a.id, b.id" gives id and id_2, not one id
        name, n = d[0], 2
        while name in names:
            name, n = f"{d[0]}_{n}", n + 1
        names.append(name)
    keys = [json_size(name) + 2 for name in names]  # '"name": '
    rows: list[Any] = []
    size = 0
    while True:
        batch = cursor.fetchmany(500)
        if not batch:
            return {"names": names, "rows": rows, "cut": None}
        for i, values in enumerate(batch):
            # a dict's JSON: {, each '"key": value' joined by ', ', }; and the runner's 2 between items
            size += 2 + sum(keys) + sum(json_size(value) for value in values) + 2 * (len(values) - 1) + 2
            if size > cap:
                more = len(batch) - i
                while True:  # counted, not kept: the note tells the real number (the deadline still stops it)
                    counted = len(cursor.fetchmany(5000))
                    if not counted:
                        break
                    more += counted
                return {"names": names, "rows": rows, "cut": (len(rows), len(rows) + more)}
            rows.append(values)


def json_size(value: Any) -> int:
    """``len(json.dumps(value, default=str))`` for one value SQLite gives (None, int, float, str, bytes), without
    importing json (its import would cost every call)."""
    if value is None:
        return 4
    if isinstance(value, int):
        return len(int.__repr__(value))
    if isinstance(value, float):
        if value != value:
            return 3  # NaN
        if value in (_INFINITY, -_INFINITY):
            return 8 if value > 0 else 9  # Infinity, -Infinity
        return len(float.__repr__(value))
    return len(_escape(value if isinstance(value, str) else str(value)))


_INFINITY = float("inf")
try:  # json's own string encoder (C), imported with the module: a confined worker can import nothing later
    from _json import encode_basestring_ascii as _escape
except ImportError:  # pragma: no cover - a Python without json's C speedups
    from json.encoder import py_encode_basestring_ascii as _escape


if __name__ == "__main__":
    main()
