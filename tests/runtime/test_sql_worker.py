"""sql runs the statements in a worker process (codeact.tools.sql_worker): the run's deadline kills it whatever
SQLite is doing, the run's memory limit bounds it, Landlock confines it to the database's folder, and what it tells
(rows, errors, notes) reaches the program as before."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from codeact.core import notices
from codeact.core.limits import Limits
from codeact.errors import ToolError, ToolTimeout
from codeact.tools import confine, sql_worker
from codeact.tools import sql as sql_mod

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, RLIMIT_AS and Landlock: Linux")

MiB = 1 << 20
# instr() of a 2 MB haystack and a 200 KB needle that never matches: ONE step of SQLite's virtual machine that
# compares the needle at every offset (minutes), where the progress handler cannot look at the deadline
SLOW_STEP = ("SELECT instr(replace(hex(zeroblob(1000000)), '0', 'a'), "
             "replace(hex(zeroblob(100000)), '0', 'a') || 'b') AS i")


def _children() -> set[int]:
    """The processes this one started that are still there, a zombie too (one never waited for)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid():
            found.add(int(entry))
    return found


def _noted(func):  # type: ignore[no-untyped-def]
    """``func()``'s outcome (its value or exception) and the notes it left."""
    collector = notices.Notes()
    previous = collector.activate()
    try:
        try:
            outcome = func()
        except Exception as exc:  # noqa: BLE001 - returned for the test to judge
            outcome = exc
    finally:
        notices.restore(previous)
    return outcome, list(collector.items)


@pytest.mark.parametrize("db", [":memory:", "slow.db"])
def test_one_slow_sqlite_step_stops_at_the_run_deadline(make_ctx, tmp_path: Path, db: str) -> None:
    """One instr() call outlives the run by minutes in SQLite's C code; the worker running it is killed at the
    deadline, the program gets the run's TimeoutError within a moment, and no worker is left behind."""
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = make_ctx(ws, limits=Limits(timeout=1))
    before = _children()
    started = time.monotonic()
    with pytest.raises(ToolTimeout, match=r"^sql\(\) was stopped at the run's deadline while running the query"):
        sql_mod.sql(ctx, query=SLOW_STEP, db=db)
    took = time.monotonic() - started
    assert took < 4, f"a run limited to 1 s took {took:.1f} s"
    assert _children() - before == set()


def test_a_worker_past_the_memory_limit_is_the_memory_error_with_its_note(make_ctx, tmp_path: Path) -> None:
    """Rows bigger than the run's memory limit (each 1 MB blob under SQLite's own heap limit, 200 of them kept as
    the tool-result limit allows) end the worker at its address-space bound: the program gets the memory error and
    its note, and the host never held those rows."""
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = make_ctx(ws, limits=Limits(memory=16 * MiB, tool_result=1 << 30))
    query = ("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c LIMIT 200) "
             "SELECT randomblob(1000000) AS b FROM c")
    before = _children()
    outcome, notes = _noted(lambda: sql_mod.sql(ctx, query=query))
    text = "SQL error: the query needs more than the 16 MiB memory limit (CODEACT_MEMORY raises it); add LIMIT or "
    assert isinstance(outcome, ToolError) and str(outcome).startswith(text), outcome
    assert notes == [f"sql(): {outcome} (temporary tables and sorts are kept in memory, under this limit)"]
    assert _children() - before == set()


@pytest.mark.parametrize("body, expect", [
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "the query needs more than the 256 MiB memory"),
    ("import sys; sys.stdout.write('garbage'); sys.exit(3)", "sql's worker process failed (exit status 3)"),
    ("import sys; sys.exit(0)", "sql's worker process failed (exit status 0)"),
], ids=["signal", "garbage", "silent"])
def test_a_worker_that_fails_is_a_clear_error(ctx, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str,
                                              expect: str) -> None:
    """A worker a signal ended (most likely at its memory bound: Python aborts there) is the memory error; one that
    ended otherwise with no answer is a ToolError that says so, never a traceback of the host."""
    worker = tmp_path / "worker.py"
    worker.write_text(body + "\n")
    monkeypatch.setattr(sql_mod, "_WORKER", str(worker))
    outcome, _ = _noted(lambda: sql_mod.sql(ctx, query="SELECT 1"))
    assert isinstance(outcome, ToolError) and expect in str(outcome), outcome


