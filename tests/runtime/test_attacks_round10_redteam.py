"""Red team, round 10 (issue 40; a helper that had not seen the session's changes): what the round's fixes left
open. Each test runs a program through the sandbox (``run``, monty) and fails while the breach is open (strict
xfail). The timing findings are xfail tests that do not run (``pytest --runxfail`` runs them)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_attacks_round6_links import _run
from test_attacks_round9_redteam import _peak_run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names, symbolic links")

MiB = 1 << 20


# ------------------------------------------------------------ _rejoined's window, tried end by end
def test_a_path_of_lone_quotes_is_refused_within_the_run_deadline(tmp_path: Path) -> None:
    """``view(path='/'.join(['"'] * 2000))`` (a 4 KB path; no file needs to exist): a2b662b bounded each quoted run
    of ``_rejoined`` by MAX_QUOTED_NAME (1,022 characters), but inside that window it still tries, for each part
    that opens a quote, every later part that closes one, from the furthest back, joining the run with ``\\`` and
    matching ``_QUOTED`` each time. A lone ``"`` both opens and closes, and no run of them joined (``"\\"\\"...``)
    is a quoted name, so every try fails: about 511 joins and matches of up to 1 KB per part, 13 s in ``unquote``
    for 2,000 parts and 33 s for the run, limited to 3 s, on the host with no deadline (every path a program gives
    goes through ``unquote``: view, open, Path, edit, os.listdir). Fix: find a part's closing quote in one scan
    (match ``_QUOTED`` once at the start of the joined window and take the part where the match ends), or check
    the run's deadline in the loop. (Fixed: one match over the window names the only part that can close it,
    pathnames._closing_part.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("p = '/'.join(['\"'] * 2000)\n"
            "try:\n    view(path=p)\nexcept Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


def test_a_long_path_of_lone_quotes_is_refused_within_the_run_deadline(tmp_path: Path) -> None:
    """10f9a14 finds a quoted run's closing part with one match, but ``_closing_part`` still walks, for EVERY part
    that opens a quote, the parts of its MAX_QUOTED_NAME window one by one in Python and joins them: about 511
    steps a lone ``"``, 115 us a part. Nothing bounds a path's length first, so ``view(path='/'.join(['"'] *
    200_000))`` -- a 400 KB string the program builds in a line -- holds the host 40 s in a run limited to 3 s
    (``unquote`` alone: 23 s; every path a program gives goes through it). Fix: refuse a path longer than the
    longest real one (PATH_MAX, 4,096 bytes; the kernel's ENAMETOOLONG) before reading its quotes, and/or slide the
    window (advance its end as its start advances) instead of rebuilding it per part. (Fixed: both; a path longer
    than pathnames.MAX_QUOTED_PATH is read as it is, and each window is found by bisection over the parts' ends.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("p = '/'.join(['\"'] * 200_000)\n"
            "try:\n    view(path=p)\nexcept Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ encoding names the fast path and the BOM check miss
_TRY = """\
def t(f):
    try:
        return repr(f())
    except Exception as exc:
        return type(exc).__name__
"""


def test_encoding_aliases_read_as_cpython_reads_them(tmp_path: Path) -> None:
    """The prelude (core/prelude/files.py) normalises an encoding name (``lower()``, ``_`` to ``-``) in
    ``codeact_is_utf8`` and ``codeact_decode``, but ``codeact_read_text`` and ``codeact_open`` take their fast path
    when ``codeact_is_utf8(encoding) and encoding != "utf-8-sig"``, a comparison of the RAW name: ``encoding=
    'UTF-8-SIG'`` or ``'utf_8_sig'`` reads the file as plain UTF-8 and keeps its BOM (``'\\ufeffhi'``; CPython:
    ``'hi'``). And fe9bbfa's BOM refusal knows ``utf-16``/``utf16``/``utf-32``/``utf32`` but not CPython's other
    names of the same codecs: ``encoding='u16'`` (or ``'U16'``) reads a big-endian file with no BOM as
    little-endian, ``'栀椀'`` for ``hi``, where CPython's text mode raises UnicodeError. Both are silent wrong
    answers. Fix: compare the normalised name in the fast-path test, and key the BOM rule by the codec (look the
    name up once: ``u16``, ``utf16``, ``utf-16`` are one codec), not by spelling."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfhi\n")
    (ws / "be.txt").write_bytes(b"\x00h\x00i")
    code = ("from pathlib import Path\n" + _TRY +
            "for e in ('UTF-8-SIG', 'utf_8_sig'):\n"
            "    print('sig', t(lambda: open('bom.txt', encoding=e).read()),"
            " t(lambda: Path('bom.txt').read_text(encoding=e)))\n"
            "for e in ('u16', 'U16'):\n"
            "    print('u16', t(lambda: open('be.txt', encoding=e).read()),"
            " t(lambda: Path('be.txt').read_text(encoding=e)))\n")
    out = _run(ws, base / "home", code)
    sig = [line for line in out.splitlines() if line.startswith("sig ")]
    u16 = [line for line in out.splitlines() if line.startswith("u16 ")]
    assert sig == ["sig 'hi\\n' 'hi\\n'"] * 2, out
    assert u16 == ["u16 UnicodeDecodeError UnicodeDecodeError"] * 2, out  # the sandbox's UnicodeError


