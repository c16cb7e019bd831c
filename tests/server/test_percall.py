"""The per-call fast paths keep their answers: the kernel's real path is `os.path.realpath`'s, `display` is the same
string, a short string result passes `_cap_result` untouched and a long one is still cut visibly."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeact.core.boundary import Workspace
from codeact.paths import real_path
from codeact.runner import _cap_result


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x\n")
    (root / "link").symlink_to(root / "src")
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "loop").symlink_to(root / "loop")
    (root / "fifo").parent.mkdir(exist_ok=True)
    os.mkfifo(root / "fifo")
    return root


@pytest.mark.parametrize("rel", ["src/a.py", "link/a.py", "link/../src/a.py", "link/deep/../a.py", "src/",
                                 "missing/file.py", "dangling", "loop", "fifo", ".", "src/a.py/", "link"])
def test_the_kernels_real_path_is_realpaths(tree: Path, rel: str) -> None:
    path = os.path.join(str(tree), rel)
    found, exists = real_path(path)
    assert found == os.path.realpath(path)
    assert not exists or os.path.exists(found)


def test_resolve_and_display(tree: Path) -> None:
    space = Workspace.at(tree)
    assert space.display(space.resolve("link/a.py", must_exist=True)) == "src/a.py"
    assert space.display(str(tree)) == "."
    assert space.display(str(tree / "link" / "a.py")) == "link/a.py"  # under the root as given
    outside = tree.parent / "outside-link"
    outside.symlink_to(tree)
    assert space.display(str(outside / "src" / "a.py")) == "src/a.py"  # only through the link: its real path
    assert space.display("/") == "<outside workspace>"
    with pytest.raises(FileNotFoundError):
        space.resolve("missing.py", must_exist=True)


def test_cap_result_keeps_short_strings_and_cuts_long_ones() -> None:
    short = "é" * 100
    assert _cap_result(short, 400) == (short, 0)
    long = "é" * 300  # 600 bytes: past 400 although 300 characters are not
    cut, dropped = _cap_result(long, 400)
    assert dropped == 0 and cut.startswith("é" * 200) and "truncated 200 more bytes" in cut


@pytest.mark.parametrize("size", [0, 1, 767, 768, 769, 5000])
def test_view_reads_what_fstat_says_and_cuts_visibly_past_the_cap(tmp_path: Path, size: int) -> None:
    """view reads a file's size plus a byte, not a 1 MiB buffer a call; what fits the cap (1024 - 256 = 768 bytes
    here) is whole, the rest cut with its note."""
    from codeact.core.limits import Deadline, Limits
    from codeact.core.tool import ToolContext
    from codeact.tools.files import view

    (tmp_path / "f.txt").write_bytes(b"y" * size)
    ctx = ToolContext(workspace=Workspace.at(tmp_path), limits=Limits(tool_result=1024), allow_hosts=(), environ={},
                      deadline=Deadline(30))
    got = view(ctx, path="f.txt")
    if size <= 768:
        assert got == "y" * size
    else:
        assert got.startswith("y" * 768 + f"\n... [truncated {size - 768} more bytes; read on with view_range")