@pytest.mark.skipif(not confine.can_confine_threads(), reason="no Landlock here: SQLite runs unconfined "
                    "(docs/security.md)")
def test_the_worker_opens_files_below_the_database_folder_only(make_ctx, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker confines itself to the folder the parent's walk opened before SQLite opens anything: a path that
    leads elsewhere (what a folder swapped for a link meanwhile does; here the path is simply another folder's)
    cannot be opened, and nothing is created there. The same folder's own database opens and is written."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    ctx = make_ctx(ws)
    real = sql_mod._database

    def elsewhere(ctx_, db):  # type: ignore[no-untyped-def]
        found = real(ctx_, db)
        return found._replace(path=str(outside / found.name))

    monkeypatch.setattr(sql_mod, "_database", elsewhere)
    with pytest.raises(ToolError, match=r"unable to open database file \(opening sub/x\.db"):
        sql_mod.sql(ctx, query="CREATE TABLE t(x)", db="sub/x.db")
    assert list(outside.iterdir()) == []
    monkeypatch.setattr(sql_mod, "_database", real)
    assert sql_mod.sql(ctx, query="CREATE TABLE t(x); INSERT INTO t VALUES (5); SELECT x FROM t",
                       db="sub/x.db") == [{"x": 5}]


@pytest.mark.skipif(not confine.can_confine_threads(), reason="no Landlock here")
def test_a_worker_that_cannot_confine_itself_runs_nothing(make_ctx, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Where Landlock is and the worker's restriction fails, it opens nothing: never unconfined where confinement
    was meant to hold."""
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setattr(confine, "write_ruleset", lambda _folder: os.open(os.devnull, os.O_RDONLY))
    with pytest.raises(OSError, match="could not be confined to the database's folder"):
        sql_mod.sql(make_ctx(ws), query="CREATE TABLE t(x)", db="x.db")
    assert list(ws.iterdir()) == []


def test_the_write_limit_and_memory_notes_reach_the_program(run_program) -> None:
    """Through the sandbox: the worker's outcomes become the program's catchable errors and the run's notes."""
    code = ("out = []\n"
            "for q in ['CREATE TABLE t(x); INSERT INTO t SELECT zeroblob(300000) FROM (SELECT 1 UNION SELECT 2)',\n"
            "          'CREATE TEMP TABLE big AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c '\n"
            "          'LIMIT 100000) SELECT randomblob(1000) AS b FROM c']:\n"
            "    try:\n"
            "        sql(query=q, db='w.db')\n"
            "    except Exception as exc:\n"
            "        out.append(type(exc).__name__)\n"
            "out\n")
    result = run_program(code, limits=Limits(writes=100_000, memory=32 * MiB))
    assert result.ok, result.error
    assert result.result == ["RuntimeError", "RuntimeError"], result.result
    assert len(result.notes) == 2, result.notes
    assert result.notes[0].startswith("sql(): sql(db='w.db') was refused: the database would grow past this run's "
                                      "write limit of 100,000 bytes"), result.notes
    assert result.notes[1].startswith("sql(): SQL error: the query needs more than the 32 MiB memory limit"), \
        result.notes


@pytest.mark.parametrize("value", [None, 0, -7, 2**63 - 1, 1.5, -0.0, 1e300, float("inf"), float("-inf"),
                                   float("nan"), "", "plain", "qu\"ote\\back\nline\x00", "é€😀", b"", b"\x00\xffab"])
def test_rows_are_measured_as_the_runner_counts_them(value: object) -> None:
    """The worker counts a row's JSON size without importing json: the same length json.dumps gives."""
    assert sql_worker.json_size(value) == len(json.dumps(value, default=str))
