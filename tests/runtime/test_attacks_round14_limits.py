"""Red team, round 14 (issue 40): limits and confinement of the host-side helpers a program reaches, after
6cca89b. Each test runs a program through the sandbox (``run``, monty) and fails while the breach is open (strict
xfail)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX resource limits and /proc")

_REASON = "open (issue 40, red team round 14): {}"
MiB = 1 << 20

_CHILD = """\
import json, os, resource, sys
sys.path.insert(0, sys.argv[1])
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.runner import run
ws, home, memory, timeout, session = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
code = sys.stdin.read()
os.chdir(ws)
result = run(code, workspace=ws, backend="monty", settings=Settings(), limits=Limits(memory=memory, timeout=timeout),
             session=session or None,
             environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8",
                      "XDG_STATE_HOME": home + "/state", "CODEACT_CONFIG_DIR": home + "/cfg"})
own = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"out": result.stdout + result.stderr + str(result.error), "peak": own * 1024}))
"""


def _host_run(ws: Path, home: Path, code: str, *, memory: int, timeout: float, session: str = "",
              wait: float = 120) -> tuple[str, int, float]:
    """``code`` run in the sandbox over ``ws`` (``session``: with ``--session``) in a Python of its own, as
    ``CODEACT_SERVER=0`` runs it: the output, that host process's peak resident size (bytes) and the seconds the
    run took; ``("", -1, wait)`` when it had not ended ``wait`` seconds after it began (then it is killed)."""
    import codeact

    home.mkdir(exist_ok=True)
    runtime = str(Path(codeact.__file__).resolve().parent.parent)
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, runtime, str(ws), str(home), str(memory), str(timeout),
                               session], input=code, capture_output=True, text=True, timeout=wait)
    except subprocess.TimeoutExpired:
        return "", -1, wait
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout.splitlines()[-1])
    return shown["out"], shown["peak"], took


# ------------------------------------------------------------ sessions.plain: a shared structure walked expanded
def test_a_session_of_shared_lists_is_saved_within_the_run_deadline(tmp_path: Path) -> None:
    """After a ``--session`` run, the host converts the program's globals (sharing kept: a few KB) and
    ``sessions.plain`` checks them with ``_not_plain`` and ``_holds_tuple``, which walk every list item by item --
    expanded, with no deadline and the interpreter held; only then does ``save`` bound the JSON (8 MiB, by
    ``within``). ``a = [0] * 1000; b = [a] * 1000; c = [b] * 1000`` (3,000 slots in the sandbox) is 10**9 items
    to walk: with ``c = [b] * 300`` the walk took 8 s (2 cores, shared) after a 5 s run, with ``d = [c] * 1000``
    it never ends. Checked through the command line: with ``CODEACT_SERVER=0`` only faulthandler's backstop ends
    the process, at the limit plus 1.8 s, with a bare stack dump (``Timeout (0:00:03.800000)!`` and the threads'
    frames, ``_not_plain`` on top) and exit 1, the program's printed output lost; through the warm server
    (``codeact run --session s --timeout 2``) the server's watcher abandons the run after 3.5 s, its output lost,
    and the server retires. Here ``runner.run`` (no backstop) had not returned after 30 s, the host at 100% CPU.
    Fix: walk the value once per object (an ``id`` memo; the JSON's size is bounded by ``within`` anyway) or fold
    the check into the bounded encoding (stop at MAX_STATE_BYTES and at the run's deadline), before anything walks
    it expanded."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = "a = [0] * 1000\nb = [a] * 1000\nc = [b] * 1000\nd = [c] * 1000\nprint('ran')\n"
    out, _, took = _host_run(ws, base / "home", code, memory=256 * MiB, timeout=2, session="s", wait=30)
    assert took < 20, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ sessions.load: 8 MiB of JSON, bound as inputs
def test_a_session_state_is_restored_within_the_run_memory_limit(tmp_path: Path) -> None:
    """A session's state may be 8 MiB of JSON (MAX_STATE_BYTES), and the next run restores it whole:
    ``json.loads`` in the host, then every value converted and bound as the sandbox's inputs (``feed_run("None",
    inputs=...)``), before and outside the run's memory limit and deadline. JSON shares nothing, so a program whose
    globals are small in the sandbox -- ``x = []``, nested 49 times in ``x = [x]``, then ``b = [x] * 78000`` (50
    lists and 78,000 slots) -- saves 7.96 MB (3.9 million lists, 2 bytes each), and every later run of that session
    takes the host process to 990 MiB (VmHWM; the monty worker 391 MiB) and 5.6 s for a run limited to 256 MiB and
    2 s (checked with ``CODEACT_SERVER=0``; the warm server holds the same, one such restore per run at once), then
    fails with MemoryError: the session can never be used again (``[e] * 2_000_000``, ``e = []``: 569 MiB).
    Here the state is written by ``sessions.save``, as the first run's save writes it. Fix: bound what a state may
    expand to when loaded (count the containers and items while reading it, against the run's memory limit, and
    leave out, with a note, what is past it), or keep sharing in the saved form."""
    from codeact.core import sessions

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    home = base / "home"
    home.mkdir()
    x: list = []
    for _ in range(49):
        x = [x]
    environ = {"HOME": str(home), "XDG_STATE_HOME": str(home / "state")}
    assert sessions.save(ws, "s", {"b": [x] * 78000}, environ) == ""
    out, peak, took = _host_run(ws, home, "print(len(b))\n", memory=256 * MiB, timeout=2, session="s", wait=60)
    assert peak < 512 * MiB and took < 8, f"{peak >> 20} MiB, {took:.1f} s for a run of 256 MiB, 2 s: {out[-300:]}"


# ------------------------------------------------------------ walk.translate_glob: globs matched by Python's re
_LONG_NAME = "a" * 60
_BACKTRACKING = "*a" * 14 + "*b"  # [^/]*a[^/]*a...b: a name of a's that does not end in b is tried every way
_GLOB_FORMS = {
    "a repository's .gitignore rule, glob(pattern='*/*')": ("print(glob(pattern='*/*'))\n", True),
    "outline(path=<a file>, glob=...)": (f"print(outline(path='src/{_LONG_NAME}', glob='{_BACKTRACKING}'))\n", False),
    "grep(path=<a file>, glob=...)": (f"print(grep(pattern='x', path='src/{_LONG_NAME}', glob='{_BACKTRACKING}'))\n",
                                      False),
}


@pytest.mark.parametrize("form", sorted(_GLOB_FORMS))
def test_a_glob_that_backtracks_is_matched_within_the_run_deadline(tmp_path: Path, form: str) -> None:
    """``walk.translate_glob`` makes each ``*`` ``[^/]*`` and the host matches the result with Python's ``re``
    (``fullmatch``), which backtracks: ``*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b`` against a name of 60 ``a`` tries every
    way to place the a's (k = 10 on 40 characters: 20 s; here hours), in C code that holds the interpreter and that
    no deadline stops -- grep's own regular expressions are run where ``SIGALRM`` or a killable worker stops them
    (regex_worker), globs and ignore rules are not. Reached (1) by a repository alone: a committed ``.gitignore``
    holding that rule and a file ``src/aaa...a``; ripgrep (linear) lists the file, and the host checks it again
    (``Reach.ok`` -> ``ignored``) for any path-kind glob, so the model's innocent ``glob(pattern='*/*')`` or
    ``grep(pattern=..., glob='*/*')`` never returns; (2) by a program: ``outline(path=<file>, glob=...)`` and
    ``grep(path=<file>, glob=...)`` match the file's name with ``Glob.matches`` in the host. Checked through the
    warm server: the run limited to 2 s is ended by the client after 4 s, which kills the server -- and a
    concurrent innocent run on it (``bash('sleep 3')``) failed with "the CodeAct server stopped during this run";
    with ``CODEACT_SERVER=0`` only faulthandler's backstop ends the process (a bare stack dump). Here
    ``runner.run`` (no backstop) had not returned after 20 s. Fix: translate globs so they cannot backtrack (match
    ``*`` segments greedily left to right, as ripgrep's globset and fnmatch's atomic groups do), or match them where
    the deadline stops them (the regex worker / ``deadline.interrupting``)."""
    import subprocess as sp

    code, gitignore = _GLOB_FORMS[form]
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "src").mkdir(parents=True)
    sp.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / "src" / _LONG_NAME).write_text("x\n")
    (ws / "src" / "main.py").write_text("x = 1\n")
    if gitignore:
        (ws / ".gitignore").write_text(_BACKTRACKING + "\n")
    out, _, took = _host_run(ws, base / "home", code, memory=256 * MiB, timeout=2, wait=20)
    assert took < 12, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ host_modules: configparse run in the host
