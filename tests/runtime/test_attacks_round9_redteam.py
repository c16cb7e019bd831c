"""Red team, round 9 (a helper that had not seen the session's changes): a bash call that outlives its run, host
helpers past the run's memory and time limits (a huge file read by line, ripgrep on a long .gitignore, a walk over
a committed fan of links), and names the sandbox's pathlib reads as other files. Each test runs a program through
the sandbox (``run``, monty) and fails while the breach is open (strict xfail). The timing findings are xfail tests
that do not run (``pytest --runxfail`` runs them)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_attacks_round6_links import _run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links, sparse files, PID namespaces")

MiB = 1 << 20


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], check=True, cwd=cwd, capture_output=True)


_CHILD = """\
import json, os, resource, sys
sys.path.insert(0, sys.argv[1])
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.runner import run
ws, home, memory, timeout = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
code = sys.stdin.read()
os.chdir(ws)
result = run(code, workspace=ws, backend="monty", settings=Settings(), limits=Limits(memory=memory, timeout=timeout),
             environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8",
                      "CODEACT_CONFIG_DIR": home + "/cfg"})
# this process's own peak from its memory map (ru_maxrss of RUSAGE_SELF keeps the peak of the process that started
# it: Linux sets it at exec from the parent's map, shared by vfork; under pytest-xdist that is the worker's size)
try:
    own = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
peak = max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"out": result.stdout + result.stderr + str(result.error), "peak": peak * 1024}))
"""


def _peak_run(ws: Path, home: Path, code: str, *, memory: int, timeout: float) -> tuple[str, int, float]:
    """``code`` run in the sandbox over ``ws`` in a Python of its own (so its peak memory is its own): the output,
    the peak resident size in bytes of that process and of every process it started (ripgrep, git, workers), and
    the seconds the run took."""
    import codeact

    home.mkdir(exist_ok=True)
    runtime = str(Path(codeact.__file__).resolve().parent.parent)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _CHILD, runtime, str(ws), str(home), str(memory), str(timeout)],
                          input=code, capture_output=True, text=True, timeout=timeout + 300)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout.splitlines()[-1])
    return shown["out"], shown["peak"], took


def _huge_file_run(tmp_path: Path, name: str, code: str) -> None:
    """``code`` over a workspace holding ``name``, a sparse file of 256 MiB, in a run limited to 64 MiB: the host
    (this process and what it starts) must stay well under the file's size."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    with open(ws / name, "wb") as handle:
        handle.truncate(256 * MiB)
    out, peak, _ = _peak_run(ws, base / "home", code, memory=64 * MiB, timeout=60)
    assert peak < 160 * MiB, f"the host took {peak // MiB} MiB for a run limited to 64 MiB: {out[-500:]}"


# ------------------------------------------------------------ codeact doctor imports the workspace's modules
def test_codeact_doctor_runs_no_module_of_the_workspace(tmp_path: Path) -> None:
    """``codeact doctor`` is one of the read-only subcommands the enforcement hook lets the model run in exclusive
    mode (spec.MODEL_SUBCOMMANDS), from the repository root. Its template check (lifecycle/doctor.query_copier)
    runs ``[python, "-c", _COPIER_QUERY]`` with no ``-I``/``-P`` and no ``cwd``: ``-c`` puts the current folder
    first on sys.path, and the query imports ``json`` (not yet loaded in that Python) and
    ``copier_template_extensions``. A ``json.py`` at the root -- committed by a pull request, or written by a
    sandboxed PROGRAM with create(), which may write any ordinary file there -- runs on the host with the user's
    permissions: an escape from the sandbox through a command the hook allows, bash or not. Fix: run the query
    with ``-I`` (or ``-P`` and ``cwd=`` a folder programs cannot write), as the launcher's ``del sys.path[0]``,
    the workers' ``-I`` and bootstrap's ``chdir`` do elsewhere."""
    import codeact

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    _git("init", "-q", str(ws))
    marker = base / "ran-on-the-host"
    payload = f"open({str(marker)!r}, 'w').write('x')\n"
    out = _run(ws, base / "home", f"print(create(path='json.py', file_text={payload!r}))\n")
    assert "created json.py" in out, out
    runtime = str(Path(codeact.__file__).resolve().parent.parent)
    entry = "import sys; del sys.path[0]; from codeact.client import entry; entry()"  # the launcher's
    env = {**os.environ, "PYTHONPATH": runtime, "CODEACT_SERVER": "0", "HOME": str(base / "home"),
           "CODEACT_CONFIG_DIR": str(base / "home/cfg"), "XDG_CACHE_HOME": str(base / "cache"),
           "XDG_STATE_HOME": str(base / "state")}
    done = subprocess.run([sys.executable, "-S", "-c", entry, "doctor"], cwd=ws, env=env, capture_output=True,
                          text=True, timeout=300)
    assert not marker.exists(), f"json.py of the workspace ran on the host: {done.stdout[-800:]}"