# ------------------------------------------------------------ view of a UTF-16 file, by range
def test_view_range_of_a_long_utf16_file_is_never_a_silently_short_answer(tmp_path: Path) -> None:
    """A file starting with a UTF-16 BOM takes view's UTF-16 branch (tools/files.py): it reads ``keep * 2`` bytes
    (about 2 MiB), splits them into lines and answers ANY ``view_range`` from those lines (``_pick``), though the
    file goes on. A 300,000-line UTF-16 file (4.6 MB): ``view_range=[250000, 250001]`` raises IndexError saying
    the file "has 96312 lines", and ``view_range=[1, -1]`` returns lines 1-96311 and half of the next with no
    truncation marker and no note -- a program paging by range, or reading to the end, takes the file for
    a third of what it is. Fix: for a range, decode in chunks as the UTF-8 range does (count lines to ``first``,
    keep at most ``keep``), or say the cut (marker and note) and never name a line count that was not counted.
    (Fixed: a range of a UTF-16 file is read as UTF-8 through the chunked range reader, files._Utf16AsUtf8.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "u16.txt").write_bytes("".join(f"line {i}\n" for i in range(1, 300_001)).encode("utf-16"))
    code = ("try:\n    print(repr(view(path='u16.txt', view_range=[250000, 250001])))\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
            "whole = view(path='u16.txt', view_range=[1, -1])\n"
            "print('ENDS', repr(whole[-200:]))\n")
    out = _run(ws, base / "home", code)
    assert "'line 250000\\nline 250001\\n'" in out, out[-600:]
    end = out.split("ENDS", 1)[1]
    assert "line 300000\\n'" in end or "truncated" in end, out[-600:]


# ------------------------------------------------------------ import glob over a committed fan of links
def test_import_glob_over_a_committed_fan_of_links_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """Round 9's fan of links (``d/l1``, ``d/l2`` -> ``.``), placed 30 folders deep, read with the ``glob``
    MODULE: ``glob.glob('p0/.../p29/d/**', recursive=True)``. 8c3614d put the run's deadline into
    ``WorkspaceOS._scan`` (os.walk, Path.glob), but ``import glob`` is served by backends/confined_glob.py, which
    follows every link inside and opens each folder part by part from the root until its caps (200,000 names,
    32 MiB of answer) with no deadline check: 23 s in one host call for a run limited to 1 s (8 s with the fan at
    the root), on the run's thread -- on the warm server the client takes the server for stuck. Fix: check the
    run's deadline in confined_glob's listing (each folder listed, each link followed) and fail with a
    RuntimeError as _scan does (an OSError would be swallowed). (Fixed: each folder listed and each link followed
    checks the deadline; its check every 1,000 names raised a TimeoutError, an OSError the listing swallowed.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    deep = "/".join(f"p{i}" for i in range(30))
    (ws / deep / "d").mkdir(parents=True)
    for name in ("l1", "l2"):
        (ws / deep / "d" / name).symlink_to(".", target_is_directory=True)
    code = (f"import glob\ntry:\n    print(len(glob.glob({deep + '/d/**'!r}, recursive=True)))\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=1)
    assert took < 8, f"a run limited to 1 s took {took:.0f} s: {out[-300:]}"
    assert "deadline" in out or "TimeoutError" in out, out  # never a silent, partial listing


# ------------------------------------------------------------ a huge regular expression compiled on the host
@pytest.mark.parametrize("call", ["grep(pattern=p)", "outline(name=p)"])
def test_a_huge_pattern_is_compiled_within_the_run_limits(tmp_path: Path, call: str) -> None:
    """``p = '(?:a)' * 1_500_000`` (a 7.5 MB string the program builds) given to ``grep(pattern=p)`` or
    ``outline(name=p)``: grep_lines._compile and outline's ``re.compile(name)`` compile it with the host's ``re``
    before anything else, in the run's thread (sre's parser and compiler: 16 s and 730 MiB of the host for 7.5 MB,
    in a run limited to 2 s and 256 MiB; the deadline is noticed only afterwards, at ripgrep's or the listing's
    next check). 3c8f6e8 moved outline's name MATCHING into a worker killed at the deadline, but not the compile;
    grep's worker too compiles only after the host did. Fix: refuse a pattern past a size bound (ripgrep's own
    --regex-size-limit is 10 MB of compiled program; a few KB of pattern is plenty for a name or a line), or
    compile it in the bounded worker (the deadline and an RLIMIT_AS) and never in the host. (Fixed: a pattern or
    glob over core.patterns.MAX_PATTERN characters is refused before it is compiled.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "m.py").write_text("def f():\n    pass\n")
    code = (f"p = '(?:a)' * 1_500_000\ntry:\n    print(str({call})[:100])\n"
            "except Exception as exc:\n    print(type(exc).__name__, str(exc)[:200])\n")
    out, peak, took = _peak_run(ws, base / "home", code, memory=64 * MiB, timeout=1)
    assert peak < 256 * MiB, f"the host took {peak // MiB} MiB for a run limited to 64 MiB: {out[-300:]}"
    assert took < 8, f"a run limited to 1 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ view's listing and str.splitlines
def test_view_of_a_folder_splits_into_its_entries_with_splitlines(tmp_path: Path) -> None:
    """e405674 quotes a name holding a control character (``\\x00``-``\\x1f``, ``\\x7f``), so view's folder listing
    has one entry a line when split at ``\\n``. But ``str.splitlines()`` -- the usual way a program splits a tool's
    text -- also splits at U+0085 (NEL), U+2028 and U+2029, which no rule quotes: a committed
    ``notes\\u2028README.md`` beside ``README.md`` makes ``view(path='.').splitlines()`` give ``README.md`` twice
    and ``notes`` (no such entry), and ``x\\x85y.txt`` gives ``x`` and ``y.txt``; reading the second ``README.md``
    reads the other file. Fix: quote a name holding any character ``str.splitlines`` splits at (git's default
    core.quotePath quotes every byte past ASCII), so each line of the listing is one entry however it is split.
    (Fixed: such a name is quoted, pathnames._QUOTED_ALWAYS.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "notes\u2028README.md").write_text("hidden\n")
    (ws / "x\x85y.txt").write_text("nel\n")
    (ws / "README.md").write_text("real\n")
    out = _run(ws, base / "home", "print(view(path='.').splitlines())\n")
    listed = out.strip()
    assert listed.count("'README.md'") == 1 and "'notes'" not in listed and "'x'" not in listed, out
    assert listed.count(", ") == 2, out  # three entries


# ------------------------------------------------------------ one SQL function call longer than the run
def test_sql_functions_of_huge_widths_stop_at_the_run_deadline(tmp_path: Path) -> None:
    """``sql(query="SELECT length(printf('%.*c', 2000000000, 'x')), ...")`` with six such columns: the run's
    deadline reaches SQLite only through ``set_progress_handler(..., 10_000)``, called between virtual-machine
    steps, and each ``printf`` call is ONE step that runs about 5 s in SQLite's C code (and answers NULL) -- no
    handler, no SIGALRM (the main thread is in C) and no watchdog stops it: 32 s for a run limited to 1 s, and the
    program then goes on with the answer as if in time. On the warm server one call holds a server thread for as
    many columns as the program writes. Fix: bound what one call may build (``conn.setlimit(SQLITE_LIMIT_LENGTH,
    ...)`` tied to the tool-result or memory limit: printf's width is then refused at once), and/or run the
    query in a thread the deadline ends with ``conn.interrupt()``. (Fixed: the length limit does not shorten
    SQLite 3.40's repeat loop, and interrupt() is checked between steps only, so printf and format are taken over
    on the connection: a ``%c`` repeated past the length limit answers NULL at once, as SQLite does after the
    loop; any other call is SQLite's own printf on a connection of its own, tools/sql._bounded_printf. Since: the
    statements run in a worker process the run's deadline kills, tools/sql_worker, and that guard is gone.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("q = 'SELECT ' + ', '.join(f\"length(printf('%.*c', 2000000000, 'x')) AS v{i}\" for i in range(6))\n"
            "try:\n    print(sql(query=q))\nexcept Exception as exc:\n    print(type(exc).__name__, str(exc)[:150])\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=1)
    assert took < 8, f"a run limited to 1 s took {took:.0f} s: {out[-300:]}"

def test_sql_printf_repeats_spelt_otherwise_stop_at_the_run_deadline(tmp_path: Path) -> None:
    """ca8eb78 answers ``printf('%.*c', N, 'x')`` with NULL at once when its regex sees a ``%c`` whose precision is
    an int (or a digit string) past the length limit, and hands every other call to SQLite's own printf on a
    connection of its own -- with no progress handler and the same seconds-long repeat loop. SQLite takes the
    precision from a REAL (``2000000000.0``) and from a text it reads as a number (``'2000000000 '``), and reads a
    length modifier before the letter (``%.*lc``, ``%.2000000000lc``); each still runs about 4 s in one step (and
    answers NULL): six in one row, over 20 s in a run limited to 1 s. Fix: decide by SQLite's own reading (the
    precision as SQLite converts it: ``CAST(? AS INTEGER)``, the ``l``/``ll`` modifiers skipped) or, simpler,
    never call SQLite's printf with a ``%c`` precision above the length limit whatever its spelling (refuse any
    precision or width past it). (Fixed: the statements run in a worker process the run's deadline kills, whatever
    SQLite's C code is doing, tools/sql_worker; the guard is gone.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    calls = ["printf('%.*c', 2000000000.0, 'x')", "printf('%.*lc', 2000000000, 'x')",
             "format('%.*c', '2000000000 ', 'x')", "printf('%.2000000000lc', 'x')",
             "printf('%.*c', 2e9, 'x')", "format('%.*llc', 2000000000, 'x')"]
    query = "SELECT " + ", ".join(f"length({call}) AS v{i}" for i, call in enumerate(calls))
    code = f"try:\n    print(sql(query={query!r}))\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n"
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=1)
    assert took < 8, f"a run limited to 1 s took {took:.0f} s: {out[-300:]}"