_CONFIG_FORMS = {
    "a committed setup.cfg, read()": "import configparser\nc = configparser.ConfigParser()\nc.read('setup.cfg')\n"
                                     "print(c.sections())\n",
    "a program's read_string()": "import configparser\nc = configparser.ConfigParser()\n"
                                 "c.read_string('[s]\\nx' + ' ' * 100_000 + 'y\\n')\nprint(c.sections())\n",
}


@pytest.mark.parametrize("form", sorted(_CONFIG_FORMS))
def test_a_config_file_is_parsed_within_the_run_deadline(tmp_path: Path, form: str) -> None:
    """The prelude's configparser hands the text to the host (``codeact_host.configparse``), and
    ``host_modules._work`` sends it to the killable child only when it holds ``%(`` (interpolation); any other text
    of up to ~1 MB counts as twice its size and is parsed in the host process, in the run's thread, with no
    deadline. CPython's ``OPTCRE`` (``(?P<option>.*?)\\s*(?P<vi>=|:)\\s*(?P<value>.*)$``) backtracks on a line with
    a long run of blanks and no ``=`` or ``:``: at each place ``.*?`` stops, ``\\s*`` runs over the rest of the
    blanks (8,000 blanks: 1.4 s; 60,000: 31.6 s, measured for a run limited to 2 s; 100,000: minutes), in C code
    that holds the interpreter. A repository alone reaches it: a committed ``setup.cfg`` (or ``tox.ini``) holding
    ``x<100,000 blanks>y`` on a line hangs the model's innocent ``configparser.ConfigParser().read('setup.cfg')``;
    through the warm server the client then kills the server and every run on it (as for a backtracking glob);
    with ``CODEACT_SERVER=0`` only faulthandler's backstop ends the process. Fix: send configparse to the child
    (killed at the deadline) whenever a line is long (say over 4 KiB) -- or always past a small size -- or
    pre-split each line on ``=``/``:`` before CPython's regex sees it."""
    import subprocess as sp

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    sp.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / "setup.cfg").write_text("[metadata]\nname = x\nx" + " " * 100_000 + "y\n")
    out, _, took = _host_run(ws, base / "home", _CONFIG_FORMS[form], memory=256 * MiB, timeout=2, wait=20)
    assert took < 12, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"


