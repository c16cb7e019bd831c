"""Property: on any small tree, with any .gitignore and glob, ripgrep and the pure-Python search agree exactly."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeact.core import notices
from codeact.errors import ToolError
from codeact.core.limits import Limits
from codeact.core.boundary import Workspace
from codeact.tools import grep_glob as search
from codeact.core.tool import ToolContext

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


def noted(fn):
    """``fn()``'s value and the notes it made."""
    collector = notices.Notes()
    previous = collector.activate()
    try:
        return fn(), collector.items
    finally:
        notices.restore(previous)


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


# Content that the two searches must read alike: long lines (ripgrep omits them past --max-columns and they are read
# back), CR LF, a BOM, invalid UTF-8, a NUL after a match (binary: skipped whole), a line that reads like ripgrep's
# own "omitted" marker, and results cut by max_results and by the result byte limit.
PIECES = [b"a", b"ab", b"\r", b"\n", b"\n", b"\r\n", "é".encode(), b"\xff", b"x" * 3000, "é".encode() * 2500,
          b"[Omitted long matching line]", b"TODO", b"\0"]
contents = st.lists(st.sampled_from(PIECES), max_size=30).map(b"".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.lists(st.tuples(st.sampled_from(["", "\ufeff"]), contents), min_size=1, max_size=5),
       pattern=st.sampled_from(["a|x|é", "TODO", "é", "x$", "^$", "Omitted", "b\\r$", "(?=T)O"]),
       max_results=st.sampled_from([1, 3, 1000]), cap=st.sampled_from([300, 5000, 1 << 20]))
def test_grep_reads_content_alike_and_cuts_alike(files, pattern, max_results, cap):
    from codeact.runner import _cap_result

    root = Path(tempfile.mkdtemp(prefix="codeact-eqc-")).resolve()
    try:
        for i, (bom, data) in enumerate(files):
            (root / f"d{i % 2}").mkdir(exist_ok=True)
            (root / f"d{i % 2}" / f"f{i}.txt").write_bytes(bom.encode() + data)
        full_ctx = ToolContext(workspace=Workspace.at(root), limits=Limits())
        ctx = ToolContext(workspace=Workspace.at(root), limits=Limits(tool_result=cap))
        full = both(lambda: search.grep(full_ctx, pattern=pattern, max_results=max_results))
        assert full[0] == full[1]
        # what a search cut to `cap` bytes returns equals the runner's cut of the whole answer, the runner cuts
        # nothing more, and the cut is said in a note
        expected, dropped = _cap_result(list(full[0]), cap)
        for answer, said in both(lambda: noted(lambda: search.grep(ctx, pattern=pattern, max_results=max_results))):
            assert _cap_result(answer, cap) == (expected, 0)
            assert list(answer) == expected
            if dropped:
                assert len(said) == 1 and said[0].startswith(f"grep(): returned {len(expected):,} of "), said
    finally:
        shutil.rmtree(root, ignore_errors=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=contents, bom=st.sampled_from(["", "\ufeff"]),
       pattern=st.sampled_from(["a|x|é", "TODO", "x$", "^$", "Omitted", "b\\r$", "(?=T)O"]),
       max_results=st.sampled_from([1, 3, 1000]))
def test_one_file_is_read_alike_off_the_main_thread(data, bom, pattern, max_results):
    """Off the main thread (the warm server) a named file is searched by ripgrep, or by the regex worker for a
    pattern ripgrep cannot run: the same answer as Python's search in process."""
    import threading

    root = Path(tempfile.mkdtemp(prefix="codeact-eq1-")).resolve()
    try:
        (root / "f.txt").write_bytes(bom.encode() + data)
        ctx = ToolContext(workspace=Workspace.at(root), limits=Limits())
        here = _outcome(lambda: search.grep(ctx, pattern=pattern, path="f.txt", max_results=max_results))
        there: list = []
        worker = threading.Thread(target=lambda: there.append(_outcome(
            lambda: search.grep(ctx, pattern=pattern, path="f.txt", max_results=max_results))))
        worker.start()
        worker.join(30)
        assert there == [here]
    finally:
        shutil.rmtree(root, ignore_errors=True)
