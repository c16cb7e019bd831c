"""Red team, round 6 (issue 40): a committed symbolic link as an oracle for what lies outside the workspace, and
paths the kernel cannot resolve read through a textual fallback. Each test ran through the sandbox (``run``, monty)
and failed before its fix."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links")


def _run(ws: Path, home: Path, code: str) -> str:
    """``code`` run in the sandbox over ``ws`` (its tools included), as the launcher runs it: stdout and stderr."""
    from codeact.core.config import Settings
    from codeact.runner import run

    home.mkdir(exist_ok=True)
    cwd = os.getcwd()
    os.chdir(ws)  # the launcher's host process works in the repository
    try:
        result = run(code, workspace=ws, backend="monty", settings=Settings(),
                     environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
                              "LANG": "C.UTF-8", "CODEACT_CONFIG_DIR": str(home / "cfg")})
    finally:
        os.chdir(cwd)
    return result.stdout + result.stderr


# a program's helper: what a call gives, or the error it raises
TRY = """\
def t(f):
    try:
        return repr(f())
    except Exception as exc:
        return type(exc).__name__ + ': ' + str(exc)
"""


# ------------------------------------------------------------------------ a link that goes out and comes back
_ORACLE = """\
import os
import glob as g
from pathlib import Path
""" + TRY + """\
for name in ['l', 'la', 'd']:
    print(name)
    print(' open', t(lambda: open(name).read()), t(lambda: Path(name).read_text()))
    print(' os.path', t(lambda: os.path.exists(name)), t(lambda: os.path.isfile(name)),
          t(lambda: os.path.isdir(name)), t(lambda: os.path.islink(name)), t(lambda: os.path.realpath(name)))
    print(' pathlib', t(lambda: str(Path(name).resolve())), t(lambda: Path(name).is_dir()),
          t(lambda: [str(p) for p in Path(name).iterdir()]))
    print(' glob.glob', t(lambda: g.glob(name + '/*')), t(lambda: g.glob('*', root_dir=name)))
    print(' view', t(lambda: view(path=name)))
    print(' grep', t(lambda: grep(pattern='INSIDE', path=name)))
    print(' glob', t(lambda: glob(pattern='*', path=name)))
    print(' edit', t(lambda: edit(path=name, old_str='INSIDE', new_str='CHANGED')))
