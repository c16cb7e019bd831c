"""Property: on any small tree, with any .gitignore and glob, ripgrep and the pure-Python search agree exactly."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeact.errors import ToolError
from codeact.limits import Limits
from codeact.policy import Workspace
from codeact.tools import search
from codeact.tools.base import ToolContext

pytestmark = pytest.mark.skipif(search.rg_binary() is None, reason="ripgrep is not installed here")

NAMES = ["a", "b", "a.py", "b.py", "a.txt", ".h", "x-y", "ab.py", "node_modules", "build", "B.py"]
IGNORE_LINES = ["*.txt", "!a.txt", "build/", "/a", "b", "**/x-y", "a/**", "*.py[co]", "#c", "", "a/b/", "*.py",
                "!ab.py", ".h", "b/*.py", "\\#x"]
SEGMENTS = ["*", "**", "a*", "*.py", "?.py", "[ab].py", "{a,b}.py", "a", "b", "*.{py,txt}", "[!a]*", "x-y", ".h"]

paths = st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join), min_size=1, max_size=12)
ignores = st.lists(st.sampled_from(IGNORE_LINES), max_size=4).map("\n".join)
globs = st.builds(lambda lead, segs: lead + "/".join(segs), st.sampled_from(["", "", "/", "**/", "./"]),
                  st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3))


def build(root: Path, files: list[str], root_ignore: str, sub_ignore: str) -> None:
    for rel in files:
        target = root / rel
        if any(p.is_file() for p in list(target.parents)[: len(Path(rel).parts) - 1]):
            continue  # a name already used as a file cannot also be a folder
        if target.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x\n")
    (root / ".gitignore").write_text(root_ignore + "\n")
    if (root / "a").is_dir():
        (root / "a" / ".gitignore").write_text(sub_ignore + "\n")


def both(fn):
    saved = search._rg_cache
    try:
        search._rg_cache = search._RG_UNSET
        with_rg = _outcome(fn)
        search._rg_cache = None
        return with_rg, _outcome(fn)
    finally:
        search._rg_cache = saved


def _outcome(fn):
    try:
        return fn()
    except ToolError as exc:
        return f"ToolError: {exc}"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=paths, root_ignore=ignores, sub_ignore=ignores, pattern=globs, where=st.sampled_from([".", "a", "b"]))
def test_glob_and_grep_agree(files, root_ignore, sub_ignore, pattern, where):
    root = Path(tempfile.mkdtemp(prefix="codeact-eq-")).resolve()
    try:
        build(root, files, root_ignore, sub_ignore)
        ctx = ToolContext(workspace=Workspace.at(root), limits=Limits())
        if not (root / where).is_dir():
            where = "."
        with_rg, with_python = both(lambda: search.glob(ctx, pattern=pattern, path=where))
        assert with_rg == with_python, (pattern, where)
        with_rg, with_python = both(lambda: search.grep(ctx, pattern="x", glob=pattern, path=where))
        assert with_rg == with_python, (pattern, where)
    finally:
        shutil.rmtree(root, ignore_errors=True)