def test_one_quadratic_sql_function_call_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """``instr(H, N)`` with ``H`` 8 MB of ``a`` and ``N`` 80 KB of ``a`` and a ``b`` (built in SQL:
    ``replace(hex(zeroblob(4000000)), '0', 'a')``, well under the length limit): SQLite's instr compares the needle
    at every offset, 8e6 x 8e4 byte comparisons, in ONE virtual-machine step, so neither the progress handler
    (every 10,000 steps) nor ``interrupt()`` (also between steps) can stop it: 16 s in a run limited to 1 s, then
    the answer is returned as if in time. ca8eb78 guarded printf alone; ``replace``, ``instr`` and any other
    function over long values do the same. Fix: run the statements where the deadline can end them whatever
    SQLite is doing -- a worker process killed at the deadline, as grep's Python search runs (confined as the
    thread is now) -- or bound every value's length far lower (a few MB) so no single step outlasts a second.
    (Fixed: that worker process, confined by Landlock itself, tools/sql_worker.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    query = ("SELECT instr(replace(hex(zeroblob(4000000)), '0', 'a'), "
             "replace(hex(zeroblob(40000)), '0', 'a') || 'b') AS i")
    code = f"try:\n    print(sql(query={query!r}))\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n"
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=1)
    assert took < 8, f"a run limited to 1 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ the scripts a repository's hooks run
def test_a_program_cannot_rewrite_a_script_the_repositorys_hooks_run(tmp_path: Path) -> None:
    """A repository's own Copilot hook, as GitHub's docs write one: ``.github/hooks/policy.json`` with a
    ``preToolUse`` entry ``{"bash": "./scripts/security-check.sh", "powershell": "./scripts/security-check.ps1"}``
    (or ``{"bash": "./audit.sh", "cwd": "tools"}``). The JSON file is protected (HOOKS_RULE), but the script it
    runs is an ordinary file: ``edit(path='scripts/security-check.sh', ...)`` succeeds, keeps the file's mode
    (0755), and the Copilot CLI runs the program's text on the host at the very next tool call (preToolUse fires
    on every call, the next ``codeact run`` included) -- host code execution, no bash, no person acting (unlike the
    Makefile or a package.json script, docs/security.md's "What stays writable"). Fix: as for a plugin's manifest
    (boundary._plugin_rule protects the files it names under ``hooks``), protect what the repository's hook files
    (and the inline hooks of ``.github/copilot/settings*.json``) run: a ``bash``/``powershell`` command's first
    word, or a script argument, that names a path inside the repository (resolved against the entry's ``cwd``),
    and the ``cwd`` folder's files the command names."""
    import json
    import subprocess

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    (ws / "scripts").mkdir()
    (ws / "tools").mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / ".github/hooks/policy.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": "./scripts/security-check.sh", "powershell": "./scripts/security-check.ps1",
         "timeoutSec": 15},
        {"type": "command", "bash": "./audit.sh", "cwd": "tools"}]}}))
    for script in ("scripts/security-check.sh", "tools/audit.sh"):
        (ws / script).write_text("#!/bin/sh\nexit 0\n")
        (ws / script).chmod(0o755)
    code = ("def t(f):\n    try:\n        return repr(f())\n    except Exception as exc:\n"
            "        return type(exc).__name__\n"
            "print(t(lambda: edit(path='scripts/security-check.sh', old_str='exit 0', new_str='id; exit 0')))\n"
            "print(t(lambda: create(path='scripts/security-check.ps1', file_text='whoami')))\n"
            "print(t(lambda: edit(path='tools/audit.sh', old_str='exit 0', new_str='id; exit 0')))\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"] * 3, out
    assert (ws / "scripts/security-check.sh").read_text() == "#!/bin/sh\nexit 0\n"


