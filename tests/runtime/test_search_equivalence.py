"""Property: on any small tree, with any .gitignore and glob, ripgrep and the pure-Python search agree exactly."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codeact.core import notices
from codeact.core.boundary import Workspace
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.errors import ToolError
from codeact.tools import search
from codeact.tools.search import python_grep, results, rg_grep, ripgrep

pytestmark = pytest.mark.skipif(search.rg_binary() is None, reason="ripgrep is not installed here")

NAMES = ["a", "b", "a.py", "b.py", "a.txt", ".h", "x-y", "ab.py", "node_modules", "build", "B.py"]
IGNORE_LINES = ["*.txt", "!a.txt", "build/", "/a", "b", "**/x-y", "a/**", "*.py[co]", "#c", "", "a/b/", "*.py",
                "!ab.py", ".h", "b/*.py", "\\#x", "*.{py,txt}", "?.py", "[ab].py", "a.p[y]", "*.pyc", "b.py/"]
SEGMENTS = ["*", "**", "a*", "*.py", "?.py", "[ab].py", "{a,b}.py", "a", "b", "*.{py,txt}", "[!a]*", "x-y", ".h"]

paths = st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join), min_size=1, max_size=12)
ignores = st.lists(st.sampled_from(IGNORE_LINES), max_size=4).map("\n".join)
globs = st.builds(lambda lead, segs: lead + "/".join(segs), st.sampled_from(["", "", "/", "**/", "./"]),
                  st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3))


def build(root: Path, files: list[str], root_ignore: str, sub_ignore: str, dot_ignore: str = "",
          exclude: str = "", repo: str = "") -> None:
    """The tree: ``files``, a .gitignore at the root and in ``a``, a .ignore in ``b``, and ``exclude`` as the
    ``.git/info/exclude`` of the repository ``repo`` names (the root, ``a`` nested, or ``b`` with a ``.git`` file:
    a worktree's pointer)."""
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
    if (root / "b").is_dir() and dot_ignore:
        (root / "b" / ".ignore").write_text(dot_ignore + "\n")
    if repo == "b" and (root / "b").is_dir():
        (root / "b" / ".git").write_text("gitdir: /nowhere/.git/worktrees/b\n")
    elif repo and (root / repo).is_dir():
        (root / repo / ".git" / "info").mkdir(parents=True)
        (root / repo / ".git" / "info" / "exclude").write_text(exclude + "\n")


def both(fn):
    saved = ripgrep._rg_cache
    try:
        ripgrep._rg_cache = ripgrep._RG_UNSET
        with_rg = _outcome(fn)
        ripgrep._rg_cache = None
        return with_rg, _outcome(fn)
    finally:
        ripgrep._rg_cache = saved


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


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=paths, root_ignore=ignores, sub_ignore=ignores, pattern=globs, where=st.sampled_from([".", "a", "b"]),
       dot_ignore=ignores, exclude=ignores, repo=st.sampled_from(["", "", ".", "a", "b"]))
@example(files=["a/secret.py", "a/b.py", "x.py/c.txt"], root_ignore="", sub_ignore="", pattern="*.py", where=".",
         dot_ignore="", exclude="secret.py", repo="a")
def test_glob_and_grep_agree(files, root_ignore, sub_ignore, pattern, where, dot_ignore, exclude, repo):
    root = Path(tempfile.mkdtemp(prefix="codeact-eq-")).resolve()
    try:
        build(root, files, root_ignore, sub_ignore, dot_ignore, exclude, repo)
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
@example(files=[("", "é".encode() * 2500)], pattern="é", max_results=1, cap=5000)  # grep sized é as \u00e9: dropped
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


RECORD_FILES = ["a.py", "b/c.txt", "colon:x.txt", "caf\u00e9.md", "z"]
PLAIN_LINES = [b"TODO", b"", b"x:y", b"caf\xc3\xa9", b"y" * 2100]
ODD_LINES = [b"bad \xff byte", b"cr\r", b"[Omitted long matching line]"]


@st.composite
def rg_outputs(draw):
    """ripgrep's ``--null --line-number`` output: files in any order, each once with its lines in order (ripgrep
    prints a file's matches together, whatever its threads), a binary-file warning after a file's lines, paths with or without ``./``."""
    dot = draw(st.sampled_from(["./", ""]))
    out = b""
    lines = st.sampled_from(PLAIN_LINES) if draw(st.booleans()) else st.sampled_from(PLAIN_LINES + ODD_LINES)
    for name in draw(st.lists(st.sampled_from(RECORD_FILES), max_size=8, unique=True)):
        numbers = sorted(draw(st.sets(st.integers(1, 40), min_size=1, max_size=5)))
        for number in numbers:
            out += f"{dot}{name}".encode() + b"\0" + str(number).encode() + b":" + draw(lines) + b"\n"
        if draw(st.integers(0, 9)) == 0:
            out += f"{dot}{name}: WARNING: stopped searching binary file after match (found \"\\0\" byte around " \
                   "offset 9)\n".encode()
    return out


def _read_records(output: bytes, chunk: int, bulk: bool, count: int, budget: int):
    """What grep's reader keeps of ``output`` fed in ``chunk``-byte reads (``bulk``: the block reader allowed)."""
    import re as re_module

    from codeact.core.limits import Deadline
    from codeact.tools.search.walk import Glob

    found = results.FirstItems(count, budget, lambda hit: len(hit[0]) + len(hit[2]) + 36)
    grep = python_grep.Search(re_module.compile("x"), Glob("**"), None, None, found, 36, Deadline(60))
    reader = rg_grep.FileMatches(grep, Path(tempfile.gettempdir()))
    if not bulk:
        reader.bulk = lambda *_args: None  # type: ignore[method-assign]
    rest, records = b"", 0
    try:
        for at in range(0, len(output), chunk):
            data = rest + output[at:at + chunk]
            end = data.rfind(b"\n")
            block, rest = (data[:end], data[end + 1:]) if end >= 0 else (b"", data)
            if block:
                taken = reader.bulk(block, False, False)
                records = reader.each(block.split(b"\n"), False, False, records, 1 << 62) if taken is None \
                    else records + taken
        reader.switch(None, False, False)
    except (rg_grep.Flood, rg_grep.Unknown) as exc:
        return type(exc).__name__
    finally:
        reader.close()
    return found.result(), found.seen


@settings(max_examples=200, deadline=None)
@example(output=b"./a\x001:x\n./b\x001:x\n./a\x002:x\n./c\x001:x\n", chunk=1 << 16, count=1000, budget=1 << 20)
@example(output=b"a\x001:x\nb\x003:" + b"y" * 2100 + b"\nc\x001:x\n", chunk=1 << 16, count=1000, budget=1 << 20)
@example(output=b"a\x001:x\nb\x001:x\nb\x002:x\nc\x001:x\n", chunk=1 << 16, count=1, budget=1 << 20)
@given(output=rg_outputs(), chunk=st.sampled_from([1, 7, 64, 300, 1 << 16]), count=st.sampled_from([1, 3, 1000]),
       budget=st.sampled_from([200, 1 << 20]))
def test_rg_records_read_in_blocks_as_line_by_line(output, chunk, count, budget):
    """The block reader (a few C-speed passes over many records) keeps, counts and refuses exactly what the
    line-by-line reader does, however ripgrep's output is cut into reads."""
    assert _read_records(output, chunk, True, count, budget) == _read_records(output, 1 << 20, False, count,
                                                                               budget)