print('walk', t(lambda: sorted((top, sorted(dirs), sorted(files)) for top, dirs, files in os.walk('.', followlinks=True))))
print('tools', t(lambda: view(path='../X/../ws/f.txt')), t(lambda: grep(pattern='INSIDE', path='../X/../ws')))
"""


def _oracle_workspace(base: Path, kind: str) -> Path:
    """``base/ws`` holding links whose target text leaves for ``base/X`` and comes back through ``..``; X is a link
    to another folder, a folder, or absent."""
    ws = base / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "f.txt").write_text("INSIDE-TEXT\n")
    (ws / "sub/g.txt").write_text("INSIDE-SUB\n")
    (base / "other/deep").mkdir(parents=True)
    (base / "other/ws").mkdir()
    (base / "other/ws/f.txt").write_text("OTHER\n")
    if kind == "link":
        (base / "X").symlink_to(base / "other/deep", target_is_directory=True)
    elif kind == "folder":
        (base / "X").mkdir()
    (ws / "l").symlink_to("../X/../ws/f.txt")
    (ws / "la").symlink_to(f"{base}/X/../ws/f.txt")
    (ws / "d").symlink_to("../X/../ws/sub", target_is_directory=True)
    return ws


def test_a_link_that_leaves_the_workspace_and_comes_back_tells_nothing_about_what_lies_outside(
        tmp_path: Path) -> None:
    """``ws/l -> ../X/../ws/f.txt``: the kernel resolves X, so when X was an outside link to another folder the
    path led elsewhere (refused), and when X was a folder or absent (real_path's textual fallback) it read
    ws/f.txt: every idiom told the program whether an outside path is a link. Now a link whose target passes
    outside at any step is refused as any link leading out is, before anything outside is looked at: every idiom
    and tool answers the same whatever X is."""
    answers = {}
    for kind in ("link", "folder", "absent"):
        base = (tmp_path / kind).resolve()
        ws = _oracle_workspace(base, kind)
        answers[kind] = _run(ws, tmp_path, _ORACLE).replace(str(base), "<base>")
        assert (ws / "f.txt").read_text() == "INSIDE-TEXT\n", kind  # edit refused through the link too
    assert answers["link"] == answers["folder"] == answers["absent"], answers
    shown = answers["absent"]
    assert "INSIDE" not in shown and "PermissionError" in shown and "outside the workspace" in shown, shown


# --------------------------------------------------------------- a path the kernel cannot resolve: as CPython
_UNRESOLVED = """\
import os
import glob
def t(f):
    try:
        return repr(f())
    except Exception as exc:
        return type(exc).__name__
print('m', t(lambda: open('m').read()), t(lambda: os.path.exists('m')), t(lambda: os.path.isfile('m')),
      t(lambda: os.path.islink('m')), t(lambda: glob.glob('m')))
print('dm', t(lambda: os.path.isdir('dm')), t(lambda: sorted(os.listdir('dm'))), t(lambda: glob.glob('dm/*')),
      t(lambda: glob.glob('*', root_dir='dm')))
print('fm', t(lambda: open('fm').read()), t(lambda: os.path.exists('fm')))
print('glob', t(lambda: glob.glob('absent/../f.txt')), t(lambda: glob.glob('f.txt/../f.txt')),
      t(lambda: glob.glob('f.txt/.')), t(lambda: glob.glob('sub/../f.txt')))
print('islink', t(lambda: os.path.islink('absent/x')), t(lambda: os.path.islink('f.txt/x')))
print('walk', t(lambda: sorted((top, sorted(dirs), sorted(files)) for top, dirs, files in os.walk('.', followlinks=True))))
"""


def _unresolved_workspace(base: Path) -> Path:
    """Links inside the workspace whose targets the kernel cannot resolve: ``..`` after a missing part or a file."""
    ws = base / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "f.txt").write_text("INSIDE-TEXT\n")
    (ws / "sub/g.txt").write_text("INSIDE-SUB\n")
    (ws / "m").symlink_to("absent/../f.txt")
    (ws / "dm").symlink_to("absent/../sub", target_is_directory=True)
    (ws / "fm").symlink_to("f.txt/../f.txt")
    return ws


def test_a_link_the_kernel_cannot_resolve_is_read_as_cpython_reads_it(tmp_path: Path) -> None:
    """``ws/m -> absent/../f.txt``: the kernel stops at ``absent`` (ENOENT), but real_path fell back to
    ``os.path.realpath``'s textual answer and the sandbox read ws/f.txt (and listed ws/sub through
    ``dm -> absent/../sub``). Each idiom now answers as CPython run in the workspace does."""
    ws = _unresolved_workspace(tmp_path.resolve())
    sandbox = _run(ws, tmp_path, _UNRESOLVED)
    cpython = subprocess.run([sys.executable, "-c", _UNRESOLVED], cwd=ws, capture_output=True, text=True,
                             timeout=60)
    assert cpython.returncode == 0, cpython.stderr
    assert sandbox.splitlines()[:len(cpython.stdout.splitlines())] == cpython.stdout.splitlines(), sandbox
    assert "INSIDE" not in sandbox


def test_the_tools_refuse_a_path_the_kernel_cannot_resolve(tmp_path: Path) -> None:
    """``view(path='absent/../f.txt')`` read ws/f.txt through real_path's textual fallback; CPython's open says
    FileNotFoundError (and NotADirectoryError for ``f.txt/../f.txt``). The tools now say what the kernel says."""
    ws = _unresolved_workspace(tmp_path.resolve())
    code = ("def t(f):\n    try:\n        return repr(f())\n    except Exception as exc:\n"
            "        return type(exc).__name__\n"
            "print([t(lambda: view(path='absent/../f.txt')), t(lambda: view(path='f.txt/../f.txt')),\n"
            "       t(lambda: grep(pattern='INSIDE', path='absent/..')), t(lambda: view(path='m')),\n"
            "       t(lambda: glob(pattern='*', path='dm')), t(lambda: outline(path='absent/../f.txt')),\n"
            "       t(lambda: edit(path='absent/../f.txt', old_str='INSIDE', new_str='CHANGED'))])\n")
    shown = _run(ws, tmp_path, code)
    assert shown.splitlines()[0] == str(["FileNotFoundError", "NotADirectoryError", "FileNotFoundError",
                                         "FileNotFoundError", "FileNotFoundError", "FileNotFoundError",
                                         "FileNotFoundError"]), shown
    assert (ws / "f.txt").read_text() == "INSIDE-TEXT\n"


def test_glob_root_dir_given_as_bytes_gets_cpythons_error(tmp_path: Path) -> None:
    """``glob.glob('*', root_dir=b'sub')`` failed with a host-internal message ("a bytes-like object is required,
    not 'str'", from the host's own quoting code); CPython says the pattern and the folder's names differ."""
    ws = _unresolved_workspace(tmp_path.resolve())
    code = ("import glob\ntry:\n    glob.glob('*', root_dir=b'sub')\nexcept TypeError as exc:\n    print(exc)\n")
    cpython = subprocess.run([sys.executable, "-c", code], cwd=ws, capture_output=True, text=True, timeout=60)
    assert _run(ws, tmp_path, code).splitlines()[0] == cpython.stdout.strip() != ""


@pytest.mark.xfail(strict=True, reason="pydantic-monty normalises a path's `..` as text before its OS call reaches "
                                       "the host: the host never sees `absent/..` in open()/os.path/pathlib")
def test_open_of_a_path_through_a_missing_folder_is_file_not_found(tmp_path: Path) -> None:
    """CPython's ``open('absent/../f.txt')`` is FileNotFoundError (the kernel stops at ``absent``). The sandbox
    hands the host ``<ws>/f.txt``: nothing outside is learnt (``..`` above the root is refused from the text), but
    the answer is not CPython's. This test passes once upstream passes the path as written."""
    ws = _unresolved_workspace(tmp_path.resolve())
    code = "try:\n    open('absent/../f.txt').read()\n    print('read')\nexcept OSError as exc:\n    print(type(exc).__name__)\n"
    assert _run(ws, tmp_path, code).splitlines()[0] == "FileNotFoundError"


def test_a_write_under_a_protected_link_name_tells_nothing_about_what_lies_outside(tmp_path: Path) -> None:
    """``ws/.github -> ../X/../ws/config`` makes config/hooks/ the hooks folder where the kernel reads it so: the
    write rules checked only the kernel's answer, so ``create('config/hooks/x.json')`` was refused when X was a
    folder or absent and allowed when X was an outside link elsewhere. The link's text is now checked too."""
    from codeact.core.boundary import Workspace
    from codeact.errors import PolicyError

    answers = {}
    for kind in ("link", "folder", "absent"):
        base = (tmp_path / kind).resolve()
        ws = base / "ws"
        (ws / "config/hooks").mkdir(parents=True)
        (base / "other/deep").mkdir(parents=True)
        if kind == "link":
            (base / "X").symlink_to(base / "other/deep", target_is_directory=True)
        elif kind == "folder":
            (base / "X").mkdir()
        (ws / ".github").symlink_to("../X/../ws/config", target_is_directory=True)
        try:
            Workspace(ws).resolve_for_write("config/hooks/x.json")
            answers[kind] = "allowed"
        except PolicyError as exc:
            answers[kind] = str(exc)
    assert answers["link"] == answers["folder"] == answers["absent"] != "allowed", answers