# ------------------------------------------------------------ monty._as_python: the last value copied expanded
def test_a_last_value_of_shared_lists_is_shown_within_the_run_limits(tmp_path: Path) -> None:
    """The program's last expression's value comes back from the sandbox with its sharing kept, and
    ``monty._as_python`` (there for the proxies of the program's own classes and VALUE_DEPTH) rebuilds every list,
    tuple and dict item by item -- expanded, in the host, with no deadline and no bound but the depth; only then
    is it shown (cut by ``within``). A program ending in ``c`` after ``a = [0] * 400; b = [a] * 400; c = [b] *
    400`` (1,200 slots in the sandbox) made the host build 64 million items: 530 MiB (VmHWM) and 35.6 s for a run
    limited to 64 MiB and 2 s; ``[0] * 1000`` three deep is 10**9 items (8 GB). Checked through the command line:
    with ``CODEACT_SERVER=0`` faulthandler's backstop ends the process at the limit plus 1.8 s with a bare stack
    dump (``_as_python`` on top) and the run's printed output lost; the warm server abandons the run and restarts;
    with a longer ``--timeout`` the host keeps growing (about 15 MB/s here) until the backstop. Fix: convert once
    per object (an ``id`` memo keeps the sharing and the work the sandbox's own size), or convert lazily within
    the output budget (``within`` already stops at it)."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = "a = [0] * 1000\nb = [a] * 1000\nc = [b] * 1000\nc\n"
    out, peak, took = _host_run(ws, base / "home", code, memory=64 * MiB, timeout=2, wait=20)
    assert 0 < peak < 160 * MiB and took < 8, f"{peak >> 20} MiB, {took:.1f} s for a run of 64 MiB, 2 s: {out[-300:]}"


# ------------------------------------------------------------ a shared argument walked or shown expanded
_SHARED = "a = [0] * 1000\nb = [a] * 1000\nc = [b] * {n}\n"
_ARGUMENT_FORMS = {
    "pprint.pformat(c): host_modules._size": _SHARED.format(n=1000) + "import pprint\ntry:\n    pprint.pformat(c)\n"
                                             "except Exception as exc:\n    print(type(exc).__name__)\n",
    "grep(**{'pattern': c}): the argument's repr": _SHARED.format(n=100) + "g = {'pattern': c}\ntry:\n    grep(**g)\n"
                                                   "except Exception as exc:\n    print(type(exc).__name__)\n",
}


@pytest.mark.parametrize("form", sorted(_ARGUMENT_FORMS))
def test_a_shared_argument_is_bounded_by_the_run_limits(tmp_path: Path, form: str) -> None:
    """An argument crosses from the sandbox with its sharing kept (``c = [[[0] * 1000] * 1000] * 1000``: 3,000
    slots there, 10**9 items expanded), and host code then walks or prints it item by item. ``host_modules._work``
    sizes every host-module call's arguments with ``_size(..., budget=1 << 40)``: ``pprint.pformat(c)`` (or
    ``statistics``, ``shlex.join``, ``difflib`` ... of such a value) walks 10**9 items before anything is refused,
    no deadline checked (had not ended after 60 s for a run limited to 2 s). A tool given a value of the wrong type
    through ``**kwargs`` (the type check before the run sees no literal call) formats it into its error:
    ``grep(**{'pattern': c})`` with ``c = [b] * 100`` reaches ``_compile``'s ``ToolError(f"invalid regular
    expression {pattern!r}")``, a 300 MB repr: the host went to 891 MiB (VmHWM) and 12.8 s for a run limited to 64
    MiB and 2 s, and the run then failed with a bare ``RuntimeError: request frame of 300200320 bytes exceeds the
    maximum of 268435456 bytes`` (``c = [b] * 300``: 2.6 GB, 45.6 s). Fix: size arguments once per object (an
    ``id`` memo) against the call's real budget (the run's memory) and check the deadline while walking; check a
    tool's argument types before anything formats them, and show a value in an error with a bounded repr
    (``reprlib`` or ``within``)."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    out, peak, took = _host_run(ws, base / "home", _ARGUMENT_FORMS[form], memory=64 * MiB, timeout=2, wait=20)
    assert 0 < peak < 160 * MiB and took < 8, f"{peak >> 20} MiB, {took:.1f} s for a run of 64 MiB, 2 s: {out[-300:]}"