# ------------------------------------------------------------ bash with a NaN timeout
def test_a_bash_call_with_a_nan_timeout_leaves_nothing_running(tmp_path: Path) -> None:
    """``bash(command=..., timeout=float('nan'))``: the check ``timeout <= 0`` lets NaN through, ``min(nan,
    run_left)`` is NaN, and the supervisor (``unshare`` ... ``bash_reaper``) is started before ``_pump`` fails on
    the NaN deadline (ValueError: cannot convert float NaN to integer). The ``try`` around it only forgets the call:
    nothing stops the process group, and no sweep runs. The program gets a ValueError it can catch; the command goes
    on running after the run has ended (re-parented to init), here writing a file a second later -- anything it
    likes, for as long as it likes. Fix: refuse a timeout that is not finite, and stop the call's group (and its
    supervisor) whenever the pumping fails, not only after it returns."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("try:\n"
            "    bash(command='touch started; sleep 1; touch outlived', timeout=float('nan'))\n"
            "except Exception as exc:\n"
            "    print(type(exc).__name__, exc)\n")
    out = _run(ws, base / "home", code)
    ended = time.monotonic()
    while time.monotonic() - ended < 10 and not (ws / "outlived").exists():
        time.sleep(0.2)
    assert not (ws / "outlived").exists(), f"the command ran on after its run had ended: {out}"


# ------------------------------------------------------------ one huge line read whole on the host
def test_view_with_a_range_of_a_huge_file_stays_within_the_run_memory(tmp_path: Path) -> None:
    """``view(path=..., view_range=[1, 1])`` iterates the file by line (``for raw in handle``) and checks each line
    for a NUL only once it has it whole: a 256 MiB file with no newline (sparse zeros here; a data file, a
    minified bundle, a file bash made) becomes one 256 MiB bytes object in the host, and a 3 GiB one took 6.4 GB
    and 28 s in a run limited to 256 MiB and 3 s. The run's memory limit of 64 MiB here is the sandbox's; the host
    took 2x the file. Fix: read a range in bounded chunks (the binary check on each chunk, a line longer than the
    tool-result limit cut visibly), never a whole line at once."""
    _huge_file_run(tmp_path, "big.dat", "print(view(path='big.dat', view_range=[1, 1])[:40])")


def test_edit_of_a_huge_file_stays_within_the_run_memory(tmp_path: Path) -> None:
    """``edit(path=..., old_str=..., new_str=...)`` reads the file whole (``Slot.read``: ``handle.read()``), decodes
    it, counts and replaces: a 256 MiB file takes about twice that in the host before any answer, whatever the run's
    memory limit (64 MiB here); a 1 GiB file took 2.1 GB. Fix: refuse a file over a bound tied to the run's memory
    limit (or the write limit) from its fstat, before reading it, with a message naming view_range/bash."""
    _huge_file_run(tmp_path, "big.txt", "print(edit(path='big.txt', old_str='zz', new_str='y'))")


# ------------------------------------------------------------ ripgrep on a long committed .gitignore
def test_a_long_gitignore_does_not_take_the_search_past_the_run_memory(tmp_path: Path) -> None:
    """A repository commits a ``.gitignore`` of 30,000 lines like ``dir1/**/*.log`` (0.5 MB). Every ``glob``,
    ``grep`` and ``outline`` starts ripgrep, which compiles them into one glob set: 564 MB and 5 s here (100,000
    lines, 1.8 MB: 1.9 GB and 30 s; 3,000,000 lines: 8.7 GB in 60 s), in a child with no memory limit at all, while
    the run's limit is 64 MiB. Only the run's deadline stops it, and several searches run at once on the warm
    server. Fix: give the tools' children (ripgrep, git, the regex and outline workers) an address-space limit
    tied to the run's memory limit (``RLIMIT_AS`` in the preexec, as host_modules' child has), and/or read
    ignore files past a size bound with the Python walk's rules instead."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    (ws / ".gitignore").write_text("".join(f"dir{i}/**/*.log\n" for i in range(30_000)))
    _git("init", "-q", str(ws))
    _git("add", "a.py", ".gitignore", cwd=ws)
    out, peak, _ = _peak_run(ws, base / "home", "print(glob(pattern='*.py'))", memory=64 * MiB, timeout=30)
    assert peak < 256 * MiB, f"the search took {peak // MiB} MiB for a run limited to 64 MiB: {out[-500:]}"


