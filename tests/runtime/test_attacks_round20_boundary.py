"""Red team, round 20 (issue 40, items 3 and 4): the sandbox's ``import glob`` and ``Path.resolve`` under a folder
swapped for a link to outside. Each test is one attempt that broke through, run as the attacker ran it; each fails
while its finding is open (timing-dependent: a host process swaps the folder in a loop, as round 5's tests do)."""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from test_edit_safety import _can_exchange, _swappable, _swapping

from codeact.backends import confined_glob
from codeact.backends.sandbox_os import WorkspaceOS
from codeact.core.boundary import Workspace

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links and renameat2: POSIX")


def test_import_glob_never_reveals_an_outside_name_while_a_folder_is_swapped(fixture_workspace: Path,
                                                                            tmp_path: Path) -> None:
    """Item 3: confined_glob lists a folder by a descriptor opened part by part (no swap race there), but a
    pattern part with no magic (``glob.glob('sub/outside-only-name')``, CPython's ``_glob0``) is answered by
    ``_Walk.lexists`` -> ``os.path.lexists(os.path.join(real_parent, name))``, and a folder-only step by
    ``os.path.isdir(real)``: PATH lookups that follow ``sub`` when it was swapped for a link to outside after
    ``_step`` saw a plain folder. Seen: 175 of 55,305 calls in 3 s answered ``['sub/outside-only-name']``, a
    name that exists only in the outside folder (an existence oracle for any outside path the program guesses:
    ``~/.ssh/id_ed25519``, a colleague's project). Fix: look the last part up with ``os.stat(name,
    dir_fd=<the folder opened as listdir opens it>, follow_symlinks=False)``, and folders likewise."""
    if not _can_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    sub, link = _swappable(fixture_workspace, tmp_path / "outside", {"f.txt": "inside\n"},
                           {"f.txt": "outside\n", "outside-only-name": ""})
    workspace = Workspace.at(fixture_workspace)
    assert confined_glob.glob(workspace, "sub/f.txt") == ["sub/f.txt"]
    assert confined_glob.glob(workspace, "sub/outside-only-name") == []
    revealed, calls = 0, 0
    with _swapping(sub, link, "4") as swapper:
        while swapper.poll() is None:
            calls += 1
            try:
                if confined_glob.glob(workspace, "sub/outside-only-name"):
                    revealed += 1
            except OSError:
                continue
    assert not revealed, f"glob.glob named a file that exists only outside the workspace {revealed} times " \
                         f"(of {calls})"


def test_path_resolve_never_follows_an_outside_link_while_a_folder_is_swapped(fixture_workspace: Path,
                                                                             tmp_path: Path) -> None:
    """Item 4: round 5 made read_text, iterdir, scan, stat and is_symlink descriptor-relative; ``Path.resolve``
    (``WorkspaceOS._resolve`` -> ``Workspace.resolve(lexical=True)``) still resolves by path. With ``sub``
    swapped for a link to an outside folder holding the link ``back -> <ws>/revealed-target``,
    ``Path("sub/back").resolve()`` answered ``<ws>/revealed-target`` 2,746 times in 3 s (408 of 62,875 here):
    it read a link that lies outside the workspace and gave its target, where the design says the resolution
    "reads the workspace's own files only" and that a folder swapped for a link is refused, never followed.
    (``Path('sub/back').exists()`` answered True once in the same run: ``back`` exists only outside.) Fix:
    resolve part by part from descriptors (readlinkat on the folder opened without following links)."""
    if not _can_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    (fixture_workspace / "revealed-target").write_text("x\n")
    sub, link = _swappable(fixture_workspace, tmp_path / "outside", {"f.txt": "inside\n"}, {"f.txt": "outside\n"})
    (tmp_path / "outside" / "back").symlink_to(fixture_workspace / "revealed-target")
    files = WorkspaceOS(Workspace.at(fixture_workspace))
    back = PurePosixPath(fixture_workspace / "sub/back")
    assert "revealed-target" not in str(files.answer("Path.resolve", (back,), {}))  # sub holds no ``back``
    followed, calls = 0, 0
    with _swapping(sub, link, "4") as swapper:
        while swapper.poll() is None:
            calls += 1
            try:
                got = files.answer("Path.resolve", (back,), {})
            except OSError:  # refused: the right answer while sub is a link
                continue
            if "revealed-target" in str(got):
                followed += 1
    assert not followed, f"Path.resolve read a link outside the workspace {followed} times (of {calls})"
