"""glob's fast path: a file-name glob given to ripgrep as ``--glob`` (which beats ignore rules), kept only when no
ignore rule may match a name the glob matches; every hazard falls back to the exact listing."""
from __future__ import annotations

from pathlib import Path

import pytest

from codeact.core.boundary import Workspace
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.errors import ToolError
from codeact.tools import search
from codeact.tools.search import rg_listing, ripgrep
from codeact.tools.search.walk import may_ignore, name_ends


@pytest.mark.parametrize(("pattern", "ends"), [
    ("*.py", (".py",)), ("*.{ts,tsx}", (".ts", ".tsx")), ("test_*.py", (".py",)), ("Makefile", ("Makefile",)),
    ("a?b.txt", ("b.txt",)), ("x_{a,b}", ("x_a", "x_b")),
    ("*", None), ("*.py[cod]", None), ("*.{py,}", (".py", ".")), ("*{py,}", None), ("*\\.py", None), ("*.{p*,t}", None), ("", None),
])
def test_name_ends(pattern, ends):
    assert name_ends(pattern) == ends


@pytest.mark.parametrize(("rules", "may"), [
    ("*.txt\nbuild/\n/dist\n*.pyc\n__pycache__/", False),
    ("secret.py", True), ("*.py", True), ("conf/*.py", True), ("?.py", True), ("*.p[xy]", True), ("*.py?", False),
    ("*.p[!y]", False), ("**", True), ("docs/**", True), ("*", True), ("a*", True), ("py", False),
    ("\\#x.py", True), ("*.{py,txt}", True), ("*.py[", True), ("!keep.py\n# old.py", False), ("x.py/", True),
])
def test_may_ignore(rules, may):
    assert may_ignore(rules, (".py",)) is may


@pytest.fixture
def listings(monkeypatch):
    """The ripgrep listings each glob made: ``True`` for one with overrides, ``False`` for one with a file type."""
    made: list[bool] = []
    real = rg_listing.list_files

    def recording(*args, **kwargs):
        made.append(kwargs.get("overrides", args[9] if len(args) > 9 else None) is not None)
        return real(*args, **kwargs)

    monkeypatch.setattr(ripgrep, "_rg_cache", ripgrep._RG_UNSET)
    monkeypatch.setattr(rg_listing, "list_files", recording)
    if search.rg_binary() is None:
        pytest.skip("ripgrep is not installed here")
    return made


