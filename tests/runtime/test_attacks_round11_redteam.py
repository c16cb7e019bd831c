"""Red team, round 11 (issue 40; a helper that had not seen the session's changes): what the day's changes left
open. Each test runs a program through the sandbox (``run``, monty) and fails while the breach is open (strict
xfail). Timing findings are xfail tests that do not run (``pytest --runxfail`` runs them)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import edit_output, git_workspace, hooked_workspace, hooks_json
from test_attacks_round6_links import _run
from test_attacks_round9_redteam import _peak_run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

MiB = 1 << 20


# ------------------------------------------------------------ the prelude's text file, by line
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


# ------------------------------------------------------------ patterns under the size cap that compile for minutes
def test_a_pattern_of_wide_character_ranges_is_compiled_within_the_run_deadline(tmp_path: Path) -> None:
    """a1e21fe/59d5cc2 refuse a pattern over MAX_PATTERN (64 Ki characters) and compile the rest uncached, in the
    run's thread, with no deadline: sre's ``_optimize_charset`` walks every code point of each range of a
    character class in Python (65,536 steps for ``[\\x00-\\uffff]``, five characters written raw, more with
    ``re.IGNORECASE``, whose fold it also calls per code point). ``outline(name='[\\x00-\\uffff]' * 13000)``
    (65,000 characters, under the cap) holds the host 25 s in a run limited to 3 s; ``grep(pattern=...,
    ignore_case=True)`` about 75 s. Fix: bound what a pattern's classes cover before compiling it (sum the ranges'
    widths of the parsed pattern, ``re._parser.parse``, which is cheap, and refuse past a bound), or compile the
    program's patterns in a worker the deadline kills."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("def f():\n    pass\n")
    code = ("p = '[\\x00-\\uffff]' * 13000\n"
            "try:\n    print(len(outline(name=p)))\nexcept Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


def test_fnmatch_of_wide_character_ranges_is_compiled_within_the_run_deadline(tmp_path: Path) -> None:
    """``import fnmatch; fnmatch.fnmatch('a', '[\x00-\uffff]' * 20000)`` (and ``import glob``, whose matcher is the
    same ``fnmatch.filter``): backends/host_modules.py runs a call in a bounded child only past IN_PROCESS_WORK
    (2,000,000) steps, and counts a pattern 16 steps a character, so a 100,000-character pattern is compiled in the
    host process, in the run's thread. sre compiles each character range by walking its code points in Python:
    20,000 classes held the host 42 s in a run limited to 3 s, and the call then returned ``False`` as if nothing
    had happened. Fix: count a class by the code points its ranges cover (or parse the translated pattern,
    ``re._parser.parse``, and sum them), so such a pattern goes to the child the deadline kills."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("import fnmatch\np = '[\\x00-\\uffff]' * 20000\n"
            "try:\n    print(fnmatch.fnmatch('a', p))\nexcept Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


def test_a_committed_gitignore_of_wide_character_ranges_is_read_within_the_run_deadline(tmp_path: Path) -> None:
    """A REPOSITORY file, no program needed: ``search/walk.py``'s ``parse_ignore`` compiles each line of a
    ``.gitignore`` (``compile_uncached(translate_glob(line))``) in the run's thread, with no length cap on a line
    (check_pattern is for the program's patterns; the file is read up to MAX_IGNORE_BYTES, 1 MiB) and no deadline
    check between lines. A glob class ``[\\x01-\\uffff]`` becomes the same regex class, which sre compiles by
    walking its 65,535 code points in Python: one committed line of 20,000 such classes (140 KB) held
    ``glob(pattern='*.txt')`` 117 s in a run limited to 3 s; a 1 MiB file, many minutes. Any glob, grep or
    outline over the checkout pays it. Fix: check the deadline between lines and refuse (skip, as ripgrep skips a
    malformed line, with a note) a rule longer than a path can be (PATH_MAX) or whose classes cover too many code
    points; or parse the rules in a worker."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    (ws / ".gitignore").write_text("[\x01-\uffff]" * 10000 + "\n", encoding="utf-8")
    code = "try:\n    print(glob(pattern='*.txt'))\nexcept Exception as exc:\n    print(type(exc).__name__)\n"
    out, _, took = _peak_run(ws, base / "home", code, memory=1024 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


def _edit_impl_run(tmp_path: Path, entry: dict[str, object]) -> tuple[Path, str]:
    """A repository whose ``.github/hooks/policy.json`` runs ``entry`` (preToolUse), holding ``impl/run.sh``; a
    program edits ``impl/run.sh``: the workspace and the program's output."""
    base, ws = hooked_workspace(tmp_path, [{"type": "command", **entry}], "impl")
    (ws / "impl/run.sh").write_text("exit 0\n")
    return ws, edit_output(ws, base, "impl/run.sh")


# ------------------------------------------------------------ hook commands read with shlex, not as bash reads them
_BASH_FORMS = {  # a hook entry that runs impl/run.sh, as bash (the `bash` key's shell) reads it
    "the entry's env": {"bash": 'sh "$D/run.sh"', "env": {"D": "impl"}},
    "brace expansion": {"bash": "sh impl/{run,none}.sh"},
    "ANSI-C quoting": {"bash": "sh $'impl/run.sh'"},
}


@pytest.mark.parametrize("form", sorted(_BASH_FORMS))
def test_a_hook_script_named_through_bash_expansions_is_protected(tmp_path: Path, form: str) -> None:
    """HOOK_SCRIPT_RULE protects the scripts a repository hook's command names, read by ``hookruns.shell_words``
    (``shlex``, POSIX mode). The Copilot CLI runs the ``bash`` key with bash, which reads more: a hook entry's own
    ``env`` (``{"bash": "sh \\"$D/run.sh\\"", "env": {"D": "impl"}}``: the file's own values, which hookruns has
    but does not substitute -- round 10's open finding is about variables nothing in the file sets), brace
    expansion (``sh impl/{run,none}.sh`` runs ``impl/run.sh``) and ANSI-C quoting (``sh $'impl/run.sh'``).
    shlex yields ``$D/run.sh``, ``impl/{run,none}.sh`` and ``$impl/run.sh``, which match no file, so
    ``edit(path='impl/run.sh', ...)`` succeeds and the CLI runs the program's text on the host at the next tool
    call. Fix: substitute the entry's ``env`` (and ``cwd``) before reading paths; expand braces and read
    ``$'...'`` as bash does; where a word holds syntax the reader does not evaluate, protect what its literal
    parts could name (``impl/*``), or refuse such a hooks file's scripts folder-wide. (Fixed: hookruns reads the
    entry's env, ``$'...'`` and brace groups before it reads paths.)"""
    ws, out = _edit_impl_run(tmp_path, _BASH_FORMS[form])
    assert out.split() == ["PermissionError"], out
    assert (ws / "impl/run.sh").read_text() == "exit 0\n"


# ------------------------------------------------------------ sql's statement splitter, in the host
def test_sql_splitting_a_trigger_of_many_semicolons_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """ca38466 runs the statements in a worker the deadline kills, but the query is still split in the host, in
    the run's thread (``sql.split_statements``), and the deadline is checked only before SQLite is asked about a
    ``;``. Inside an unfinished trigger body every later ``;`` is first passed to ``_may_end_trigger``, which
    slices up to 4,096 characters before it; where that is not ``END`` the loop ``continue``s with no check.
    ``sql(query='CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1;' + 'x;' * 4_000_000)`` (an 8 MB string the
    program builds in a line) holds the host about 40 s in a run limited to 3 s (2,000,000: 13.7 s) before the
    worker is even started. Fix: check the deadline every few thousand ``;`` in the loop (and slice only back to
    the previous ``;``, not 4,096 characters), or split in the worker too."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("q = 'CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1;' + 'x;' * 4_000_000\n"
            "try:\n    print(sql(query=q))\nexcept Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


def test_sql_of_many_statements_stays_within_the_run_memory_limit(tmp_path: Path) -> None:
    """``sql(query='SELECT 1;' * 5_000_000)``: a 45 MB string the program holds within a 128 MiB limit. The host
    splits it into 5,000,000 statement strings (``split_statements``: a Python object each, about 15 times the
    text), marshals them into the worker's request (``_ask``) and writes that into a memory file: the host
    process peaked at 516 MiB (measured with VmHWM) for a run limited to 128 MiB, and the worker, given the same
    list, died of it (the answer then says "the statements may have run in part"). A warm server running a few
    such calls at once runs out of memory. Fix: bound the query (its length, or its statement count) by the run's
    memory limit before splitting, or pass the text to the worker and split it there, under its RLIMIT_AS."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("q = 'SELECT 1;' * 5_000_000\n"
            "try:\n    print(len(sql(query=q)))\nexcept Exception as exc:\n    print(type(exc).__name__)\n")
    out, peak, _ = _peak_run(ws, base / "home", code, memory=128 * MiB, timeout=60)
    assert peak < 320 * MiB, f"the host took {peak // MiB} MiB for a run limited to 128 MiB: {out[-300:]}"


def test_a_hook_script_is_protected_when_its_file_nests_deeper_than_python_reads(tmp_path: Path) -> None:
    """4065e86 makes hookruns fail closed past its bounds (:class:`Unread`: every write is refused), but
    ``targets_of`` still answers "names nothing" where ``json.loads`` raises RecursionError: a hooks file holding
    a value nested 1,500 deep anywhere (``"x": [[[...]]]``), which Node's ``JSON.parse`` -- the CLI's -- reads
    (5,000 deep parses), so the CLI runs its ``preToolUse`` entry, while the script that entry names stays
    writable: ``edit(path='impl/run.sh', ...)`` succeeds and the program's text runs on the host at the next tool
    call. (The deep value must be in the committed file: a contrived file, but the rule's own words are that a
    file past a bound is never read as harmless.) Fix: treat RecursionError (and any file the reader cannot
    parse but that starts like JSON) as Unread, as the other bounds are. (Fixed: RecursionError is Unread.)"""
    base, ws = git_workspace(tmp_path, ".github/hooks", "impl")
    hooks = hooks_json({"type": "command", "bash": "sh impl/run.sh"})
    (ws / ".github/hooks/policy.json").write_text('{"x": ' + "[" * 1500 + "]" * 1500 + ", " + hooks[1:])
    (ws / "impl/run.sh").write_text("exit 0\n")
    out = edit_output(ws, base, "impl/run.sh")
    assert out.split() == ["PermissionError"], out


# ------------------------------------------------------------ f3c4eee: what bash still reads that hookruns does not
_BASH_FORMS_2 = {  # a hook entry that runs impl/run.sh, as bash reads it
    "a variable the command sets": {"bash": 'D=impl; sh "$D/run.sh"'},
    "a variable the command exports": {"bash": 'export D=impl && sh "$D/run.sh"'},
    "nested brace groups": {"bash": "sh impl/{x,{run,y}}.sh"},
    "locale quoting": {"bash": 'sh $"impl/run.sh"'},
}


@pytest.mark.parametrize("form", sorted(_BASH_FORMS_2))
def test_a_hook_script_named_through_the_commands_own_variables_is_protected(tmp_path: Path, form: str) -> None:
    """f3c4eee reads a hook entry's ``env``, one level of brace groups and ``$'...'`` as bash does. A hook command
    that names its folder once in a variable of its own -- ``D=impl; sh "$D/run.sh"`` or ``export D=impl && sh
    "$D/run.sh"``, a common way to write a longer hook -- still names ``$D/run.sh`` to hookruns, which matches no
    file: ``edit(path='impl/run.sh', ...)`` succeeds and the CLI runs the program's text on the host at the next
    tool call. So do nested brace groups (``impl/{x,{run,y}}.sh``) and bash's locale quoting (``$"impl/run.sh"``,
    read as ``"impl/run.sh"``). Fix: read ``NAME=value`` words (alone, or after ``export``/``local``/``declare``)
    as the variable for the rest of the command; expand braces recursively; read ``$"..."`` as ``"..."``; where a
    ``$NAME`` stays unknown, protect what the word's literal tail can name (``*/run.sh``) rather than nothing.
    (Fixed: hookruns._assigned, nested _braces, _LOCALE.)"""
    ws, out = _edit_impl_run(tmp_path, _BASH_FORMS_2[form])
    assert out.split() == ["PermissionError"], out
    assert (ws / "impl/run.sh").read_text() == "exit 0\n"


# ------------------------------------------------------------ e590ea5: python -m's module, found as Python finds it
_MODULE_FORMS = {  # a hook entry that runs src/app/check.py (or tools/check.py) as a module
    "PYTHONPATH set in the command": ({"bash": "PYTHONPATH=src python3 -m app.check"}, "src/app/check.py"),
    "PYTHONPATH set by env(1)": ({"bash": "env PYTHONPATH=src python3 -m app.check"}, "src/app/check.py"),
    "PYTHONPATH in the entry's env": ({"bash": "python3 -m app.check", "env": {"PYTHONPATH": "src"}},
                                      "src/app/check.py"),
    "flags joined to -m": ({"bash": "python3 -Im tools.check"}, "tools/check.py"),
}


@pytest.mark.parametrize("form", sorted(_MODULE_FORMS))
def test_a_module_a_hook_runs_with_python_m_is_protected_however_it_is_found(tmp_path: Path, form: str) -> None:
    """e590ea5 protects the module ``python -m NAME`` runs, looked up from the hook's cwd: ``tools/check.py``. A
    project with a src layout runs its hook as ``PYTHONPATH=src python3 -m app.check`` (or ``env
    PYTHONPATH=src ...``, or with ``"env": {"PYTHONPATH": "src"}`` in the entry), and Python then runs
    ``src/app/check.py``, which stays writable; so does ``tools/check.py`` for ``python3 -Im tools.check``
    (short flags joined, ``-Im``, ``-Pm``, ``-Bm``: CPython reads ``m`` there as ``-m``). ``edit()`` succeeds and
    the CLI runs the program's text on the host at the next tool call. Fix: look the module up in PYTHONPATH's
    folders too (set in the command, through env(1), or in the entry's env) and read a short-flag group ending in
    ``m`` as ``-m``. (Fixed: hookruns._python_files, _module_name.)"""
    entry, target = _MODULE_FORMS[form]
    base, ws = hooked_workspace(tmp_path, [{"type": "command", **entry}], "tools", "src/app")
    for name in ("tools/__init__.py", "tools/check.py", "src/app/__init__.py", "src/app/check.py"):
        (ws / name).write_text("exit = 0\n")
    out = edit_output(ws, base, target, "exit = 0", "import os")
    assert out.split() == ["PermissionError"], out
