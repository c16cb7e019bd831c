"""Issue 40, round 9: a symbolic link loop inside the workspace, met through the program's own idioms. Each answer
is what plain CPython (3.11, the sandbox's model) gives on the same tree, where that tells nothing of what lies
outside; each test ran through the sandbox (``run``, monty) and failed before its fix."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_attacks_round6_links import TRY

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links")

_NAMES = ["loop", "a", "loop/x", "d/back", "d/back/x", "d/f.txt", "d/f.txt/x", "absent"]


def _loops(base: Path) -> Path:
    """``base/ws``: ``loop -> loop``, ``a -> b -> a``, ``d/back -> ../a`` and a plain ``d/f.txt``."""
    ws = base / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d/f.txt").write_text("x\n")
    (ws / "loop").symlink_to("loop")
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    (ws / "d/back").symlink_to("../a")
    return ws


def _both(ws: Path, home: Path, code: str) -> tuple[str, str, list[str]]:
    """What plain CPython prints running ``code`` in ``ws``, what the sandbox prints, and the sandbox's notes."""
    from codeact.core.config import Settings
    from codeact.runner import run

    host = subprocess.run([sys.executable, "-c", code], cwd=ws, capture_output=True, text=True, check=True).stdout
    home.mkdir(exist_ok=True)
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        result = run(code, workspace=ws, backend="monty", settings=Settings(),
                     environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
                              "LANG": "C.UTF-8", "CODEACT_CONFIG_DIR": str(home / "cfg")})
    finally:
        os.chdir(cwd)
    assert result.error is None, result.error
    return host, result.stdout, [str(note) for note in result.notes]


def _program(call: str) -> str:
    return "import os\nfrom pathlib import Path\n" + TRY + f"for n in {_NAMES!r}:\n    print(n, t(lambda: {call}))\n"


@pytest.mark.parametrize("call", ["os.stat(n).st_mode > 0", "Path(n).stat().st_mode > 0",
                                  "[e.name for e in os.scandir(n)]", "os.listdir(n)", "list(Path(n).iterdir())",
                                  "open(n).read()"])
def test_a_loop_is_too_many_levels_of_links_as_cpython_says(tmp_path: Path, call: str) -> None:
    """``os.stat('loop')`` said FileNotFoundError ("no such file") where CPython raises OSError ELOOP ("Too many
    levels of symbolic links"): the program is told a file it can list does not exist. ``os.stat('d/f.txt/x')``
    likewise said "no such file" where CPython says NotADirectoryError."""
    ws = _loops(tmp_path.resolve())
    host, got, _ = _both(ws, tmp_path / "home", _program(call))
    assert got == host


@pytest.mark.parametrize("call", ["os.path.islink(n)", "os.path.exists(n)", "os.path.isdir(n)",
                                  "os.path.isfile(n)", "os.path.lexists(n)"])
def test_a_path_through_a_loop_is_no_link_and_not_there_as_cpython_says(tmp_path: Path, call: str) -> None:
    """``os.path.islink('loop/x')`` raised OSError where CPython's islink answers False (its lstat fails)."""
    ws = _loops(tmp_path.resolve())
    host, got, _ = _both(ws, tmp_path / "home", _program(call))
    assert got == host


def test_realpath_of_a_loop_is_cpython_s_answer(tmp_path: Path) -> None:
    """CPython 3.11's non-strict ``os.path.realpath`` stops at a loop and keeps the rest as text; the sandbox raised
    OSError ELOOP. ``Path.resolve()`` reaches the host as the same call (the sandbox cannot tell them apart) and
    answers the same path, where CPython 3.11 raises RuntimeError (3.13 answers as realpath does)."""
    ws = _loops(tmp_path.resolve())
    code = _program("os.path.realpath(n)") + "print(t(lambda: os.path.realpath('loop/../d')))\n"
    host, got, _ = _both(ws, tmp_path / "home", code)
    assert got == host
    resolved = _both(ws, tmp_path / "home", _program("str(Path(n).resolve())"))[1]
    assert resolved == _both(ws, tmp_path / "home", _program("os.path.realpath(n)"))[1]


def test_a_loop_met_by_walk_is_never_called_outside(tmp_path: Path) -> None:
    """``os.walk('loop')`` (and Path('loop').rglob) answered nothing, as CPython does, with a note saying the path
    "is outside the workspace" though the loop lies inside it."""
    ws = _loops(tmp_path.resolve())
    code = ("import os\nfrom pathlib import Path\nprint(list(os.walk('loop')), list(os.walk('d/back')))\n"
            "print(sorted(str(p) for p in Path('d').rglob('*')))\n")
    host, got, notes = _both(ws, tmp_path / "home", code)
    assert got == host
    assert not any("outside" in note for note in notes), notes