# ------------------------------------------------------------ compiled patterns kept by re's cache
def test_the_programs_patterns_do_not_stay_compiled_in_the_host_after_its_run(tmp_path: Path) -> None:
    """``grep(pattern=p)`` with a different pattern of up to 64 Ki characters each time (59d5cc2's cap):
    grep_lines._compile (and outline's ``name=``, glob's translated pattern) call ``re.compile``, and ``re``'s module
    cache keeps the last 512 compiled patterns for the life of the process. A 64 KB alternation compiles to about
    0.6 MB: measured, 100 calls left the process 56 MB larger after the run, freed only by ``re.purge()``; 512 keep
    about 300 MB in the warm server, long after the runs (limited to 64 MiB) that made them -- round 4 closed the
    same hole for fnmatch's cache. Fix: compile the program's patterns uncached (``re._compiler.compile``/
    ``sre_compile.compile``, or a private LRU bounded in bytes), or purge them after the call."""
    import re

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    code = ("for i in range(8):\n"
            "    print(len(grep(pattern='(?:r10tag' + str(i) + '|' + 'a|' * 30000 + 'b)')))\n"
            "print(len(glob(pattern='r10glob' + '[ab]' * 10000)))\n")
    _run(ws, base / "home", code)
    cached = list(re._cache)  # type: ignore[attr-defined]  # CPython's module cache: (type, pattern, flags)
    kept = [key for key in cached if "r10tag" in str(key[1])[:20] or "r10glob" in str(key[1])[:40]]
    assert not kept, f"{len(kept)} of the program's patterns stay compiled in the host"


