"""Red team, round 5 (independent): attacks on issue 40's fixes (the user's hooks and a repository's launcher,
``import glob`` walked inside the workspace, bounded host module calls), non-UTF-8 names and tracked files under
``.gitignore``. Each test is one attempt that broke through: it fails until the hole is closed."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links, rlimits and the warm server: POSIX")


def _host_call(name: str, args_src: str, kwargs_src: str, *, memory: int, timeout: float,
               wall: float = 120) -> tuple[str, float]:
    """``HostModules.call`` in a child Python (capped at 3 GiB of address space, so a break cannot take the
    machine): what it printed (RAN <type> <len> or RAISED <type>) and how long the call took."""
    script = (f"import sys, time; sys.path.insert(0, {str(RUNTIME)!r})\n"
              "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
              "from codeact.backends.host_modules import HostModules\n"
              f"hm = HostModules(None, memory={memory}, timeout={timeout})\n"
              f"args = {args_src}\nkwargs = {kwargs_src}\n"
              "t = time.monotonic()\n"
              "try:\n"
              f"    value = hm.call({name!r}, args, kwargs)\n"
              "    print('RAN', type(value).__name__, len(value), round(time.monotonic() - t, 2))\n"
              "except BaseException as exc:\n"
              "    print('RAISED', type(exc).__name__, round(time.monotonic() - t, 2), str(exc)[:200])\n")
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=wall)
    except subprocess.TimeoutExpired:
        return f"STILL RUNNING after {wall} s", time.monotonic() - start
    return done.stdout + done.stderr, time.monotonic() - start


# ------------------------------------------------------------------------------ host modules: memory estimates
@pytest.mark.parametrize(("name", "args_src", "kwargs_src"), [
    # pprint indents every nested line by `indent`: 2,000 items x 100,000 spaces = 200 MB from 16 kB of arguments
    ("pprint.pformat", "([0] * 2000,)", "{'indent': 100000, 'width': 1}"),
    # urlencode(doseq=True) repeats the key once per value: a 1 MB key x 300 values = 300 MB
    ("urllib.parse.urlencode", "({'k' * 1000000: [''] * 300},)", "{'doseq': True}"),
    # textwrap expands every tab to `tabsize` spaces first: 1,000 tabs x 200,000 = 200 MB (and ~9 s) from 2 kB
    ("textwrap.fill", "('\\t' * 1000 + 'x',)", "{'tabsize': 200000, 'width': 10**9}"),
], ids=["pprint-indent", "urlencode-doseq-key", "textwrap-tabsize"])
def test_a_host_module_call_cannot_make_more_than_the_run_memory_in_the_host(name: str, args_src: str,
                                                                           kwargs_src: str) -> None:
    """_work estimates ~16 kB / ~1 MB for these, so they run in the host process with no limit; through the
    launcher the first grew the warm server from 31 MB to 1.98 GB (VmHWM) with indent=500000, and a run's limit
    is 256 MiB. The call must be refused (MemoryError) or run in the limited child, never make 200+ MB here."""
    shown, _ = _host_call(name, args_src, kwargs_src, memory=64 << 20, timeout=60)
    assert shown.startswith("RAISED MemoryError"), shown


def test_difflib_ndiff_of_two_long_lines_stops_at_the_run_deadline() -> None:
    """ndiff compares the characters of every pair of lines (SequenceMatcher.ratio on each pair), but _work counts
    line pairs only: two 40,000-character lines are 'small', run in the host process, and go on past the deadline
    (through the launcher, in process: faulthandler's host traceback and no TimeoutError for the program)."""
    args = ("(lambda r: ([''.join(chr(0x4e00 + r.randrange(500)) for _ in range(40000)) + '\\n'],"
            " [''.join(chr(0x4e00 + r.randrange(500)) for _ in range(40000)) + '\\n']))"
            "(__import__('random').Random(1))")
    shown, took = _host_call("difflib.ndiff", args, "{}", memory=256 << 20, timeout=1, wall=120)
    assert "RAISED TimeoutError" in shown and took < 5, (shown, took)


# --------------------------------------------------------------------- import glob: a link named as a quoted form
def _workspace_with_quoted_link(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace holding a symbolic link named ``"d"`` (quotes included: a name any pull request can commit)
    that leads to an outside folder with a secret tree."""
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)
    (outside / "private-key.txt").write_text("TOPSECRET\n")
    (outside / "deeper" / "id_rsa").write_text("KEY\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# demo\n")
    (ws / '"d"').symlink_to(outside, target_is_directory=True)
    return ws.resolve(), outside


@pytest.mark.parametrize(("pattern", "recursive"), [('"d"/*', False), ("*/*", False), ('"d"/**', True),
                                                    ('"d"/deeper/id_rsa', False)])
def test_import_glob_never_lists_the_folder_a_link_named_as_a_quoted_form_leads_to(tmp_path: Path, pattern: str,
                                                                                   recursive: bool) -> None:
    """confined_glob._Walk._step asks ``workspace.contains(parent/name)`` and then follows ``realpath`` of the
    same string; ``contains`` unquotes it first (codeact.core.pathnames: ``"d"`` reads as ``d``, inside, existing
    or not) while ``realpath`` follows the real link ``"d"`` outside, and ``_open_folder`` then walks the relative
    path ``../outside`` part by part (``..`` is no link, O_NOFOLLOW does not stop it). Through the stamped
    launcher, warm and CODEACT_SERVER=0: glob.glob('"d"/**', recursive=True) listed the outside tree."""
    from codeact.backends.confined_glob import glob as confined
    from codeact.core.boundary import Workspace

    ws, _ = _workspace_with_quoted_link(tmp_path)
    found = confined(Workspace.at(ws), pattern, recursive=recursive)
    leaked = [p for p in found if "private-key" in p or "id_rsa" in p or "deeper" in p]
    assert not leaked, found


def test_import_glob_root_dir_never_leads_through_a_link_named_as_a_quoted_form(tmp_path: Path) -> None:
    """The same hole through ``root_dir=``: glob.glob('*', root_dir='"d"') listed the outside folder."""
    from codeact.backends.confined_glob import glob as confined
    from codeact.core.boundary import Workspace

    ws, _ = _workspace_with_quoted_link(tmp_path)
    assert "private-key.txt" not in confined(Workspace.at(ws), "*", root_dir='"d"')


# ------------------------------------------------------------------------------ sandbox os: is_symlink of a quoted form
@pytest.mark.parametrize("call", ["os.path.islink", "Path(...).is_symlink"])
def test_is_symlink_of_a_quoted_path_tells_nothing_about_outside_links(tmp_path: Path, call: str) -> None:
    """sandbox_os._is_symlink checks only the folder of the path *as given* (``"..\\057x"`` has none: the root),
    then asks os.path.islink of the *unquoted* path (``../x``) relative to the host process's working folder:
    an oracle for every symbolic link outside the workspace (True for one, False for none), warm and cold alike."""
    from test_attacks_round6_links import _run

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# demo\n")
    (tmp_path / "outside_link").symlink_to("/nonexistent-target")
    expr = {"os.path.islink": "os.path.islink(q)", "Path(...).is_symlink": "Path(q).is_symlink()"}[call]
    code = ("import os\nfrom pathlib import Path\nout = []\n"
            "for name in ['outside_link', 'not_there']:\n"
            "    q = '\"..\\\\057' + name + '\"'\n"
            "    try:\n"
            f"        out.append({expr})\n"
            "    except Exception as exc:\n"
            "        out.append(type(exc).__name__)\n"
            "print(out)\n")
    shown = _run(ws, tmp_path / "home", code)
    assert shown.splitlines()[0] != "[True, False]", shown


def test_os_walk_following_links_never_enters_the_folder_a_link_named_as_a_quoted_form_leads_to(
        tmp_path: Path) -> None:
    """The same root cause in sandbox_os.WorkspaceOS._scan: ``inside = ... workspace.contains(child.path)`` reads
    the host's real entry ``.../"d"`` as the quoted form of ``d`` (inside), then scandir follows the real link
    ``"d"`` outside: os.walk('.', followlinks=True) listed the outside tree (names of private-key.txt, id_rsa)."""
    from codeact.core.config import Settings
    from codeact.runner import run

    ws, _ = _workspace_with_quoted_link(tmp_path)
    code = "import os\nfor top, dirs, files in os.walk('.', followlinks=True):\n    print(top, dirs, files)\n"
    result = run(code, workspace=ws, backend="monty", settings=Settings(),
                 environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
                          "LANG": "C.UTF-8", "CODEACT_CONFIG_DIR": str(tmp_path / "cfg")})
    assert "private-key" not in result.stdout and "id_rsa" not in result.stdout, result.stdout


# ------------------------------------------------------------------------- non-UTF-8: the workspace's own path
def test_a_workspace_whose_own_path_is_not_utf8_gives_a_clean_answer(tmp_path: Path) -> None:
    """Names that are not UTF-8 inside the workspace reach programs quoted, but a workspace that lies in such a
    folder (a clone under a Latin-1 user folder; ``--workspace`` naming a committed ``sub\\xff``) ends every run
    with a bare host ``UnicodeEncodeError ... while processing 'cwd'`` (monty's feed_start gets the root as cwd):
    a host traceback through the launcher, warm and CODEACT_SERVER=0 (no JSON with --json)."""
    from codeact.core.config import Settings
    from codeact.runner import run

    ws = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9"))
    ws.mkdir()
    (ws / "ok.py").write_text("x = 1\n")
    result = run("print(open('ok.py').read())", workspace=ws, backend="monty", settings=Settings(),
                 environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
                          "LANG": "C.UTF-8", "CODEACT_CONFIG_DIR": str(tmp_path / "cfg")})
    assert result.ok or result.error is not None, result


# --------------------------------------------------------------------------- import glob: memory of a link loop
def test_recursive_glob_over_a_committed_link_loop_stays_within_the_run_memory(tmp_path: Path) -> None:
    """``L...L -> .`` (a 100-character name; any repository may commit it) and 50 empty files: ``**`` follows the
    loop (each step's realpath is inside) down to Python's recursion limit, and every level's spelled paths grow
    by 101 characters. MAX_ENTRIES (200,000 names) bounds the names, not their length: the host keeps every
    path in ``found``, ``reals`` and ``dirs`` (~50 x 100 x 990^2 characters), and the call hit a 1.5 GiB address
    space cap here (MemoryError after 15 s) for a run whose memory limit is 256 MiB. Through the stamped
    launcher (warm) glob.glob('lp/**', recursive=True) grew the server from 31 MB to 2.55 GB (VmHWM; a 3 GB
    ulimit stopped it)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(50):
        (ws / f"f{i}").touch()
    (ws / ("L" * 100)).symlink_to(".", target_is_directory=True)
    script = (f"import sys, resource; sys.path.insert(0, {str(RUNTIME)!r})\n"
              "resource.setrlimit(resource.RLIMIT_AS, (1500 << 20, 1500 << 20))\n"
              "from codeact.backends.host_modules import HostModules\n"
              "from codeact.core.boundary import Workspace\n"
              f"hm = HostModules(Workspace.at({str(ws.resolve())!r}), memory=256 << 20, timeout=60)\n"
              "try:\n"
              "    r = hm.call('glob.glob', ('**',), {'recursive': True})\n"
              "    print('RAN', len(r))\n"
              "except BaseException as exc:\n"
              "    print('RAISED', type(exc).__name__)\n"
              "print('MAXRSS_MB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    shown = done.stdout + done.stderr
    assert "MAXRSS_MB" in shown and int(shown.split("MAXRSS_MB")[1].split()[0]) < 700, shown
    assert "RAISED MemoryError" not in shown, shown


@pytest.mark.parametrize(("name", "args_src"), [
    ("fnmatch.fnmatch", "('b' * 10, '*a' * 100000)"),  # 200 kB of pattern: 'small', compiled for ~10 s here
    ("glob.glob", "('*a' * 100000,)"),
], ids=["fnmatch", "glob"])
def test_a_long_fnmatch_pattern_stops_at_the_run_deadline(tmp_path: Path, name: str, args_src: str) -> None:
    """fnmatch.translate + re.compile of a long pattern costs far more than its length, which is all _work
    counts: the call runs in the host process past the deadline (warm: the run is abandoned and the server
    restarts; CODEACT_SERVER=0: faulthandler's host traceback)."""
    script = (f"import sys, time; sys.path.insert(0, {str(RUNTIME)!r})\n"
              "from codeact.backends.host_modules import HostModules\n"
              "from codeact.core.boundary import Workspace\n"
              f"hm = HostModules(Workspace.at({str(tmp_path.resolve())!r}), memory=256 << 20, timeout=1)\n"
              "t = time.monotonic()\n"
              "try:\n"
              f"    hm.call({name!r}, {args_src}, {{}})\n"
              "    print('RAN', round(time.monotonic() - t, 1))\n"
              "except BaseException as exc:\n"
              "    print('RAISED', type(exc).__name__, round(time.monotonic() - t, 1))\n")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    took = time.monotonic() - start
    assert "RAISED TimeoutError" in done.stdout and took < 5, (done.stdout, done.stderr[-300:], took)


# ------------------------------------------------------------------ host modules: CPython caches on the warm server
@pytest.mark.parametrize(("name", "call_src"), [
    ("urllib.parse.quote", "('%',), {'safe': str(i) + '/' * 1_900_000}"),  # _byte_quoter_factory: lru_cache(128)
    ("urllib.parse.urljoin", "('http://a/' + str(i) + 'x' * 1_900_000, 'b'), {}"),  # urlsplit: lru_cache(128)
], ids=["quote-safe", "urljoin"])
def test_host_module_calls_leave_nothing_behind_in_the_host_after_their_runs(name: str, call_src: str) -> None:
    """fnmatch's and re's caches are cleared after a call (_forget_patterns) because they outlive the run on the
    warm server; urllib.parse's are not: 128 runs, one 1.9 MB call each (under IN_PROCESS_WORK, so in the host),
    left 238 MB (quote's safe=) and 464 MB (urljoin) held by CPython's lru_caches after every run had ended,
    more than a run's own 256 MiB limit, for the server's whole life. Through the stamped launcher (warm): one run
    of 128 such urljoin calls left the server at 515 MB (31 MB before), and still 515 MB after the next run."""
    script = (f"import sys, gc, resource; sys.path.insert(0, {str(RUNTIME)!r})\n"
              "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
              "from codeact.backends.host_modules import HostModules\n"
              "def rss():\n"
              "    return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) >> 10\n"
              "HostModules(None).call('urllib.parse.quote', ('%',), {})\n"
              "before = rss()\n"
              "for i in range(128):\n"
              "    hm = HostModules(None, memory=256 << 20, timeout=60)  # a run of its own\n"
              f"    args, kwargs = {call_src}\n"
              f"    hm.call({name!r}, args, kwargs)\n"
              "    del hm, args, kwargs\n"
              "gc.collect()\n"
              "print('KEPT_MB', rss() - before)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "KEPT_MB" in done.stdout, done.stderr[-500:]
    assert int(done.stdout.split("KEPT_MB")[1].split()[0]) < 64, done.stdout


@pytest.mark.parametrize(("pattern", "root_dir", "recursive"), [("*", "away", False), ("away/*", None, False),
                                                                ("**", None, True), ("*/*", None, False)])
def test_import_glob_names_a_link_it_does_not_follow_and_nothing_behind_it(tmp_path: Path, pattern: str,
                                                                          root_dir: str | None,
                                                                          recursive: bool) -> None:
    """A link leading out of the workspace was skipped with no word: ``glob.glob('*', root_dir='away')`` answered
    ``[]`` where CPython lists the folder (a silent answer). A note now names the link, and says nothing of what it
    leads to: the same note whether the target exists or not (no existence oracle)."""
    from codeact.backends.confined_glob import glob as confined
    from codeact.core import notices
    from codeact.core.boundary import Workspace

    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)
    (outside / "private-key.txt").write_text("secret")
    (ws / "README.md").write_text("# demo\n")
    shown = []
    for target in (outside, tmp_path / "missing"):
        link = ws / "away"
        if link.is_symlink():
            link.unlink()
        link.symlink_to(target, target_is_directory=True)
        notes = notices.Notes()
        previous = notes.activate()
        try:
            found = confined(Workspace.at(ws.resolve()), pattern, root_dir=root_dir, recursive=recursive)
        finally:
            notices.restore(previous)
        assert not [p for p in found if "private-key" in p or "deeper" in p], found
        shown.append(notes.shown())
    assert shown[0] == shown[1], "the note differs with what lies outside"
    assert len(shown[0]) == 1 and "'away': a link that leads out of the workspace was not followed" in shown[0][0]


def test_import_glob_with_an_absolute_root_dir_inside_the_workspace_lists_it(tmp_path: Path) -> None:
    """Red team round 6: ``glob.glob('*', root_dir=<the workspace's own absolute path>)`` answered ``[]`` with no
    word (CPython lists the folder): the root_dir walk lacked the absolute root's spelling the pattern walk has."""
    from codeact.backends.confined_glob import glob as confined
    from codeact.core.boundary import Workspace

    ws = (tmp_path / "ws").resolve()
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "a.txt").write_text("a")
    (ws / "README.md").write_text("# demo\n")
    assert sorted(confined(Workspace.at(ws), "*", root_dir=str(ws))) == ["README.md", "sub"]
    assert confined(Workspace.at(ws), "*", root_dir=str(ws / "sub")) == ["a.txt"]
