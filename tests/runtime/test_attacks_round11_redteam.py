"""Red team, round 11 (issue 40; a helper that had not seen the session's changes): what the day's changes left
open. Each test runs a program through the sandbox (``run``, monty) and fails while the breach is open (strict
xfail). Timing findings are xfail tests that do not run (``pytest --runxfail`` runs them)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_attacks_round6_links import _run
from test_attacks_round9_redteam import _peak_run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

MiB = 1 << 20


# ------------------------------------------------------------ the prelude's text file, by line
@pytest.mark.xfail(strict=True, reason="open (issue 40, red team round 11): the prelude's codeact_TextFile splits "
                                       "lines with str.splitlines(), at form feeds, U+0085 and U+001C-U+001E too")
def test_a_file_read_with_an_encoding_is_split_into_lines_as_cpython_splits_it(tmp_path: Path) -> None:
    """``open(path, encoding='latin-1')`` (or any encoding but UTF-8, or ``errors='replace'``) goes through the
    prelude's ``codeact_open`` (core/prelude/files.py), which reads the file whole into a ``codeact_TextFile``. Its
    ``readlines()`` -- and so ``for line in f`` and ``list(f)`` -- is ``str.splitlines(True)``, which also splits at
    ``\\x0b``, ``\\x0c`` (form feed, common in C and Python sources), ``\\x1c``-``\\x1e``, ``\\x85`` (byte 0x85 of
    a Latin-1 file: U+0085) and U+2028/U+2029; CPython's text files split at ``\\n`` alone (after universal
    newlines). A Latin-1 file ``a\\x0cb\\nc\\x85d\\n`` reads as four lines ``['a\\x0c', 'b\\n', 'c\\x85', 'd\\n']``
    instead of two: a program counting or numbering lines, or pairing them with grep's line numbers, gets a silent
    wrong answer. Fix: split the rest of the text at ``\\n`` only (``text.split('\\n')`` keeping the ends), as
    ``readline()`` already does."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "ff.txt").write_bytes(b"a\x0cb\nc\x85d\ne\x1cf\n")
    code = ("print('L1', list(open('ff.txt', encoding='latin-1')))\n"
            "print('L2', open('ff.txt', encoding='latin-1').readlines())\n"
            "print('L3', len(open('ff.txt', errors='replace').readlines()))\n")
    out = _run(ws, base / "home", code)
    assert "L1 ['a\\x0cb\\n', 'c\\x85d\\n', 'e\\x1cf\\n']" in out, out
    assert "L2 ['a\\x0cb\\n', 'c\\x85d\\n', 'e\\x1cf\\n']" in out, out
    assert "L3 3" in out, out


# ------------------------------------------------------------ outline of a Python file, in the host
@pytest.mark.xfail(strict=True, reason="open (issue 40, red team round 11): outline parses any Python file up to "
                                       "1 MiB with the host's ast, in the host process: 600+ MiB for a 64 MiB run")
def test_outline_of_a_python_file_stays_within_the_run_memory_limit(tmp_path: Path) -> None:
    """9e974b0 sends a tree-sitter file over IN_PROCESS_BYTES (16 KiB) to an outline worker bounded by the run's
    memory limit, but a Python file of any size up to MAX_FILE_BYTES (1 MiB) is still parsed by the host's
    ``ast.parse`` in the host process (outline.py ``_read``: ``not rel.lower().endswith(PYTHON_SUFFIXES)``), and
    CPython's parser and AST take hundreds of bytes a token: a committed ``data.py`` of one line, ``x=a,a,a,...``
    (1 MiB), takes the host to about 650 MiB (and 2 s in one C call) for ``outline(path='data.py')`` in a run
    limited to 64 MiB; a warm server outlining a few such files at once runs the machine out of memory. docs/
    security.md says only that the parser "refuses deep nesting itself". Fix: parse a Python file over
    IN_PROCESS_BYTES in the bounded worker too, as the tree-sitter languages are (the worker's RLIMIT_AS ends it;
    an ``error`` item says so)."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "data.py").write_text("x=" + "a," * (512 * 1024 - 2) + "\n")
    out, peak, _ = _peak_run(ws, base / "home", "print(len(str(outline(path='data.py'))))", memory=64 * MiB,
                             timeout=30)
    assert peak < 256 * MiB, f"the host took {peak // MiB} MiB for a run limited to 64 MiB: {out[-300:]}"