# ------------------------------------------------------------ Copilot CLI extensions of the repository
def test_a_program_writes_no_copilot_cli_extension(tmp_path: Path) -> None:
    """The Copilot CLI loads "project extensions" from ``.github/extensions/NAME/extension.mjs`` (``.cjs``,
    ``.js``): a Node.js module it RUNS, as a process beside the session, whenever experimental features are on
    (``--experimental``, or ``/experimental on``, which the user's config keeps; in ``-p`` mode also with
    ``GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS=true``), and again on its ``extensions_reload`` tool. No rule protects
    the folder: ``create(path='.github/extensions/notes/extension.mjs', file_text=...)`` succeeds, and the next
    session runs the program's code on the host with the user's permissions, no bash needed. Checked with the
    Copilot CLI 1.0.102 (tests/copilot's mock model, ``copilot -p hi --experimental``): a planted extension.mjs
    wrote its marker file, from the repository as its working folder. Fix: protect ``.github/extensions/`` as
    ``.github/hooks/`` and ``.github/agents/`` are (every file, new ones included, any depth, case-folded), and the
    ``extensions`` a plugin's manifest names. (Fixed: boundary.EXTENSIONS_RULE.)"""
    import subprocess

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    code = ("for p in ['.github/extensions/notes/extension.mjs', '.github/extensions/x/extension.cjs',"
            " '.github/Extensions/y/extension.js']:\n"
            "    try:\n        print(create(path=p, file_text='process.exit(0)'))\n"
            "    except Exception as exc:\n        print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"] * 3, out
    assert not (ws / ".github/extensions").exists()


