"""Round 20's fix (items 3 and 4) beyond the red team's two calls: while a host process swaps ``sub`` for a link to
an outside folder, no file idiom of the sandbox, nor ``import glob`` in any of its forms, says what lies there.
Before the fix (resolution by path: ``lstat``/``readlink`` of ``<ws>/sub/...``) ``Path.exists``,
``Workspace.realpath``, ``contains`` and the glob forms below answered from the outside folder some dozens of times
in 6 s; every look is now made through the descriptor of the folder before it."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from test_edit_safety import _can_exchange, _swappable, _swapping

from codeact.backends import confined_glob
from codeact.backends.sandbox_os import WorkspaceOS
from codeact.core.boundary import Workspace

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links and renameat2: POSIX")


def test_no_lookup_answers_from_an_outside_folder_swapped_in(fixture_workspace: Path, tmp_path: Path) -> None:
    if not _can_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    (fixture_workspace / "revealed-target").write_text("x\n")
    outside = tmp_path / "outside"
    sub, link = _swappable(fixture_workspace, outside, {"f.txt": "inside\n"}, {"f.txt": "outside\n", "oo": ""})
    (outside / "od").mkdir()
    (outside / "back").symlink_to(fixture_workspace / "revealed-target")
    workspace = Workspace.at(fixture_workspace)
    files = WorkspaceOS(workspace)

    def ask(name: str, rel: str) -> Any:
        return files.answer(name, (PurePosixPath(fixture_workspace / rel),), {})

    calls: dict[str, Callable[[], object]] = {
        "Path.exists(sub/oo)": lambda: ask("Path.exists", "sub/oo"),
        "Path.exists(sub/back)": lambda: ask("Path.exists", "sub/back"),
        "Path.is_file(sub/oo)": lambda: ask("Path.is_file", "sub/oo"),
        "Path.is_dir(sub/od)": lambda: ask("Path.is_dir", "sub/od"),
        "Path.is_symlink(sub/back)": lambda: ask("Path.is_symlink", "sub/back"),
        "Path.stat(sub/oo)": lambda: ask("Path.stat", "sub/oo") is not None,
        "Path.resolve(sub/back/../x)": lambda: "revealed" in str(ask("Path.resolve", "sub/back/../x")),
        "Workspace.realpath(sub/back)": lambda: "revealed" in workspace.realpath("sub/back"),
        "Workspace.resolve(sub/back)": lambda: "revealed" in str(workspace.resolve("sub/back", lexical=True)),
        "Path.iterdir(sub)": lambda: any(path.name == "oo" for path in ask("Path.iterdir", "sub")),
        **{f"glob({pattern})": (lambda pattern=pattern: confined_glob.glob(workspace, pattern))
           for pattern in ("sub/oo", "sub/od/", "s*/oo", "sub/o*", "sub/back", "sub/*/", "sub/od/..")},
    }
    for name, call in calls.items():  # the quiet answers, with sub a folder
        try:
            assert not call(), name
        except OSError:
            pass
    answered = dict.fromkeys(calls, 0)
    with _swapping(sub, link, "3") as swapper:
        while swapper.poll() is None:
            for name, call in calls.items():
                try:
                    answered[name] += bool(call())
                except OSError:  # refused: the right answer while sub is a link
                    continue
    assert not {name: count for name, count in answered.items() if count}, answered