# ------------------------------------------------------------ host_modules: an answer counted at 8 bytes an item
def test_a_host_module_answer_is_held_within_the_run_memory_limit(tmp_path: Path) -> None:
    """``host_modules._work`` refuses a call whose answer would not fit the run's memory, counting
    ``statistics.quantiles(n=N)`` as ``N * 8`` bytes; a call past IN_PROCESS_WORK runs in a child Python limited to
    the run's memory plus 256 MiB. The answer then crosses back pickled and is unpickled and converted in the host
    process, where each float is a 24-byte object, a list slot and its monty form again: ``quantiles([1.0, 2.0],
    n=4_000_000)`` (32 MB by the count, under a 64 MiB limit) took the host to 781 MiB (VmHWM; the child 198 MiB)
    before the sandbox refused the list with MemoryError; with 256 MiB and ``n=8_000_000``, 1,526 MiB. The same
    holds for any answer of many small items (``shlex.split``, ``difflib``'s lines, ``urllib.parse.parse_qsl``).
    Fix: count an answer's items at what the host holds of each (about 100 bytes: object, slot, pickled and monty
    forms) against the run's memory limit, or stream it to the sandbox in parts."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = ("import statistics\ntry:\n    q = statistics.quantiles([1.0, 2.0], n=4_000_000)\n    print(len(q))\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out, peak, _ = _host_run(ws, base / "home", code, memory=64 * MiB, timeout=10, wait=60)
    assert 0 < peak < 160 * MiB, f"the host took {peak >> 20} MiB for a run limited to 64 MiB: {out[-300:]}"


# ------------------------------------------------------------ monty._refuse_huge: tokenized as Python 3.11 reads it
_HIDDEN_STATEMENTS = {
    "an f-string Python 3.11 reads as opening a '('": 'x = f"{"("}"\na = 1\n' + "a\n" * 125_000 + "print(x)\n",
    "an f-string Python 3.11 reads as opening a '''string": (
        "x = f\"{'''\"'''}\"\na = 1\n" + "a;" * 125_000 + "\ny = '''z'''\nprint(x, y)\n"),
}


@pytest.mark.parametrize("form", sorted(_HIDDEN_STATEMENTS))
def test_statements_behind_a_nested_quote_f_string_are_refused_uncompiled(form: str) -> None:
    """docs/tool-limits.md: a program of more than 20,000 statements is "refused up front with a SyntaxError naming
    the limit". Past the cheap count, ``_refuse_huge`` counts NEWLINE and ``;`` tokens with the host's
    ``tokenize`` -- Python 3.11's here, which reads an f-string as one string token -- while the sandbox parses
    Python 3.12's f-strings (PEP 701: the same quotes nested in a field). ``x = f"{"("}"`` is, to 3.11's
    tokenizer, a string then an open ``(``: every later newline is a NL inside brackets, counted as no statement,
    and at the end ``TokenError`` is swallowed; ``x = f"{'''"'''}"`` opens, to 3.11, a triple-quoted string that
    swallows every ``;``, ``,`` and newline up to the next ``'''``. So ``'a\\n' * 125_000`` or ``'a;' * 125_000``
    after either line is not refused: the sandbox compiles it outside the run's limits (its worker reached 121 MiB
    for a run limited to 64 MiB, then MemoryError; ``'a=a;' * 62_000``: 25 s of a 30 s run). Fix: count with a
    tokenizer of the sandbox's grammar (or, on a TokenError or an unbalanced bracket at the end, fall back to the
    cheap counts), and treat an f-string's inside as code. (Python 3.12's ``tokenize`` reads PEP 701 f-strings; the
    runtime's Python here is 3.11.7, and 3.10/3.11 are supported.)"""
    from codeact.backends.monty import _refuse_huge
    from codeact.errors import ProgramError

    with pytest.raises(ProgramError, match="too large to compile"):
        _refuse_huge(_HIDDEN_STATEMENTS[form])