# ------------------------------------------------------------ what a hook runs without naming a script
_HOOK_RUNS = {  # a hook command, the file it runs that names no script path, and an edit of that file
    "python -m": ("python3 -m tools.check", "tools/check.py", ("print('ok')", "print('changed')")),
    "make": ("make -s lint", "Makefile", ("\ttrue", "\tid")),
    "npm run": ("npm run --silent lint", "package.json", ('"true"', '"id"')),
}


@pytest.mark.parametrize("form", sorted(_HOOK_RUNS))
def test_a_program_cannot_change_what_a_repository_hook_runs_by_module_or_task(tmp_path: Path, form: str) -> None:
    """5e05e5b protects the scripts a repository's hook commands NAME (a word with ``/``, a script suffix, a word
    after an interpreter). Hooks as commonly written run repository code without naming a file:
    ``python3 -m tools.check`` (a module: ``tools/check.py``, and its package's ``__init__.py``), ``make -s lint``
    (the ``Makefile``'s recipe), ``npm run --silent lint`` (``package.json``'s script). A program edits that file
    with edit() -- docs/security.md keeps the Makefile and package.json scripts writable because "only a person"
    runs them, but here the hook runs them at the next tool call -- and its text runs on the host, no bash. (The
    same holds for a tool's code-bearing config the hook's tool loads: ``npx eslint .`` runs
    ``eslint.config.js``.) Fix: read ``-m MODULE`` as its module file (and its packages' ``__init__.py``), and a
    task runner's file (Makefile, package.json, justfile, Taskfile.yml, pyproject.toml) as run when the hook calls
    that runner; or say in docs/security.md that a repository's hooks make every file they reach code, and protect
    nothing less than that list. (Fixed: hookruns._runner_files protects the first file such a runner reads:
    the module's files, the Makefile, package.json; what those import or run in turn stays writable, as
    docs/security.md says.)"""
    import json
    import subprocess

    command, target, (old, new) = _HOOK_RUNS[form]
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    (ws / "tools").mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / ".github/hooks/policy.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": command}]}}))
    (ws / "tools/__init__.py").write_text("")
    (ws / "tools/check.py").write_text("print('ok')\n")
    (ws / "Makefile").write_text("lint:\n\ttrue\n")
    (ws / "package.json").write_text('{"scripts": {"lint": "true"}}\n')
    before = (ws / target).read_text()
    code = (f"try:\n    print(edit(path={target!r}, old_str={old!r}, new_str={new!r}))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"], out
    assert (ws / target).read_text() == before


