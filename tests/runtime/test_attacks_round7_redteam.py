"""Red team, round 7: the search tools' ignore files and glob's early git question, attacked from a program.
Each test runs the program through the sandbox (``run``, monty), or the tool, and fails while the breach is open."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_attacks_round6_links import TRY, _run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links")


# ------------------------------------------------------------ an ignore file that is a link to an outside file
_IGNORE_PROBE = TRY + """\
print('glob', t(lambda: glob(pattern='src/*.py')))
print('glob deep', t(lambda: glob(pattern='*.py', path='src/deep')))
print('grep deep', t(lambda: grep(pattern='x', path='src/deep')))
"""


def _ignore_link_workspace(base: Path, outside_text: str) -> Path:
    """``base/ws``, a git work tree whose committed ``.gitignore`` is a link to ``base/secret.txt`` (outside)."""
    base.mkdir(parents=True)
    (base / "secret.txt").write_text(outside_text)
    ws = base / "ws"
    (ws / "src/deep").mkdir(parents=True)
    (ws / "src/a.py").write_text("x = 1\n")
    (ws / "src/deep/b.py").write_text("x = 2\n")
    (ws / ".gitignore").symlink_to("../secret.txt")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def test_an_ignore_file_linked_outside_tells_nothing_of_the_outside_files_text(tmp_path: Path) -> None:
    """A committed ``.gitignore -> ../secret.txt``: the host's glob/grep planning (walk.read_level, Glob.start's
    ignore chain, ripgrep.parent_flags' _anchored_above, Overrides.hold) reads the ignore files with
    ``Path.read_text``, following the link to a file outside the workspace, and applies its lines as rules. What
    glob and grep answer then depends on the outside file's text: a program confirms a guessed line of any file
    the user can read (create a folder named as the guess, glob below it). Whatever the outside file holds, the
    answers must be the same."""
    answers = []
    for i, text in enumerate(["src\n", "unrelated\n", "a/b\n"]):
        base = tmp_path / str(i)
        ws = _ignore_link_workspace(base, text)
        answers.append(_run(ws, base / "home", _IGNORE_PROBE))
    assert answers[0] == answers[1] == answers[2], answers


# ------------------------------------------------------------ glob's early git question and .gitmodules
def test_a_committed_gitmodules_cannot_make_glob_start_gits_by_the_hundred(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """tracked.Asked starts one ``git ls-files`` per path that ``.gitmodules`` names, all at once, before the
    listing. ``path = .`` passes _submodules' checks (not absolute, no ``..``) and ``root / '.'`` is the root, whose
    index exists: a committed ``.gitmodules`` with N such lines makes every glob() call start N gits over the whole
    repository at the same time (N = 10,000 is a 300 KB file: a fork storm on the user's machine). Before the
    early question they ran one after the other, bounded by the deadline. A fake git counts them here."""
    from codeact.core.boundary import Workspace
    from codeact.core.limits import Limits
    from codeact.core.tool import ToolContext
    from codeact.tools import search
    from codeact.tools.search import tracked

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(ws), "add", "a.py"], check=True)
    (ws / ".gitmodules").write_text("".join(f'[submodule "s{i}"]\n\tpath = .\n' for i in range(40)))
    fake, log = base / "bin", base / "log"
    fake.mkdir()
    (fake / "git").write_text(f"#!/bin/sh\necho start >> {log}\nsleep 1\necho end >> {log}\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    monkeypatch.setattr(tracked, "_cache", None)
    ctx = ToolContext(workspace=Workspace.at(ws), limits=Limits())
    search.glob(ctx, pattern="*.py")
    running = most = 0
    for line in log.read_text().split():
        running += 1 if line == "start" else -1
        most = max(most, running)
    assert most <= 8, f"{most} gits ran at once for one glob()"


# ------------------------------------------------------------ the same link, as a program confirms a guess
def test_a_program_cannot_confirm_a_line_of_an_outside_file_through_a_linked_ignore_file(tmp_path: Path) -> None:
    """The same hole as a program uses it: ``.gitignore -> ../passwords.txt`` committed; the program creates
    ``<guess>/probe.txt`` and globs ``<guess>/*.txt``: an empty answer means ``<guess>`` is a line of the outside
    file (Glob.start's ignore chain read it through the link)."""
    base = tmp_path.resolve()
    (base / "passwords.txt").write_text("alice\nhunter2\nbob\n")
    ws = base / "ws"
    ws.mkdir()
    (ws / ".gitignore").symlink_to("../passwords.txt")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    code = ("for guess in ['letmein', 'hunter2']:\n"
            "    create(path=guess + '/probe.txt', file_text='x')\n"
            "    print(guess, glob(pattern=guess + '/*.txt'))\n")
    out = _run(ws, base / "home", code)
    assert "hunter2 ['hunter2/probe.txt']" in out, out