def _tree(root: Path) -> None:
    for rel in ("a.py", "pkg/b.py", "pkg/c.txt", "pkg/deep/d.py", "build/e.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    (root / ".gitignore").write_text("build/\n*.txt\n__pycache__/\n")


def _both(root: Path, pattern: str = "*.py", where: str = ".") -> list[str]:
    ctx = ToolContext(workspace=Workspace.at(root), limits=Limits())
    fast = search.glob(ctx, pattern=pattern, path=where)
    saved = ripgrep._rg_cache
    ripgrep._rg_cache = None
    try:
        assert fast == search.glob(ctx, pattern=pattern, path=where)  # the pure-Python walk agrees
    finally:
        ripgrep._rg_cache = saved
    return fast


def test_a_plain_tree_is_listed_once_with_overrides(tmp_path, listings):
    _tree(tmp_path)
    (tmp_path / "pkg" / ".ignore").write_text("*.log\n")
    assert _both(tmp_path) == ["a.py", "pkg/b.py", "pkg/deep/d.py"]
    assert _both(tmp_path, "*.{py,md}", "pkg") == ["pkg/b.py", "pkg/deep/d.py"]
    assert listings == [True, True]


@pytest.mark.parametrize("hazard", ["rule", "nested rule", "exclude", "nested exclude", "folder", "pointer",
                                    "rule above"])
def test_each_hazard_falls_back_and_keeps_the_rules(tmp_path, listings, hazard):
    _tree(tmp_path)
    expected = ["a.py", "pkg/b.py", "pkg/deep/d.py"]
    where = "."
    if hazard == "rule":
        (tmp_path / ".gitignore").write_text("build/\nsecret.py\n")
        (tmp_path / "pkg" / "secret.py").write_text("token\n")
    elif hazard == "nested rule":
        (tmp_path / "pkg" / "deep" / ".gitignore").write_text("d.py\n")
        expected.remove("pkg/deep/d.py")
    elif hazard in ("exclude", "nested exclude"):
        repo = tmp_path if hazard == "exclude" else tmp_path / "pkg"
        (repo / ".git" / "info").mkdir(parents=True)
        (repo / ".git" / "info" / "exclude").write_text("b.py\n")
        expected.remove("pkg/b.py")
    elif hazard == "folder":
        (tmp_path / "pkg" / "x.py").mkdir()
        (tmp_path / "pkg" / "x.py" / "f.py").write_text("x\n")
        expected.append("pkg/x.py/f.py")
    elif hazard == "pointer":
        (tmp_path / "pkg" / "deep" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/deep\n")
    elif hazard == "rule above":
        (tmp_path / ".ignore").write_text("d.py\n")
        where, expected = "pkg", ["pkg/b.py"]
    assert _both(tmp_path, where=where) == expected
    assert listings == [True, False]


@pytest.mark.parametrize(("pattern", "by_ending"), [
    ("*.py", True), ("**/*.py", True), ("src/*.py", True), ("*.{ts,tsx}", True), ("*_test.go", True),
    ("test_*.py", False), ("*.py[co]", False), ("*.{py,}", False), ("*", False), ("**/a/*.py", False),
    ("*.{p*,t}", False), ("*\\.py", False), ("*.{a,{b,c}}", False), ("Makefile", False), ("*.p?", False),
])
def test_by_ending(pattern, by_ending):
    """grep leaves out its own check of a name ripgrep already filtered only where the two cannot differ."""
    from codeact.tools.search.walk import Glob

    assert Glob(pattern).by_ending is by_ending


@pytest.mark.usefixtures("listings")  # ripgrep lists
def test_each_listed_piece_arrives_sorted_with_its_lead(tmp_path, monkeypatch):
    """ripgrep's pieces are given the folder asked for and sorted as they arrive (the answer's last sort only merges
    them): what glob returns is the same, for a folder below the root too."""
    from codeact.tools.search.results import FirstItems

    _tree(tmp_path)
    pieces: list[list[str]] = []
    real = FirstItems.extend

    def recording(self, items, size):
        pieces.append(list(items))
        return real(self, items, size)

    monkeypatch.setattr(FirstItems, "extend", recording)
    assert _both(tmp_path, "*.py", "pkg") == ["pkg/b.py", "pkg/deep/d.py"]
    listed = [piece for piece in pieces if piece][0]  # ripgrep's: the first run above
    assert listed == sorted(listed) and all(path.startswith("pkg/") for path in listed)


def test_a_glob_matches_as_written_without_backtracking() -> None:
    """Round 14: ``*a*a*...*b`` against a name of 60 ``a`` (or ``**/a/`` six times against 2,000 segments) tried every
    way to place them, hours in C. Stars are matched fewest-first, atomically, and match exactly what they did."""
    import itertools
    import re
    import time

    from codeact.tools.search import walk

    patterns = ["*.py", "**/*.py", "src/**/test_*.py", "a/**/b/**/c", "**", "**/**", "a/**", "*a*b*", "*a*a*b",
                "?*[ab]*c?", "{a,b/c}/*", "x/{*.py,*.ts}", "**/a/**/a/**/b", "[!a]*x*y", "\\**x*", "a/*/b", "*/*",
                "**/*_test/**/*.py", "a**b", "a/**/**/b", "*.{py,pyi}", "**/{src,lib}/**/*.c"]
    parts = ["a", "b", "x", "y", "/", ".py", "_test", "src", "*"]
    paths = ["".join(p) for size in range(5) for p in itertools.product(parts, repeat=size)][:40_000]
    for pattern in patterns:
        written = re.compile(walk._translate_plain(pattern), re.S)
        made = re.compile(walk.translate_glob(pattern), re.S)
        assert [p for p in paths if written.fullmatch(p)] == [p for p in paths if made.fullmatch(p)], pattern
    started = time.monotonic()
    assert re.compile(walk.translate_glob("*a" * 14 + "*b"), re.S).fullmatch("a" * 60) is None
    assert re.compile(walk.translate_glob("**/a/" * 6 + "**/b"), re.S).fullmatch("a/" * 2000 + "c") is None
    assert time.monotonic() - started < 1


def _written(walk, pattern: str) -> str:
    """``pattern``'s regular expression as written: ``{a,b}`` an alternation of its alternatives, each as written."""
    real = walk.translate_glob
    walk.translate_glob = lambda part: _written(walk, part)
    try:
        return walk._translate_plain(pattern)
    finally:
        walk.translate_glob = real


def test_a_glob_with_braces_matches_as_written_without_backtracking() -> None:
    """Round 15: a segment holding ``{a,b}`` was matched as written, so ``*a*a*...*{b,c}`` backtracked for hours on a
    name of 60 ``a``. A glob with braces is now expanded into the brace-free globs it stands for, each translated as
    one without braces is: the same paths match (nested and empty alternatives, escaped braces, ``/`` and ``**``
    inside them, a ``**`` that ends up inside a segment), in bounded time, and past a count of globs it is refused."""
    import itertools
    import re
    import time

    from codeact.tools.search import walk

    patterns = ["*.{py,pyi}", "{a,b/c}/*", "x/{*.py,*.ts}", "**/{src,lib}/**/*.c", "*a*{b,c}", "{a,{b,{x,y}}}*a*b",
                "{,a}*{a,}", "{}a", "a{,}b", "\\{a,b}*", "{a\\,b,x}*", "{a\\},b}*a*b", "[{]*a*{a,b}", "*{*,}*a*b",
                "{**/a,b}*a*b", "x{**/a,b}*b", "{a/**,b}*a", "{a/**,b}", "{**,a}x*b", "{/,a}*a*b", "{*/a,b}/*a*b",
                "a/{**/x,y}/**/b*a", "{a,b}/**/{a,b}/**/*{a,b}", "**/{a,x}/**", "{a,b}*/**/*a*b", "*a*a*{b,/}**",
                "\\*\\*", "a\\**b*a*b", "{*a*a,x}*b*{a,b}"]
    parts = ["a", "b", "x", "/", "ab", "{", "}", ",", "*"]
    paths = ["".join(p) for size in range(5) for p in itertools.product(parts, repeat=size)]
    for pattern in patterns:
        written = re.compile(_written(walk, pattern), re.S)
        made = re.compile(walk.translate_glob(pattern), re.S)
        assert [p for p in paths if written.fullmatch(p)] == [p for p in paths if made.fullmatch(p)], pattern
    started = time.monotonic()
    name, path = "a" * 250, "a/" + ("a" * 254 + "/") * 15 + "a" * 250
    assert re.compile(walk.translate_glob("*a" * 14 + "*{b,c}"), re.S).fullmatch(name) is None
    assert re.compile(walk.translate_glob("{x,*a*a*a*a*a*a*a*a*a*a*a*a*b}*a*a*a*a*c"), re.S).fullmatch(name) is None
    assert re.compile(walk.translate_glob("{a,b}/**/" * 5 + "*a*a*a*a*{c,d}"), re.S).fullmatch(path) is None
    loose = "{a/**,b}*a*a*a*a*{a/**,b}*a*a*a*a*{a/**,b}*a*a*a*a*{a/**,b}*a*a*a*a*a{c,d}"  # 32 with `.*` inside
    assert re.compile(walk.translate_glob(loose), re.S).fullmatch(path + "cccc") is None
    assert time.monotonic() - started < 2
    for many in ("{a,b}" * 9, "{" + ",".join(map(str, range(300))) + "}", loose + "{e,f}"):
        with pytest.raises(ValueError, match="more than"):
            walk.translate_glob(many)
        with pytest.raises(ToolError, match="invalid glob"):
            walk.Glob("src/" + many)
    assert walk.parse_ignore("{a,b}" * 9 + "\n*.log\n")[0][0].fullmatch("x.log")  # ripgrep skips what it cannot