# ------------------------------------------------------------ a walk over a committed fan of links
def test_a_walk_over_a_committed_fan_of_links_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """``d/l1``, ``d/l2``, ``d/l3`` all ``-> .`` (three committed links): ``os.walk('d', followlinks=True)`` makes
    one ``Path.scan`` host call that follows each link inside (``_link_kind`` resolves every one, ``_listed`` opens
    every folder part by part) until 200,000 entries: 34 s of host work in a run limited to 3 s, with no deadline
    check. The CLI's watchdog kills its process at 1.6x the limit with a traceback of host paths; on the warm server
    the client takes the server for stuck and kills it, with every other run it was serving. Fix: check the run's
    deadline in ``WorkspaceOS._scan`` (each folder listed, each link followed) and fail with the run's TimeoutError."""
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "d").mkdir(parents=True)
    for name in ("l1", "l2", "l3"):
        (ws / "d" / name).symlink_to(".", target_is_directory=True)
    code = ("import os\nn = 0\ntry:\n    for top, dirs, files in os.walk('d', followlinks=True):\n        n += 1\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\nprint(n)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"
    assert "RuntimeError" in out and "deadline" in out, out  # never a silent, partial walk


# ------------------------------------------------------------ outline's name= on the host's re
def test_outline_name_with_a_backtracking_pattern_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """``outline(name='(a|aa)*c')`` over a file defining a function named with 42 ``a`` (the repository's, or one
    the program creates): outline compiles ``name`` with ``re`` and matches every item's name in the run's thread,
    where nothing can interrupt it (grep runs such patterns in a worker it kills at the deadline:
    tools/search/regex_worker.py). The match backtracks exponentially: 14 s at 40 characters for a run limited to
    3 s, doubling every character and a half. Fix: match names as grep's Python search does (a worker killed at the
    deadline), or refuse patterns re cannot bound."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "m.py").write_text("def " + "a" * 42 + "():\n    pass\n")
    out, _, took = _peak_run(ws, base / "home", "print(outline(name='(a|aa)*c'))", memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"
    assert "TimeoutError" in out and "outline()" in out, out


def test_outline_name_matched_off_the_main_thread_stops_at_the_deadline(tmp_path: Path) -> None:
    """The warm server runs programs on threads, where no SIGALRM interrupts ``re``: there outline's names are
    matched in a worker process killed at the deadline, and the error names outline, not the worker's grep."""
    import re
    import threading

    from codeact.core.limits import Deadline
    from codeact.errors import ToolTimeout
    from codeact.tools.outline_names import NameFilter

    shown: list[object] = []

    def ask(pattern: str, names: list[str]) -> None:
        names_filter = NameFilter(re.compile(pattern), tmp_path, Deadline(1.5))
        try:
            names_filter.ask(names)
            shown.append(sorted(names_filter.chosen))
        except Exception as exc:  # noqa: BLE001 - shown to the assertion
            shown.append(exc)

    started = time.monotonic()
    for args in (("Test\\w*", ["Test1", "foo", "Testé"]), ("(a|aa)*c", ["a" * 42])):
        thread = threading.Thread(target=ask, args=args)
        thread.start()
        thread.join(30)
    assert time.monotonic() - started < 15
    assert shown[0] == ["Test1", "Testé"], shown
    assert isinstance(shown[1], ToolTimeout) and "outline()" in str(shown[1]), shown


# ------------------------------------------------------------ sql's statement split, quadratic
def test_sql_splitting_a_long_unfinished_statement_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """``sql(query="SELECT '" + ";" * 500_000)``: split_statements grows ``current`` one ``;`` at a time and asks
    ``sqlite3.complete_statement`` of the whole string each time (an open quote never completes), before the
    database is even opened: quadratic, in the run's own thread, with no deadline check (300,000 took 12 s in a
    run limited to 3 s; a 1 MB query several minutes). Fix: split once with a tokenizer that tracks quotes and
    comments, or check the run's deadline in the loop."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    out, _, took = _peak_run(ws, base / "home", "print(sql(query=\"SELECT '\" + ';' * 500_000))",
                             memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ the rewrite's edits, spliced one at a time
def test_a_program_with_many_rewritten_calls_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """A program of 20,000 lines ``a = open("x", encoding="latin-1").read_text(encoding="cp1252")`` (1.4 MB; the
    function is never called): core/rewrite.rewrite_for_sandbox applies its edits from the end, each one as
    ``data = data[:start] + text + data[end:]``, a copy of the whole program per edit -- quadratic (2.1 MB took
    45 s in a run limited to 3 s), on the host, before the deadline can stop anything (round 8 found the parse
    itself outside the deadline; this is the splice after it). Fix: build the result once from the sorted edits
    (a list of pieces joined at the end), and bound the work by the run's deadline."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = "def f():\n" + "".join(f'    a{i} = open("x", encoding="latin-1").read_text(encoding="cp1252")\n'
                                   for i in range(20_000)) + "print(1)\n"
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ tree-sitter's query over a pathological file
def test_outline_of_a_deeply_nested_file_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """A committed ``a.js`` of ``x = `` and 300,000 ``[`` (300 KB, under outline's 1 MiB cap; ``{`` in C, ``[`` in a
    Go receiver do the same): tree-sitter parses it fast, but ``QueryCursor.captures`` over the error tree is
    quadratic -- 5.8 s at 100 KB, 51 s at 300 KB -- in one C call with no deadline, in this process for a single
    file (and in the host's share of a large outline: ``outline(path='src')`` over six such files of 1 MiB was still
    running 15 minutes into a run limited to 5 s, when it was killed). Fix:
    give the query cursor the run's deadline (py-tree-sitter's progress callback, or ``timeout_micros``), and parse
    in workers only, which the deadline can kill. (Fixed: a tree-sitter file over IN_PROCESS_BYTES, 16 KiB, is parsed
    in an outline worker only, even alone, which the deadline kills; tests/runtime/test_outline_apart.py.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "a.js").write_text("x = " + "[" * 300_000 + "\n")
    out, _, took = _peak_run(ws, base / "home", "print(str(outline(path='a.js'))[:200])", memory=256 * MiB,
                             timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ unquote's search for the furthest closing quote
def test_a_path_of_many_quoted_parts_is_read_within_the_run_deadline(tmp_path: Path) -> None:
    """``view(path='"a/b"/"a/b"/...')`` (3,000 parts, 9 KB): every path a program gives (view, open, Path, edit)
    goes through ``unquote``, whose ``_rejoined`` (changed in 138aa86 to take the FURTHEST closing part) tries, for
    each part opening a quote, every later part that closes one, joining the run between them each time: about
    cubic in the parts. 2,000 pairs took 74 s, 1,000 pairs 7.5 s, in a run limited to 3 s, on the host with no
    deadline (no file needs to exist). Fix: bound the parts a quoted run may span (a name is at most 255 bytes,
    so a run of more than 255 characters is no quoted name), or scan once for the closing quote. (Fixed: a run spans
    at most MAX_QUOTED_NAME characters.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("p = '/'.join(['\"a', 'b\"'] * 1500)\n"
            "try:\n    view(path=p)\nexcept Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _peak_run(ws, base / "home", code, memory=256 * MiB, timeout=3)
    assert took < 15, f"a run limited to 3 s took {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ a program monty compiles past the run's limit
def test_a_program_monty_compiles_past_the_limit_is_a_clean_error(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``def f():`` and 42,000 lines ``  x=1`` (252 KB, under the 256 KiB cap of b14646c): pydantic-monty compiles it
    in its worker for about 5 s here; with a run limit of 0.1 s the worker's request timeout (the limit plus a
    second) kills it, and ``feed_start`` raises ``MontyCrashedError``, which nothing in backends/monty.py catches:
    ``runner.run`` raises it (a host traceback), and ``codeact run --json --timeout 1 --file prog.py`` prints no
    JSON at all, only a Python traceback naming host paths, exit 1. (Found while checking b3a243f: round 9's
    rewrite test, 14,000 ``open(x,errors=y)`` lines, ends the same way.) Fix: catch MontyCrashedError around the
    worker's calls and report it as the run's TimeoutError (or MemoryError), as the other sandbox limits are."""
    from codeact.core.config import Settings
    from codeact.core.limits import Limits
    from codeact.runner import run

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (base / "home").mkdir()
    from codeact.backends import monty as monty_backend

    # 42,000 statements are past MAX_STATEMENTS since round 12 (refused before the compile): lifted here, for the
    # worker lost under a program's compile that this test is about
    monkeypatch.setattr(monty_backend, "MAX_STATEMENTS", 10**6)
    code = "def f():\n" + "  x=1\n" * 42_000
    assert len(code) < 256 * 1024
    result = run(code, workspace=ws, backend="monty", settings=Settings(), limits=Limits(timeout=0.1),
                 environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base / "home"),
                          "LANG": "C.UTF-8", "CODEACT_CONFIG_DIR": str(base / "home/cfg")})
    assert result.error is not None and result.error.type in ("TimeoutError", "MemoryError"), result


# ------------------------------------------------------------ a backslash in a name
def test_a_name_with_a_backslash_lists_and_reads_back_as_that_file(tmp_path: Path) -> None:
    """A repository commits ``a\\b.txt`` (a plain UTF-8 name on POSIX) beside ``a/b.txt``. Names are quoted only
    when not UTF-8 or holding a ``"`` (codeact.core.pathnames.needs_quoting), so ``Path('.').iterdir()`` hands the
    sandbox ``a\\b.txt`` as it is, and pydantic-monty's pathlib takes the ``\\`` for a separator: the program is
    given ``a/b.txt``, and reading it gives the OTHER file's text. ``Path('.').glob('*.txt')`` and ``rglob`` list
    ``a/b.txt`` (rglob twice) and never the file they found; ``Path(p).read_text()`` of a path glob() or
    os.listdir returned reads the other file too, and ``edit(path=str(p), ...)`` would change it. Fix: quote a name
    holding a ``\\`` as git does (core.quotePath quotes ``\\`` too), so the form survives the sandbox's pathlib.
    (Fixed: such a name is quoted, its ``\\`` as ``\\134``; ``Path.glob('*.txt')`` then lists neither file, since a
    quoted name ends in ``"``: the next test.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "a\\b.txt").write_text("BACKSLASH\n")
    (ws / "a" / "b.txt").write_text("OTHER\n")
    code = ("from pathlib import Path\n"
            "print(sorted((str(p), p.read_text()) for p in Path('.').iterdir() if p.is_file()))\n"
            "print(sorted((str(p), p.read_text()) for p in Path('.').glob('*.txt')))\n"
            "print(sorted(Path(p).read_text() for p in glob(pattern='**/*.txt')))\n")
    out = _run(ws, base / "home", code)
    lines = out.splitlines()
    assert len(lines) >= 3, out
    assert "BACKSLASH" in lines[0] and "OTHER" not in lines[0], out
    assert "OTHER" not in lines[1], out  # never the other file
    assert lines[2].count("BACKSLASH") == 1 and lines[2].count("OTHER") == 1, out


def test_path_glob_with_an_ending_lists_a_quoted_name(tmp_path: Path) -> None:
    """The sandbox's ``Path.glob``/``rglob`` match the names the host lists (pydantic-monty filters the scan's reply
    itself); a name that reaches the program quoted (a ``\\``, a control character, not UTF-8) ends in ``"``, so
    ``Path('.').glob('*.txt')`` leaves ``a\\b.txt`` out (``glob('*')``, ``rglob('*')``, ``os.walk`` and the glob
    tool list it). Fix: a quoted form that keeps the name's ending, or the host matching the real names. (Fixed:
    the sandbox's idioms show ``"a\\134"b.txt``, the plain ending after the closing quote; more names and idioms in
    test_nonutf8_names.test_every_idiom_lists_awkward_names_by_their_ending_and_reads_each_back.)"""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "a\\b.txt").write_text("BACKSLASH\n")
    (ws / "a").mkdir()
    (ws / "a" / "b.txt").write_text("OTHER\n")
    code = ("from pathlib import Path\nprint([p.read_text() for p in Path('.').glob('*.txt')])\n"
            "print(sorted(p.read_text() for p in Path('.').rglob('*.txt')))\n")
    out = _run(ws, base / "home", code)
    assert out.splitlines()[:2] == ["['BACKSLASH\\n']", "['BACKSLASH\\n', 'OTHER\\n']"], out


def test_a_file_named_a_double_quote_reads_back_through_pathlib(tmp_path: Path) -> None:
    """A committed file named ``"`` (one double quote) is listed quoted, ``"\\""``, and the sandbox's pathlib
    makes that ``"/""``. pathnames.readings gives ``"`` (the quoted form rejoined) and, splitting the text at each
    ``/``, ``"/`` (the raw ``"`` and an empty name from the tail ``""``); Workspace.reading finds both (the trailing
    ``/`` of a file counts as there) and refuses with "reads as '\"\\\"\"' or '\"\\\"\"', both in the
    workspace" -- one file named twice. ``Path(p).read_text()``, ``is_file()`` (which CPython never raises from)
    of what iterdir, rglob, os.walk, glob() and os.listdir list all fail. Fix: drop readings with an empty part (or
    that name the same file), and check a reading with a trailing ``/`` as a folder only."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / '"').write_text("QUOTE\n")
    code = ("from pathlib import Path\ntry:\n    print([p.read_text() for p in Path('.').iterdir()])\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    out = _run(ws, base / "home", code)
    assert "QUOTE" in out, out


# ------------------------------------------------------------ view's folder listing, one name a line
def test_view_of_a_folder_lists_each_entry_as_itself(tmp_path: Path) -> None:
    """``view(path='.')`` gives a folder's entries one a line, a link marked with a trailing ``@``; names are quoted
    only when not UTF-8 or holding a ``"``. A committed ``notes\nREADME.md`` is listed as two lines, ``notes`` and
    ``README.md``: an entry that is not there, and one that reads back as another file (the real ``README.md``);
    a regular file named ``tool@`` is listed exactly as a link ``tool`` would be. Fix: quote a name holding a
    control character (as git does) or ending in ``@`` or ``/``, so each line names one entry as it is."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "notes\nREADME.md").write_text("hidden\n")
    (ws / "tool@").write_text("a file\n")
    out = _run(ws, base / "home", "print(view(path='.'))\n")
    listed = out.splitlines()
    assert "README.md" not in listed and "notes" not in listed, out
    assert "tool@" not in listed or "tool" in os.listdir(ws), out


# ------------------------------------------------------------ an encoding the sandbox does not know
def test_a_file_read_in_another_encoding_is_never_silently_read_as_utf8(tmp_path: Path) -> None:
    """``open(p, encoding=E)`` and ``Path(p).read_text(encoding=E)`` go through the prelude's ``codeact_decode``,
    which knows Latin-1 and UTF-8 only: ``cp1252``, ``utf-16-le``, ``shift_jis``, ``ascii`` ... are decoded as
    UTF-8 with no word. ``café`` stored as UTF-8 and read as cp1252 gives ``café`` (CPython: ``cafÃ©``);
    ``hi`` in UTF-16-LE gives ``h\\x00i\\x00``; a non-ASCII file read as ASCII gives text where CPython raises
    UnicodeDecodeError. Fix: decode with the named codec on the host (the bytes are there already), or raise
    LookupError naming the encodings the sandbox reads -- never a silent UTF-8 answer."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "u8.txt").write_bytes("café\n".encode())
    (ws / "u16.txt").write_bytes("hi\n".encode("utf-16-le"))
    code = ("from pathlib import Path\n" + _TRY +
            "print('cp1252', t(lambda: open('u8.txt', encoding='cp1252').read()))\n"
            "print('ascii', t(lambda: Path('u8.txt').read_text(encoding='ascii')))\n"
            "print('utf16', t(lambda: open('u16.txt', encoding='utf-16-le').read()))\n")
    out = _run(ws, base / "home", code)
    assert "cp1252 " + repr("cafÃ©\n") in out or "cp1252 LookupError" in out, out
    assert "ascii UnicodeDecodeError" in out or "ascii LookupError" in out, out
    assert "utf16 " + repr("hi\n") in out or "utf16 LookupError" in out, out


_TRY = """\
def t(f):
    try:
        return repr(f())
    except Exception as exc:
        return type(exc).__name__ + ': ' + str(exc)
"""


def test_a_utf16_file_with_no_bom_is_never_silently_read_as_little_endian(tmp_path: Path) -> None:
    """After 2a6ddce the prelude decodes ``encoding='utf-16'``/``'utf-32'`` with the sandbox's own codecs, which
    take a stream with no byte-order mark as little-endian. CPython's text mode (``open``, ``Path.read_text``)
    raises ``UnicodeError: UTF-16 stream does not start with BOM`` there. A big-endian file with no BOM
    (``b'\\x00h\\x00i'``) thus reads as ``'栀椀'``, silently. Fix: refuse a BOM-less stream for ``utf-16``/``utf-32``
    as CPython's text mode does (``utf-16-le``/``-be`` name the order)."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "be.txt").write_bytes(b"\x00h\x00i")
    code = ("from pathlib import Path\n" + _TRY +
            "print('open', t(lambda: open('be.txt', encoding='utf-16').read()))\n"
            "print('path', t(lambda: Path('be.txt').read_text(encoding='utf-16')))\n")
    out = _run(ws, base / "home", code)
    # the sandbox has no UnicodeError: its subclass UnicodeDecodeError, which CPython's `except UnicodeError` catches
    assert "open UnicodeDecodeError" in out and "path UnicodeDecodeError" in out, out