_ROOT_SPELLINGS = {  # a hook command naming its script from the repository root, as hooks commonly find it
    "git toplevel": '"$(git rev-parse --show-toplevel)/scripts/check.sh"',
    "pwd": "$(pwd)/scripts/check.sh",
    "a defaulted variable": 'exec "${GITHUB_WORKSPACE:-.}/scripts/check.sh"',
}


@pytest.mark.parametrize("form", sorted(_ROOT_SPELLINGS))
def test_a_hook_script_named_from_the_root_by_a_command_substitution_is_protected(tmp_path: Path,
                                                                                  form: str) -> None:
    """5e05e5b resolves a hook command's script path against the entry's ``cwd`` and reads ``$PWD`` and the
    project variables as the repository root, but a hook that finds the root the usual portable way --
    ``"$(git rev-parse --show-toplevel)/scripts/check.sh"``, ``$(pwd)/scripts/check.sh``,
    ``"${GITHUB_WORKSPACE:-.}/scripts/check.sh"`` -- names a "path" starting with that text, which matches no
    file: ``edit(path='scripts/check.sh', ...)`` succeeds and the CLI runs the program's text on the host at the
    next tool call. Fix: read a leading ``$(git rev-parse --show-toplevel)``, ``$(pwd)``, ``` `pwd` ``` and
    ``${VAR:-default}`` (the default) as the root, or, where a word holds a substitution the reader cannot
    evaluate, protect every file whose path ends as the word's literal tail does (``*/scripts/check.sh``).
    (Fixed: hookruns._substituted and _expand read them as the root, the cwd and the default.)"""
    import json
    import subprocess

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    (ws / "scripts").mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / ".github/hooks/policy.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": _ROOT_SPELLINGS[form]}]}}))
    (ws / "scripts/check.sh").write_text("#!/bin/sh\nexit 0\n")
    code = ("try:\n    print(edit(path='scripts/check.sh', old_str='exit 0', new_str='id'))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"], out


def test_a_program_cannot_rewrite_a_script_a_plugins_hooks_run(tmp_path: Path) -> None:
    """A marketplace repository (CodeAct's plugin scope, or any local marketplace, which the CLI reads live) holds
    ``plugins/lint/plugin.json`` naming ``hooks.json``, whose ``preToolUse`` runs ``./scripts/check.sh`` and
    ``${CLAUDE_PLUGIN_ROOT}/scripts/two.sh``. _plugin_rule protects plugin.json and hooks.json, and 5e05e5b
    protects what the REPOSITORY's hooks files run, but no rule reads a plugin's hooks file for the scripts it
    runs: ``edit(path='plugins/lint/scripts/check.sh', ...)`` succeeds, and every session with the plugin
    installed runs the program's text on the host at each tool call. Fix: read a plugin's hooks files (the
    manifest's ``hooks``, default ``hooks.json``) with core/hookruns/ too, resolving relative paths and
    ``${CLAUDE_PLUGIN_ROOT}``/``${COPILOT_PLUGIN_ROOT}`` against the plugin's folder. (Fixed:
    boundary._plugin_hook_script.)"""
    import json
    import subprocess

    base = tmp_path.resolve()
    ws = base / "ws"
    plugin = ws / "plugins/lint"
    (plugin / "scripts").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (plugin / "plugin.json").write_text(json.dumps({"name": "lint", "version": "1.0.0", "hooks": "hooks.json"}))
    (plugin / "hooks.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": "./scripts/check.sh"},
        {"type": "command", "bash": "${CLAUDE_PLUGIN_ROOT}/scripts/two.sh"}]}}))
    for name in ("check", "two"):
        (plugin / f"scripts/{name}.sh").write_text("#!/bin/sh\nexit 0\n")
    code = ("for s in ['check', 'two']:\n    try:\n"
            "        print(edit(path='plugins/lint/scripts/' + s + '.sh', old_str='exit 0', new_str='id'))\n"
            "    except Exception as exc:\n        print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"] * 2, out


