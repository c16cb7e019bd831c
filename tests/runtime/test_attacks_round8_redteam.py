"""Red team, round 8 (a helper that had not seen the round's changes): the link rule past 40 links, the search
tools' ignore files and submodules, the host's parse lock. Each test runs a program through the sandbox
(``run``, monty) and fails while the breach is open (import glob's link count, left open, closed in round 9). Two
timing findings, both closed: a program large enough that its host parse outlasted the run's limit (refused past a
size cap), and a .gitmodules of thousands of long lines (read in part, walked as far as it exists, checked by the
deadline)."""
from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from test_attacks_round6_links import _run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links, FIFOs")


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], check=True, cwd=cwd, capture_output=True)


def _one_file_repo(base: Path) -> Path:
    """``base/ws``: a git work tree with one tracked file, ``a.py``."""
    ws = base / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    _git("init", "-q", str(ws))
    _git("add", "a.py", cwd=ws)
    return ws


def _run_limited(ws: Path, home: Path, code: str, timeout: float) -> tuple[threading.Thread, list[str]]:
    """``code`` run as ``_run`` runs it, with the run's time limit ``timeout``, in a thread (daemon: a host call
    that never returns must not hang the test): the thread and a list that holds the output (then the error, if the
    run failed, and the notes) once it ended."""
    from codeact.core.config import Settings
    from codeact.core.limits import Limits
    from codeact.runner import run

    home.mkdir(exist_ok=True)
    out: list[str] = []

    def go() -> None:
        result = run(code, workspace=ws, backend="monty", settings=Settings(), limits=Limits(timeout=timeout),
                     environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
                              "LANG": "C.UTF-8", "CODEACT_CONFIG_DIR": str(home / "cfg")})
        error = f"{result.error.type}: {result.error.message}" if result.error is not None else ""
        out.append(result.stdout + result.stderr + error + "".join(f"\nnote: {n}" for n in result.notes))

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread, out


# ------------------------------------------------------------ .gitmodules read through a link out
def _submodule_workspace(base: Path) -> Path:
    """``base/ws``: a work tree with a checked-out nested repository ``sub`` whose tracked ``hidden.log`` its own
    ``.gitignore`` matches (git still sees it: the search tools show it only when ``sub`` is asked as a
    submodule)."""
    ws = base / "ws"
    (ws / "sub").mkdir(parents=True)
    _git("init", "-q", str(ws))
    _git("init", "-q", str(ws / "sub"))
    (ws / "sub/hidden.log").write_text("x\n")
    (ws / "sub/.gitignore").write_text("*.log\n")
    _git("add", "-f", "hidden.log", cwd=ws / "sub")
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "a.log").write_text("x\n")
    _git("add", "-f", "a.log", cwd=ws)
    return ws


def test_a_gitmodules_linked_outside_tells_nothing_of_the_outside_files_text(tmp_path: Path) -> None:
    """``.gitmodules -> ../secret`` (outside): tracked._submodules reads it with ``Path.read_text``, following the
    link (round 7's read_ignore_file rule covers the ignore files only), and asks git about each ``path =`` it
    names. Whether ``glob``/``grep`` show the tracked-but-ignored ``sub/hidden.log`` then tells whether the outside
    file holds the line ``path = sub``: a program confirms guessed lines of any file the user can read (e.g.
    another repository's .gitmodules). Whatever the outside file holds, the answers must be the same."""
    code = ("print(glob(pattern='**/*.log'))\nprint(glob(pattern='*.log', path='sub'))\n"
            "print(grep(pattern='x', path='sub'))\n")
    answers = []
    for i, text in enumerate(['[submodule "x"]\n\tpath = sub\n', '[submodule "x"]\n\tpath = other\n']):
        base = (tmp_path / str(i)).resolve()
        base.mkdir()
        (base / "secret").write_text(text)
        ws = _submodule_workspace(base)
        (ws / ".gitmodules").symlink_to("../secret")
        answers.append(_run(ws, base / "home", code))
    assert answers[0] == answers[1], answers