# ------------------------------------------------------------ outline: qualnames that grow with nesting
def _nested_classes(length: int = 10_000, depth: int = 98) -> str:
    """A Python file (~1 MB) of ``depth`` classes nested one in the next, each named with ``length`` characters."""
    lines = [" " * i + "class " + chr(65 + i % 26) * length + f"{i}:\n" for i in range(depth)]
    return "".join(lines) + " " * depth + "pass\n"


def test_outline_of_nested_classes_stays_within_the_run_memory_and_its_cache(tmp_path: Path) -> None:
    """Each outline item carries its ``qualname``, the names of every class above it joined: a file of 98 classes
    nested one in the next, each named with 10,000 characters (986 KB, under MAX_FILE_BYTES; one space of indent a
    level), has items whose qualnames total 98 * 99 / 2 * 10 KB, about 48 MB -- fifty times the file. The worker
    sends them, the host keeps every parsed file's items (``parsed``) and writes them all to the outline cache in
    ``$XDG_CACHE_HOME/codeact/outline`` before ``_fitting`` cuts what is returned to 1 MiB. 20 such files
    (committed by a repository; ``outline(path='.')``, the model's first look) took the host process to 653 MiB
    (VmHWM; the worker 454 MiB) for a run limited to 64 MiB, and left a 482 MB cache in the user's home, kept
    across runs (a thousand such files: tens of GB). Fix: bound an item's text (a qualname or a name past a few
    hundred characters cut, with a mark) and a file's items (their total size, say a multiple of the file's size,
    past which the file gets an ``error`` item), and bound what the cache keeps per workspace. Here 8 files: host
    364 MiB, cache 192 MiB."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    source = _nested_classes()
    for k in range(8):
        (ws / f"m{k}.py").write_text(source)
    home = base / "home"
    out, peak, _ = _host_run(ws, home, "r = outline(path='.')\nprint(len(r))\n", memory=64 * MiB, timeout=30, wait=90)
    cache = sum(f.stat().st_size for f in (home / ".cache").rglob("*") if f.is_file())
    assert 0 < peak < 160 * MiB and cache < 64 * MiB, (
        f"host {peak >> 20} MiB for a run of 64 MiB, cache {cache >> 20} MiB: {out[-300:]}")


# ------------------------------------------------------------ limits.within: a JSON text kept as its chunks
def test_a_long_last_value_is_cut_within_the_run_memory_limit(tmp_path: Path) -> None:
    """``limits.within`` encodes a value lazily up to its budget -- ``VALUE_BUDGET`` (8 MiB) for a run's last value,
    MAX_STATE_BYTES (8 MiB) for a session -- appending every chunk ``iterencode`` yields (``"0"``, ``", "``, ...) to a
    list and joining at the end: 8 MiB of ``0, 0, ...`` is millions of one- and two-character strings, about 50
    bytes each in the host. A program ending in ``[a] * 2000`` after ``a = [0] * 2000`` (4,000 slots in the
    sandbox; after b4f5058 the value crosses with its sharing kept) took the command line (``CODEACT_SERVER=0``,
    ``CODEACT_MEMORY=67108864``, ``--timeout 2``) to 245 MiB (max RSS; ``print(1)``: 31 MiB) and 3.65 s; the warm
    server holds this once per run at once. Fix: join the chunks as they
    come (``io.StringIO``, or a list joined every few thousand chunks), so what is held is the text, not its pieces
    (and count the budget in what is held)."""
    import codeact

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    home = base / "home"
    home.mkdir()
    runtime = str(Path(codeact.__file__).resolve().parent.parent)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "XDG_STATE_HOME": str(home / "state"), "CODEACT_CONFIG_DIR": str(home / "cfg"), "PYTHONPATH": runtime,
           "CODEACT_SERVER": "0", "CODEACT_BACKEND": "monty", "CODEACT_MEMORY": str(64 * MiB)}
    # the command line in a Python of its own, whose children's peak is only its
    wrapper = ("import resource, subprocess, sys\n"
               "subprocess.run([sys.executable, '-c', 'from codeact.client import entry; entry()', 'run', '--timeout',"
               " '2', '-'], input=b'a = [0] * 2000\\n[a] * 2000\\n', stdout=subprocess.DEVNULL)\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    done = subprocess.run([sys.executable, "-c", wrapper], cwd=ws, env=env, capture_output=True, text=True,
                          timeout=120)
    peak = int(done.stdout.split()[-1]) * 1024
    assert 0 < peak < 160 * MiB, f"the host took {peak >> 20} MiB for a run limited to 64 MiB: {done.stderr[-300:]}"


# ------------------------------------------------------------ rg_listing, scope: names checked with no deadline
_RULE_FORMS = {  # the glob, and whether the files are committed before .gitignore hides them
    "glob(pattern='*/*'): rg_listing.list_files' keep": ("*/*", False),
    "glob(pattern='**/*.txt'), tracked files a rule hides: scope.tracked_below": ("**/*.txt", True),
}


@pytest.mark.parametrize("form", sorted(_RULE_FORMS))
def test_a_glob_over_many_ignore_rules_stops_at_the_run_deadline(tmp_path: Path, form: str) -> None:
    """Two loops check names against every ignore rule above them (``Reach.ok`` -> ``walk.ignored``: one
    ``fullmatch`` a rule) and never look at the deadline: for a glob of the ``path`` kind (``*/*``,
    ``src/*/test_*.py``) ``rg_listing.list_files`` filters each chunk of ripgrep's listing (up to 1 MiB of names)
    with ``keep`` in a list comprehension (ripgrep's timer only kills ripgrep); and ``scope.tracked_below`` checks
    every tracked file that a .gitignore rule hides (any glob). A repository's ``.gitignore`` of 20,000 short rules
    (``zz<n>q``: 200 KB; ``parse_ignore`` compiles them within the deadline, checked per rule) and 3,000 files in
    ``src/`` made the model's innocent ``glob(pattern='*/*')`` in a run limited to 5 s take 22.6 s before the
    deadline's TimeoutError (faulthandler: ``ignored`` under ``list_files``' comprehension); with the 3,000 files
    committed and ``*.txt`` first in that ``.gitignore``, ``glob(pattern="**/*.txt")`` took 13.7 to 22.5 s and returned
    its 3,000 paths as if in time. A 1 MiB ``.gitignore`` (100,000 rules) and 50,000 files: about 25 minutes.
    Through the warm server the run is abandoned (the server retires); in process, faulthandler's backstop ends
    it. Fix: check the deadline while filtering (every few hundred names) in both loops, and match a level's
    rules at once (one alternation per ignore file, as ripgrep's globset does) rather than one ``fullmatch`` per
    rule."""
    pattern, committed = _RULE_FORMS[form]
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    for i in range(3_000):
        (ws / "src" / f"f{i}.txt").write_text("")
    if committed:
        subprocess.run(["git", "add", "-A"], cwd=ws, check=True, capture_output=True)
        subprocess.run(["git", "-c", "user.email=a@b.invalid", "-c", "user.name=a", "commit", "-qm", "files"], cwd=ws,
                       check=True, capture_output=True)
    (ws / ".gitignore").write_text(("*.txt\n" if committed else "") + "".join(f"zz{i}q\n" for i in range(20_000)))
    code = f"try:\n    print(len(glob(pattern={pattern!r})))\nexcept Exception as exc:\n    print(type(exc).__name__)\n"
    out, _, took = _host_run(ws, base / "home", code, memory=256 * MiB, timeout=5, wait=60)
    assert took < 12, f"a run limited to 5 s took {took:.1f} s: {out[-300:]}"


# ------------------------------------------------------------ sessions: a list that holds itself
def test_a_session_global_that_holds_itself_is_kept_or_named_as_not_kept(tmp_path: Path) -> None:
    """deeadaa reads a cycle in a session's global as "nested deeper" (left out, named in a note). But the value
    reaches ``plain`` already converted by pydantic-monty, which writes a list or dict that holds itself as the
    string ``'[...]'`` / ``'{...}'`` (as ``repr`` shows it): ``a = []; a.append(a)`` and ``b = {'x': 1}; b['self'] =
    b`` are saved as ``{"a": ["[...]"], "b": {"x": 1, "self": "{...}"}}`` with no note, and the next run of the
    session gets ``a == ['[...]']`` -- a list holding a string, not itself -- silently (checked with ``runner.run``
    and ``--session``; the first run's notes are empty). Fix: recognise the conversion's placeholder (ask the
    sandbox, in the harvest, whether a global holds itself: ``id`` seen on the way down) and leave such a global
    out with its note, as for a set or NaN."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    home = base / "home"
    first, _, _ = _host_run(ws, home, "a = []\na.append(a)\nprint('saved')\n", memory=256 * MiB, timeout=10,
                            session="s", wait=60)
    assert "saved" in first, first
    second, _, _ = _host_run(ws, home, "try:\n    print('kept' if a[0] is a else repr(a))\nexcept NameError:\n"
                             "    print('not kept')\n", memory=256 * MiB, timeout=10, session="s", wait=60)
    assert second.split("\n")[0] in ("kept", "not kept"), second


# ------------------------------------------------------------ outline_python: MemoryError told as nesting
def test_outline_of_a_flat_file_past_the_memory_limit_says_memory(tmp_path: Path) -> None:
    """``outline_python`` answers both RecursionError and MemoryError with the error item "too deeply nested to
    parse". A flat Python file -- ``x = [a, a, ...]``, 500,000 items on one line (1 MB, under MAX_FILE_BYTES) --
    parsed in its worker (bounded by the run's memory plus CHILD_HEADROOM; ast takes ~670 MiB) gets MemoryError,
    and the model is told the file is too deeply nested, which it is not: it cannot tell that CODEACT_MEMORY would
    read it (the worker's own "ended by a signal" message says memory). Fix: a MemoryError item that names the
    memory limit, as ``_ended`` does."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    (ws / "m.py").write_text("x = [" + "a," * 500_000 + "]\n")
    code = "r = outline(path='m.py')\nprint(r[0]['docstring'] if r else r)\n"
    out, _, _ = _host_run(ws, base / "home", code, memory=64 * MiB, timeout=30, wait=90)
    assert "nested" not in out and "memory" in out, out[-300:]