def test_committed_hooks_files_do_not_hold_a_write_past_the_run_deadline(tmp_path: Path) -> None:
    """A repository commits eight ``.github/hooks/h0N.json`` of 0.9 MB each, one ``bash`` entry of 100,000 words
    like ``a1/b`` (the Copilot CLI never runs them in a folder it does not trust; CodeAct reads them anyway).
    5e05e5b's boundary reads every hooks file above a written path (``_hook_script``) and splits each command with
    Python's ``shlex`` -- about 2.5 s a file -- on the run's thread, at the program's first ``create()``, with no
    deadline check: 21 s and 266 MiB for ``create(path='x.txt', ...)`` in a run limited to 2 s (64 files, the
    cap: about three minutes), again in every cold run (the parse is cached per process). Fix: a far smaller
    bound on what is read of a hooks file (a hook command is a line, not a megabyte: cap each command's length
    and the words read), a cheaper split than shlex, and the run's deadline checked between entries. (Fixed:
    hookruns reads a command of at most 16 KiB and 10,000 words a file, a file past them refusing the writes it
    governs, and stops at the run's deadline, refusing the write.)"""
    import json
    import subprocess

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / ".github/hooks").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    command = " ".join(f"a{i}/b" for i in range(100_000))[:900_000]
    for number in range(8):
        (ws / f".github/hooks/h{number:02}.json").write_text(json.dumps({"version": 1, "hooks": {
            "preToolUse": [{"type": "command", "bash": command}]}}))
    out, _, took = _peak_run(ws, base / "home", "print(create(path='x.txt', file_text='x'))", memory=256 * MiB,
                             timeout=2)
    assert took < 10, f"a run limited to 2 s took {took:.0f} s: {out[-300:]}"


def test_a_program_writes_no_extension_of_a_plugin(tmp_path: Path) -> None:
    """1691602 protects the repository's ``.github/extensions/``; a PLUGIN's extensions live in its own
    ``extensions/NAME/extension.mjs`` (no manifest key needed), and _plugin_rule protects only plugin.json,
    hooks.json, .mcp.json, lsp.json, agents/ and what the manifest names. In a marketplace repository (CodeAct's
    plugin scope holds other plugins beside plugins/codeact/; a local marketplace is read live) a program creates
    ``plug/extensions/notes/extension.mjs`` beside ``plug/plugin.json``, and the Copilot CLI runs it for every
    session with the plugin: checked with CLI 1.0.102 (``copilot -p hi --experimental --plugin-dir plug``, the
    mock model), the planted extension wrote its marker. Fix: add ``extensions/`` (and a manifest's
    ``extensions`` key) to a plugin's protected files. (Fixed: boundary._PLUGIN_FOLDERS.)"""
    import subprocess

    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "plug").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / "plug/plugin.json").write_text('{"name": "plug", "version": "1.0.0"}')
    code = ("try:\n    print(create(path='plug/extensions/notes/extension.mjs', file_text='process.exit(0)'))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = _run(ws, base / "home", code)
    assert out.split() == ["PermissionError"], out


def test_a_very_long_path_is_refused_within_the_run_limits(tmp_path: Path) -> None:
    """``view(path='a/../' * 8_000_000 + 'f')`` (a 40 MB string the program builds; ``a`` a folder): 7684e2a made
    ``unquote`` pass a path longer than MAX_QUOTED_PATH through "as it is, for the kernel's error", but the kernel
    never sees it: the boundary resolves it part by part in Python (Workspace.reading, resolve_beneath, the write
    rules' case folding) and then opens ``f``. 5,000,000 repetitions took 13.7 s of the host, peaking at 561 MiB,
    in a run limited to 2 s and 256 MiB, and answered the file's text. Fix: refuse any path a tool or file idiom
    is given that is longer than PATH_MAX (4,096 bytes) or has more parts than it can hold, with the kernel's
    ENAMETOOLONG, before anything splits it. (Fixed: Workspace.reading raises ENAMETOOLONG for a path of PATH_MAX
    bytes or more, as the kernel does.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "f").write_text("x\n")
    code = ("try:\n    print(repr(view(path='a/../' * 8_000_000 + 'f')))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=2)
    assert took < 8, f"a run limited to 2 s took {took:.0f} s: {out[-300:]}"