def test_a_gitmodules_linked_to_an_outside_fifo_does_not_hold_the_run_past_its_limit(tmp_path: Path) -> None:
    """``.gitmodules -> ../fifo`` (a FIFO outside, or /dev/stdin, a tty...): tracked._submodules opens it with
    ``Path.read_text`` (no O_NONBLOCK, no regular-file check, no deadline), which blocks until a writer comes: a
    ``glob()`` call never returns, the run's 3 s limit does not end it, and the warm server's worker (or the
    ``codeact run`` process) hangs for good. (A link to /dev/zero instead reads until memory runs out.)"""
    base = tmp_path.resolve()
    ws = _one_file_repo(base)
    _git("commit", "-qm", "x", cwd=ws)
    fifo = base / "fifo"
    os.mkfifo(fifo)
    (ws / ".gitmodules").symlink_to("../fifo")
    thread, out = _run_limited(ws, base / "home", "print(glob(pattern='*.py'))\n", timeout=3)
    thread.join(20)
    hung = thread.is_alive()
    if hung:  # let the blocked open go (a writer comes), so nothing is left blocked
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(20)
    assert not hung, "glob() was still blocked 20 s into a run limited to 3 s"
    assert out and "a.py" in out[0], out


# ------------------------------------------------------------ import glob counts links step by step, not per path
def _forty_links(base: Path) -> Path:
    """``base/ws``: ``b1 -> b2 -> ... -> b40 -> sub`` (40 links), ``sub/in.txt`` and ``sub/ldir -> .``."""
    ws = base / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub/in.txt").write_text("in\n")
    (ws / "sub/ldir").symlink_to(".")
    for i in range(1, 41):
        (ws / f"b{i}").symlink_to(f"b{i + 1}" if i < 40 else "sub")
    return ws


def test_import_glob_counts_every_link_on_the_path_as_the_kernel_does(tmp_path: Path) -> None:
    """``b1 -> ... -> b40 -> sub`` (40 links) and ``sub/ldir -> .``: ``b1/ldir/in.txt`` passes 41 links, ELOOP for
    the kernel, for open() and os.path.exists() here, and CPython's glob.glob answers ``[]``. confined_glob counts
    one link per spelled step (``self.links[head] + 1``) and lets real_inside resolve each link with a fresh budget
    of 40, so the 40 links behind ``b1`` count as one: glob.glob lists ``b1/ldir/in.txt`` (and root_dir='b1/ldir'
    is walked), a path the same program then cannot open (inside the workspace only)."""
    base = tmp_path.resolve()
    ws = _forty_links(base)
    code = ("import os, glob as G\n"
            "print(os.path.exists('b1/ldir/in.txt'), G.glob('b1/ldir/in.txt'), G.glob('b1/ldir/*.txt'),\n"
            "      G.glob('in.txt', root_dir='b1/ldir'))\n")
    out = _run(ws, base / "home", code)
    assert out == "False [] [] []\n", out


def test_import_glob_counts_root_dir_s_links_and_those_after_dotdot_as_cpython_does(tmp_path: Path) -> None:
    """The count runs over the whole lookup: ``root_dir='b1'`` (40 links) leaves one more for the pattern, and
    ``b1/../b1`` spends 80; each glob answers what CPython's glob.glob answers on the same tree."""
    import glob as host_glob

    base = tmp_path.resolve()
    ws = _forty_links(base)
    calls = [("ldir/in.txt", "b1"), ("ldir/*.txt", "b1"), ("*.txt", "b1"), ("b1/*.txt", None),
             ("b2/ldir/in.txt", None), ("b2/ldir/*.txt", None), ("b1/../b1/in.txt", None), ("b1/../sub/*.txt", None)]
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        expected = "".join(f"{host_glob.glob(pattern, root_dir=folder)!r}\n" for pattern, folder in calls)
    finally:
        os.chdir(cwd)
    code = "import glob as G\n" + "".join(f"print(G.glob({pattern!r}, root_dir={folder!r}))\n"
                                           for pattern, folder in calls)
    assert _run(ws, base / "home", code) == expected


# ------------------------------------------------------------ sql: SQLite's journal name, asked by path
def test_sql_tells_nothing_of_what_a_journal_link_names_outside(tmp_path: Path) -> None:
    """A committed ``w.db-journal -> ../outside/x`` beside a database ``w.db`` inside: sql(db='w.db') resolves and
    checks ``w.db`` only; SQLite then asks whether a hot journal exists with ``access(w.db-journal)``, which follows
    the link, and opens it (O_NOFOLLOW: fails). A read answers ``unable to open database file`` when the outside
    path exists and the rows when it does not: an existence oracle for any outside path (an absolute link names
    ``~/.ssh/id_rsa``). Whatever lies outside, the answers must be the same."""
    import sqlite3

    code = ("def t(f):\n    try:\n        return repr(f())\n    except Exception as exc:\n"
            "        return type(exc).__name__ + ': ' + str(exc)\n"
            "print(t(lambda: sql(db='w.db', query='SELECT x FROM t')))\n")
    answers = {}
    for present in (True, False):
        base = (tmp_path / str(present)).resolve()
        ws = base / "ws"
        ws.mkdir(parents=True)
        (base / "outside").mkdir()
        if present:
            (base / "outside/x").write_text("outside\n")
        conn = sqlite3.connect(ws / "w.db")
        with conn:
            conn.execute("CREATE TABLE t(x)")
            conn.execute("INSERT INTO t VALUES (1)")
        conn.close()
        (ws / "w.db-journal").symlink_to("../outside/x")
        answers[present] = _run(ws, base / "home", code)
    assert answers[True] == answers[False], answers


# ------------------------------------------------------------ the host's parse of a large program
def test_a_large_program_holds_neither_its_run_nor_another_past_the_limit(tmp_path: Path) -> None:
    """The program's own source is parsed on the host (codeact.pyast.parse, under one lock, with the GIL held:
    monty's _worth_checking, sessions.assigned, ...) before the deadline can stop anything, and its size was not
    bounded (``codeact run --file``, a frame of up to 1 GiB to the warm server; _refuse_huge counts commas only):
    200,000 lines of ``x = 1`` (1.2 MB) were parsed twice, ~2.3 s each here (a 3.6 MB one: 10.3 s each; the time
    grows with the size). A run limited to 0.5 s took 8 s, and a concurrent run of the warm server (``print(1)``,
    0.09 s alone) waited for the lock: 2.6 s. Since the server abandons a run past its limit but cannot stop the
    thread, a few such programs kept every other run of the server waiting. A program past
    codeact.cmdline.MAX_PROGRAM (256 KiB) is now refused before anything parses it."""
    import codeact.pyast as pyast
    from codeact.cmdline import MAX_PROGRAM

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    # 2.4 MB: the old code held the lock ~5 s a parse here, so both bounds below have a wide margin on a loaded machine
    big, big_out = _run_limited(ws, base / "home-a", "x = 1\n" * 400_000, timeout=0.5)
    started = time.monotonic()
    while not pyast._ONE_AT_A_TIME.locked() and big.is_alive() and time.monotonic() - started < 20:
        time.sleep(0.001)
    began = time.monotonic()
    small, small_out = _run_limited(ws, base / "home-b", "print(1)\n", timeout=2)
    small.join(60)
    small_took = time.monotonic() - began
    big.join(60)
    big_took = time.monotonic() - started
    assert small_out and small_out[0] == "1\n", small_out
    assert big_took < 3 and small_took < 3, (f"a run limited to 0.5 s took {big_took:.1f} s; a concurrent "
                                               f"print(1) took {small_took:.1f} s")
    assert big_out and f"more than {MAX_PROGRAM // 1024} KiB" in big_out[0], big_out


# ------------------------------------------------------------ a .gitmodules of long lines
def test_a_long_gitmodules_does_not_hold_glob_past_the_runs_limit(tmp_path: Path) -> None:
    """tracked._submodules (849c75d) checked each ``path =`` of ``.gitmodules`` with ``os.path.realpath``: one
    ``lstat`` per part of the path, in Python, for every distinct line, before git is asked and with no deadline.
    ``.gitmodules`` is no protected file: a program writes it (``create``; 128 MiB a run) or a repository commits
    it. 2,000 lines of ``a/`` x 2,000 (8 MB) took ~15 s here (1 MB: 1.8 s), in the host with the GIL held, in
    every run's first glob(): a run limited to 1 s took that long, and every concurrent run of the warm server
    crawled meanwhile. Now its first MiB is read (a note says so), each path is walked part by part only as far as
    it exists, and the checks stop at the deadline."""
    base = tmp_path.resolve()
    ws = _one_file_repo(base)
    (ws / ".gitmodules").write_text("".join(f"[submodule \"{i}\"]\n\tpath = {'a/' * 2000}{i}\n" for i in range(2000)))
    thread, out = _run_limited(ws, base / "home", "print(glob(pattern='*.py'))\n", timeout=1)
    started = time.monotonic()
    thread.join(120)
    took = time.monotonic() - started
    assert out, "the run did not end in 120 s"
    assert took < 4, f"a run limited to 1 s took {took:.1f} s: {out[0][:300]}"
    assert ".gitmodules holds" in out[0] and "only its first 1 MiB" in out[0], out[0][-1000:]
