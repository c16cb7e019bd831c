"""Backend-neutral conformance: the programs a model writes give exactly right answers, and each tool behaves.

Every program runs on each backend in conftest.BACKENDS and with both search engines (ripgrep and the pure-Python
fallback); the expected answers are written by hand from the fixture workspace in conftest.FILES.
"""
from __future__ import annotations

import os
import stat

import pytest

from codeact.core import notices
from codeact.core.boundary import Workspace
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.errors import ToolError
from codeact.tools import files, search, shell
from codeact.tools import sql as sql_mod
from codeact.tools.search import rg_grep, ripgrep

Q3 = '"' * 3


@pytest.fixture(params=["rg", "python"])
def search_impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test once with ripgrep and once with the pure-Python search."""
    if request.param == "rg":
        monkeypatch.setattr(ripgrep, "_rg_cache", ripgrep._RG_UNSET)
        if search.rg_binary() is None:
            pytest.skip("ripgrep is not installed here")
    else:
        monkeypatch.setattr(ripgrep, "_rg_cache", None)
    return request.param


# ------------------------------------------------------------------------------------------ programs of a model
TODO_PROGRAM = r'''
hits = grep(pattern=r"\bTODO\b")
for h in hits:
    print(f"{h['path']}:{h['line']}: {h['text'].strip()}")
[(h["path"], h["line"]) for h in hits]
'''

LINES_PROGRAM = '''
counts = {}
for path in glob(pattern="**/*.py"):
    counts[path] = len(view(path=path).splitlines())
top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
for path, n in top:
    print(f"{n:4d} {path}")
top
'''

JSON_PROGRAM = '''
import json
bad = []
for path in glob(pattern="*.json"):
    try:
        json.loads(view(path=path))
    except Exception as e:
        bad.append(path)
bad
'''

IMPORT_OS_PROGRAM = r'''
hits = grep(pattern=r"^\s*(import os\b|from os\b)", glob="*.py")
[f"{h['path']}:{h['line']}" for h in hits]
'''

NO_DOCSTRING_PROGRAM = r'''
import re
missing = []
for path in glob(pattern="*.py"):
    lines = view(path=path).splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*def (\w+)\(", line)
        if m:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if not (nxt.startswith(Q3) or nxt.startswith("'" * 3)):
                missing.append(f"{path}:{i + 1}:{m.group(1)}")
missing
'''.replace("Q3", repr(Q3))


@pytest.mark.usefixtures("search_impl")
def test_list_every_todo(run_program):
    result = run_program(TODO_PROGRAM)
    assert result.ok, result.error
    assert result.result == [("README.md", 5), ("src/app.py", 6), ("src/pkg/core.py", 7), ("src/utils.py", 5)]
    assert result.stdout == ("README.md:5: - TODO: write the real docs\n"
                             "src/app.py:6: # TODO: parse arguments\n"
                             "src/pkg/core.py:7: # TODO: validate config\n"
                             "src/utils.py:5: # TODO handle unicode\n")


@pytest.mark.usefixtures("search_impl")
def test_count_lines_top3(run_program):
    result = run_program(LINES_PROGRAM)
    assert result.ok, result.error
    assert result.result == [("tests/test_app.py", 15), ("src/app.py", 12), ("src/utils.py", 11)]
    assert result.stdout == "  15 tests/test_app.py\n  12 src/app.py\n  11 src/utils.py\n"


@pytest.mark.usefixtures("search_impl")
def test_invalid_json_files(run_program):
    result = run_program(JSON_PROGRAM)
    assert result.ok, result.error
    assert result.result == ["config/broken.json"]
    assert [c.tool for c in result.tool_calls] == ["glob", "view", "view", "view"]


@pytest.mark.usefixtures("search_impl")
def test_files_importing_os(run_program):
    result = run_program(IMPORT_OS_PROGRAM)
    assert result.ok, result.error
    assert result.result == ["src/app.py:1", "src/pkg/core.py:2", "src/pkg/core.py:3", "tests/test_app.py:1"]


@pytest.mark.usefixtures("search_impl")
def test_functions_without_docstrings(run_program):
    result = run_program(NO_DOCSTRING_PROGRAM)
    assert result.ok, result.error
    assert result.result == ["src/app.py:5:main", "src/pkg/core.py:6:run", "src/utils.py:4:slugify",
                             "tests/test_app.py:6:test_helper", "tests/test_app.py:10:test_cwd",
                             "tests/test_app.py:14:test_more"]


def test_every_default_tool_through_the_sandbox(run_program):
    code = '''
created = create(path="notes/a.txt", file_text="one\\ntwo\\n")
edited = edit(path="notes/a.txt", old_str="two", new_str="2")
text = view(path="notes/a.txt")
shell = bash(command="wc -l < notes/a.txt")
rows = sql(query="CREATE TABLE t(n); INSERT INTO t VALUES (1), (2); SELECT sum(n) AS s FROM t")
{"created": created, "edited": edited, "text": text, "wc": shell["stdout"].strip(), "code": shell["exit_code"],
 "rows": rows, "glob": glob(pattern="notes/*"), "grep": grep(pattern="^2$", path="notes")}
'''
    result = run_program(code)
    assert result.ok, result.error
    assert result.result == {"created": "created notes/a.txt", "edited": "edited notes/a.txt", "text": "one\n2\n",
                             "wc": "2", "code": 0, "rows": [{"s": 3}], "glob": ["notes/a.txt"],
                             "grep": [{"path": "notes/a.txt", "line": 2, "text": "2"}]}


def test_tool_errors_reach_the_program_as_catchable_exceptions(run_program):
    code = '''
caught = []
try:
    view(path="missing.txt")
except FileNotFoundError as e:
    caught.append(("FileNotFoundError", str(e)))
try:
    edit(path="README.md", old_str="nope", new_str="x")
except RuntimeError as e:
    caught.append(("RuntimeError", str(e)))
try:
    create(path="README.md", file_text="x")
except FileExistsError as e:
    caught.append(("FileExistsError", str(e)))
caught
'''
    result = run_program(code)
    assert result.ok, result.error
    assert result.result == [
        ("FileNotFoundError", "no such file or folder: missing.txt"),
        ("RuntimeError", "old_str was not found in README.md; view the file and copy the text exactly, "
                         "whitespace included"),
        ("FileExistsError", "README.md already exists; use edit() to change it"),
    ]


def test_wrong_keyword_is_reported_before_any_tool_runs(run_program):
    result = run_program('create(path="x.txt", file_text="x")\nview(pth="x.txt")')
    assert not result.ok
    assert result.error.type == "TypeError" and result.error.line == 2
    assert result.tool_calls == []


# --------------------------------------------------------------------------------------------------------- view
def test_view_text_exactly_and_ranges(ctx, fixture_workspace):
    assert files.view(ctx, path="src/app.py") == (fixture_workspace / "src/app.py").read_text()
    assert files.view(ctx, path="src/app.py", view_range=[5, 7]) == (
        "def main():\n    # TODO: parse arguments\n    return os.getcwd()\n")
    assert files.view(ctx, path="src/app.py", view_range=[11, -1]) == '    """Double x."""\n    return x * 2\n'
    with pytest.raises(ToolError, match="1-based"):
        files.view(ctx, path="src/app.py", view_range=[0, 2])
    with pytest.raises(IndexError, match="which has 12 lines"):
        files.view(ctx, path="src/app.py", view_range=[40, 41])
    with pytest.raises(ToolError, match="two line numbers"):
        files.view(ctx, path="src/app.py", view_range=[1])
    with pytest.raises(FileNotFoundError, match="no such file or folder: nope.txt"):
        files.view(ctx, path="nope.txt")


def test_view_keeps_crlf_and_counts_lines_like_grep(ctx, fixture_workspace):
    (fixture_workspace / "win.txt").write_bytes(b"a\r\nb\x0cc\r\nd")
    assert files.view(ctx, path="win.txt") == "a\r\nb\x0cc\r\nd"
    assert files.view(ctx, path="win.txt", view_range=[2, 2]) == "b\x0cc\r\n"
    assert search.grep(ctx, pattern="d", path="win.txt") == [{"path": "win.txt", "line": 3, "text": "d"}]


def test_view_folder_listing(ctx, fixture_workspace):
    (fixture_workspace / "src" / "link.py").symlink_to("app.py")
    assert files.view(ctx, path="src") == "app.py\nlink.py@\npkg/\nutils.py"
    listing = files.view(ctx, path=".").split("\n")
    assert ".git/" not in listing and ".gitignore" in listing and "config/" in listing


def test_view_refuses_binary_files(ctx):
    with pytest.raises(ToolError, match=r"assets/logo.bin is a binary file \(25 bytes\)"):
        files.view(ctx, path="assets/logo.bin")


# ------------------------------------------------------------------------------------------------ create / edit
def test_create_makes_parents_and_refuses_overwrite(ctx, fixture_workspace):
    assert files.create(ctx, path="new/deep/file.txt", file_text="hello\n") == "created new/deep/file.txt"
    made = fixture_workspace / "new/deep/file.txt"
    assert made.read_text() == "hello\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(made.stat().st_mode) == 0o666 & ~umask
    with pytest.raises(FileExistsError):
        files.create(ctx, path="new/deep/file.txt", file_text="again")
    assert not [p for p in made.parent.iterdir() if p.name.endswith(".codeact-tmp")]


def test_edit_replaces_exactly_once(ctx, fixture_workspace):
    assert files.edit(ctx, path="src/app.py", old_str="x * 2", new_str="x + x") == "edited src/app.py"
    assert "return x + x\n" in (fixture_workspace / "src/app.py").read_text()
    with pytest.raises(ToolError, match="occurs 2 times"):
        files.edit(ctx, path="src/app.py", old_str="import", new_str="#")
    with pytest.raises(ToolError, match="not found"):
        files.edit(ctx, path="src/app.py", old_str="", new_str="x")


def test_edit_keeps_windows_line_endings(ctx, fixture_workspace):
    (fixture_workspace / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    files.edit(ctx, path="win.txt", old_str="one\ntwo\n", new_str="1\n2\n")
    assert (fixture_workspace / "win.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


# -------------------------------------------------------------------------------------------------- glob / grep
ALL_FILES = [".gitignore", "README.md", "assets/logo.bin", "config/app.json", "config/broken.json", "config/db.json",
             "src/app.py", "src/pkg/__init__.py", "src/pkg/core.py", "src/utils.py", "tests/test_app.py"]


@pytest.mark.parametrize("pattern, path, expected", [
    ("*", ".", ALL_FILES),
    ("**", ".", ALL_FILES),
    ("*.py", ".", ["src/app.py", "src/pkg/__init__.py", "src/pkg/core.py", "src/utils.py", "tests/test_app.py"]),
    ("**/*.py", ".", ["src/app.py", "src/pkg/__init__.py", "src/pkg/core.py", "src/utils.py", "tests/test_app.py"]),
    ("src/*.py", ".", ["src/app.py", "src/utils.py"]),
    ("src/**/*.py", ".", ["src/app.py", "src/pkg/__init__.py", "src/pkg/core.py", "src/utils.py"]),
    ("src/", ".", ["src/app.py", "src/pkg/__init__.py", "src/pkg/core.py", "src/utils.py"]),
    ("*.py", "src/pkg", ["src/pkg/__init__.py", "src/pkg/core.py"]),
    ("{app,db}.*", ".", ["config/app.json", "config/db.json", "src/app.py"]),
    ("[!a-c]*.json", "config", ["config/db.json"]),
    ("*.log", ".", []),  # debug.log is ignored by .gitignore, and globs do not override that
    ("*.py", "build", ["build/generated.py"]),  # a folder named explicitly is searched although ignored
    ("/README.md", ".", ["README.md"]),
    ("src/app.py", ".", ["src/app.py"]),
    ("src/pkg/*", ".", ["src/pkg/__init__.py", "src/pkg/core.py"]),
    ("src/*/core.py", ".", ["src/pkg/core.py"]),
    ("config/{app,db}.json", ".", ["config/app.json", "config/db.json"]),
    ("build/*.py", ".", []),  # the literal folder is ignored: a walk never reaches it
    ("build/*.py", "build", []),  # ...but below path=build the pattern is build/build/*.py
    ("*.py", "build", ["build/generated.py"]),
    ("nope/**", ".", []),
    (".git/*", ".", []),
    ("**/pkg/*.py", ".", ["src/pkg/__init__.py", "src/pkg/core.py"]),
])
@pytest.mark.usefixtures("search_impl")
def test_glob(ctx, pattern, path, expected):
    assert search.glob(ctx, pattern=pattern, path=path) == expected


@pytest.mark.usefixtures("search_impl")
def test_glob_sorts_as_sorted_does(ctx, fixture_workspace):
    for rel in ("a.py", "a/b.py", "a-b.py", "B.py"):
        (fixture_workspace / "sort" / rel).parent.mkdir(parents=True, exist_ok=True)
        (fixture_workspace / "sort" / rel).write_text("x\n")
    assert search.glob(ctx, pattern="*.py", path="sort") == ["sort/B.py", "sort/a-b.py", "sort/a.py", "sort/a/b.py"]


@pytest.mark.usefixtures("search_impl")
def test_skipped_folders_stay_skipped_whatever_the_ignore_files_say(ctx, fixture_workspace):
    web = fixture_workspace / "web"
    for rel in ("node_modules/lib/index.txt", ".git/config.txt", "keep.txt", "sub/.git", "caf\udce9/.git"):
        (web / rel).parent.mkdir(parents=True, exist_ok=True)
        (web / rel).write_text("needle\n")
    (web / ".ignore").write_text("*\n!*/\n!*.txt\n!node_modules/\n!.git\n")  # an allow-list; re-includes
    assert search.glob(ctx, pattern="*", path="web") == ["web/keep.txt"]  # `*` ignores .ignore itself
    assert search.grep(ctx, pattern="needle", path="web") == [{"path": "web/keep.txt", "line": 1, "text": "needle"}]


@pytest.mark.parametrize("root_is_a_repository", [True, False], ids=["git-work-tree", "plain-folder"])
@pytest.mark.usefixtures("search_impl")
def test_a_nested_repository_and_the_outer_gitignore(tmp_path, root_is_a_repository):
    """In a git work tree a nested repository starts afresh, as in git; in a plain folder holding repositories
    every .gitignore above applies (ripgrep's rule there). Its own info/exclude applies either way."""
    root = tmp_path / "ws"
    for rel in ("sub/.git/HEAD", "b.log", "sub/a.log", "sub/c.txt", "sub/d.tmp"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("needle\n")
    (root / "sub/.git/info").mkdir()
    (root / "sub/.git/info/exclude").write_text("*.tmp\n")
    if root_is_a_repository:
        (root / ".git").mkdir()
    (root / ".gitignore").write_text("*.log\n")
    here = ToolContext(workspace=Workspace.at(root), limits=Limits())
    expected = ["sub/a.log", "sub/c.txt"] if root_is_a_repository else ["sub/c.txt"]
    for path in (".", "sub"):
        assert search.glob(here, pattern="*", path=path) == [p for p in [".gitignore", *expected]
                                                            if path == "." or p.startswith("sub/")]
        assert [hit["path"] for hit in search.grep(here, pattern="needle", path=path)] == expected


def test_ripgrep_is_told_to_skip_the_same_folders():
    from codeact.tools.search.walk import SKIP_DIRS, SKIP_IGNORE_FILE
    # .git without "/": a worktree's or a submodule's .git FILE is skipped too
    assert SKIP_IGNORE_FILE.read_text().split() == [name if name == ".git" else name + "/" for name in SKIP_DIRS]


@pytest.mark.parametrize("path", [".", "a", "a/b"])
@pytest.mark.usefixtures("search_impl")
def test_anchored_rules_of_folders_above_the_search_hold(tmp_path, path):
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\n!a/b/c/x.log\n/a/b/c/z.txt\n")
    for rel in ("a/b/c/x.log", "a/b/c/y.log", "a/b/c/z.txt", "a/b/c/w.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("needle\n")
    here = ToolContext(workspace=Workspace.at(root), limits=Limits())
    assert search.glob(here, pattern="*", path=path) == ([".gitignore"] if path == "." else []) + [
        "a/b/c/w.txt", "a/b/c/x.log"]
    assert [hit["path"] for hit in search.grep(here, pattern="needle", path=path)] == ["a/b/c/w.txt", "a/b/c/x.log"]


@pytest.mark.parametrize("path", [".", "sub"])
@pytest.mark.usefixtures("search_impl")
def test_ignore_files_above_the_workspace_do_not_count(tmp_path, path):
    (tmp_path / ".gitignore").write_text("*.log\n")  # e.g. a dotfiles repository in $HOME
    (tmp_path / ".ignore").write_text("*.tmp\n")
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    for rel in ("a.log", "sub/b.log", "sub/c.tmp"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("needle\n")
    here = ToolContext(workspace=Workspace.at(root), limits=Limits())
    expected = ["sub/b.log", "sub/c.tmp"] if path == "sub" else ["a.log", "sub/b.log", "sub/c.tmp"]
    assert search.glob(here, pattern="*", path=path) == expected
    assert [hit["path"] for hit in search.grep(here, pattern="needle", path=path)] == expected


def test_glob_errors(ctx):
    with pytest.raises(ToolError, match="invalid glob"):
        search.glob(ctx, pattern="src/[ab")
    with pytest.raises(ToolError, match="empty"):
        search.glob(ctx, pattern=" ")
    with pytest.raises(NotADirectoryError):
        search.glob(ctx, pattern="*", path="README.md")


@pytest.mark.usefixtures("search_impl")
def test_grep_options(ctx):
    assert search.grep(ctx, pattern="todo", ignore_case=True, glob="core.py") == [
        {"path": "src/pkg/core.py", "line": 7, "text": "    # TODO: validate config"},
        {"path": "src/pkg/core.py", "line": 9,
         "text": "    return data, os.path.exists(data['path']), environ.get('HOME')  # todo: lower case does not count"}]
    assert search.grep(ctx, pattern="import", max_results=3) == [
        {"path": "src/app.py", "line": 1, "text": "import os"},
        {"path": "src/app.py", "line": 2, "text": "import sys"},
        {"path": "src/pkg/__init__.py", "line": 1, "text": "from .core import run"}]
    assert search.grep(ctx, pattern="TODO", path="src/utils.py") == [
        {"path": "src/utils.py", "line": 5, "text": "    # TODO handle unicode"}]
    assert search.grep(ctx, pattern="port", glob="config/*.json") == [
        {"path": "config/app.json", "line": 1, "text": '{"name": "demo", "debug": false, "ports": [8000, 8001]}'},
        {"path": "config/broken.json", "line": 3, "text": '  "ports": [1, 2,],'},
        {"path": "config/db.json", "line": 3, "text": '  "port": 5432'}]
    assert search.grep(ctx, pattern="generated") == []  # build/ is ignored
    assert search.grep(ctx, pattern="(?<=import )os$") == [  # a look-behind: Python's re answers
        {"path": "src/app.py", "line": 1, "text": "import os"},
        {"path": "tests/test_app.py", "line": 1, "text": "import os"}]


@pytest.mark.parametrize("kwargs", [
    {"pattern": "TODO"}, {"pattern": "^$"}, {"pattern": "."}, {"pattern": r"\bos\b", "glob": "*.py"},
    {"pattern": "def", "path": "src"}, {"pattern": "(?i)TODO", "max_results": 2}, {"pattern": "x$", "glob": "{*.py,*.md}"},
    {"pattern": r"\d+", "glob": "**/config/*.json"}, {"pattern": "[\"']", "ignore_case": True},
])
def test_grep_ripgrep_and_python_agree(ctx, monkeypatch, kwargs):
    monkeypatch.setattr(ripgrep, "_rg_cache", ripgrep._RG_UNSET)
    if search.rg_binary() is None:
        pytest.skip("ripgrep is not installed here")
    with_rg = search.grep(ctx, **kwargs)
    monkeypatch.setattr(ripgrep, "_rg_cache", None)
    assert search.grep(ctx, **kwargs) == with_rg


@pytest.mark.usefixtures("search_impl")
def test_grep_text_encodings_and_binary(ctx, fixture_workspace):
    enc = fixture_workspace / "enc"
    enc.mkdir()
    (enc / "bom.txt").write_bytes(b"\xef\xbb\xbfneedle bom\n")
    (enc / "utf16.txt").write_bytes("needle sixteen\n".encode("utf-16"))
    (enc / "latin1.txt").write_bytes(b"caf\xe9 needle\n")
    (enc / "late-nul.bin").write_bytes(b"needle first\n" + b"x" * 200_000 + b"\n\x00\n")
    (enc / "crlf.txt").write_bytes(b"needle crlf\r\n")
    assert search.grep(ctx, pattern="needle", path="enc") == [
        {"path": "enc/bom.txt", "line": 1, "text": "needle bom"},
        {"path": "enc/crlf.txt", "line": 1, "text": "needle crlf"},
        {"path": "enc/latin1.txt", "line": 1, "text": "caf\ufffd needle"},
        {"path": "enc/utf16.txt", "line": 1, "text": "needle sixteen"}]
    with pytest.raises(ToolError, match="binary"):
        search.grep(ctx, pattern="needle", path="enc/late-nul.bin")


@pytest.mark.parametrize("flood", [False, True], ids=["collect-all", "matching-files-in-order"])
@pytest.mark.usefixtures("search_impl")
def test_grep_many_matches_keeps_the_first_in_path_order(ctx, fixture_workspace, monkeypatch, flood):
    if flood:  # far more matches than asked for: the matching files are listed, sorted and read in order
        monkeypatch.setattr(rg_grep, "FLOOD_FACTOR", 1)
        monkeypatch.setattr(rg_grep, "FLOOD_MIN", 10)
    many = fixture_workspace / "many"
    for i in range(30):
        (many / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
        (many / f"d{i % 3}" / f"f{i:02d}.txt").write_text("hit\n" * 500)
    (many / "d0" / "a-binary.txt").write_bytes(b"hit\n" * 30_000 + b"\x00")  # NUL after ripgrep's first buffer
    (many / "d0.txt").write_text("hit\n" * 5)  # before d0/ as sorted() orders paths, after it in ripgrep's walk
    found = search.grep(ctx, pattern="hit", path="many", max_results=700)
    assert len(found) == 700
    assert found[0] == {"path": "many/d0.txt", "line": 1, "text": "hit"}
    assert found[5] == {"path": "many/d0/f00.txt", "line": 1, "text": "hit"}
    assert found[-1] == {"path": "many/d0/f03.txt", "line": 195, "text": "hit"}


def test_grep_errors(ctx):
    with pytest.raises(ToolError, match="invalid regular expression"):
        search.grep(ctx, pattern="(")
    with pytest.raises(ToolError, match="max_results"):
        search.grep(ctx, pattern="x", max_results=0)


@pytest.mark.usefixtures("search_impl")
def test_grep_cuts_very_long_lines_visibly(ctx, fixture_workspace):
    (fixture_workspace / "long.txt").write_text("needle" + "x" * 5000 + "\n")
    (hit,) = search.grep(ctx, pattern="needle", path=".", glob="long.txt")
    assert hit["text"].endswith("... [line cut: 3006 more characters]")
    assert len(hit["text"]) < 2100


@pytest.mark.usefixtures("search_impl")
def test_ignore_rules_like_ripgrep(ctx, fixture_workspace):
    (fixture_workspace / "ign" / "keep" / "deep").mkdir(parents=True)
    (fixture_workspace / "ign" / ".gitignore").write_text("*.tmp\n!keep.tmp\n/rooted.txt\ndeep/\n")
    (fixture_workspace / "ign" / ".ignore").write_text("secret.*\n")
    (fixture_workspace / "ign" / "keep" / ".gitignore").write_text("!also.tmp\n")
    for rel in ("a.tmp", "keep.tmp", "rooted.txt", "keep/rooted.txt", "keep/also.tmp", "keep/deep/x.txt",
                "keep/deep/deep.txt", "secret.txt", "node_modules/m.js", "ok.txt", ".hidden/h.txt"):
        (fixture_workspace / "ign" / rel).parent.mkdir(parents=True, exist_ok=True)
        (fixture_workspace / "ign" / rel).write_text("line\n")
    assert search.glob(ctx, pattern="**", path="ign") == [
        "ign/.gitignore", "ign/.hidden/h.txt", "ign/.ignore", "ign/keep.tmp", "ign/keep/.gitignore",
        "ign/keep/also.tmp", "ign/keep/rooted.txt", "ign/ok.txt"]
    # path patterns without a literal start: ripgrep runs them as an override glob, which beats .gitignore;
    # what it lets through (a.tmp, the ignored deep/ folder, node_modules) must still be left out
    assert search.glob(ctx, pattern="i*/**/*.tmp") == ["ign/keep.tmp", "ign/keep/also.tmp"]
    assert search.glob(ctx, pattern="i*/**/de*") == []
    assert search.glob(ctx, pattern="i*/**/*.js") == []
    assert search.grep(ctx, pattern="line", glob="i*/**/*.tmp") == [
        {"path": "ign/keep.tmp", "line": 1, "text": "line"}, {"path": "ign/keep/also.tmp", "line": 1, "text": "line"}]
    assert search.grep(ctx, pattern="line", glob="i*/**/de*") == []


# --------------------------------------------------------------------------------------------------------- bash
def test_bash_runs_in_the_workspace(ctx, fixture_workspace):
    result = shell.bash(ctx, command="pwd; echo oops >&2; read x || echo no-stdin; exit 3")
    assert result == {"stdout": f"{fixture_workspace}\nno-stdin\n", "stderr": "oops\n", "exit_code": 3}


def test_bash_caps_output_visibly(fixture_workspace, make_ctx):
    small = make_ctx(fixture_workspace, limits=Limits(tool_result=100))
    result = shell.bash(small, command="yes | head -c 5000")
    assert result["stdout"].startswith("y\ny\n")
    assert result["stdout"].endswith("\n... [truncated 4900 more bytes; narrow your query]")


def test_bash_returns_when_a_background_child_keeps_the_pipe(ctx):
    import time
    started = time.monotonic()
    result = shell.bash(ctx, command="sleep 30 & echo started")
    assert result == {"stdout": "started\n", "stderr": "", "exit_code": 0}
    assert time.monotonic() - started < 5


def test_bash_rejects_bad_arguments(ctx):
    with pytest.raises(ValueError):
        shell.bash(ctx, command=" ")
    with pytest.raises(ValueError):
        shell.bash(ctx, command="true", timeout=0)


# ---------------------------------------------------------------------------------------------------------- sql
def test_sql_printf_and_format_answer_as_sqlite_does(ctx):
    """printf and format are SQLite's own (the run's deadline kills the worker that runs them, whatever their
    width): SQLite's answers, and NULL for a ``%c`` repeated past the length limit (a quarter of the memory limit)."""
    import sqlite3

    calls = ["printf('%05d-%s', 7, 'x')", "printf('%.3c', 'y')", "printf('%*.*c', 3, 5, 'z')", "printf('%%%5.2f', 3.14159)",
             "format('%-6s|%q|%Q', 'ab', 'it''s', NULL)", "printf('%!.*c', 4, 'é')", "printf('%,d', 1234567)",
             "printf(NULL)", "printf()", "printf(12)", "printf('%s %s', 'only one')",
             "format('%d %lld %x %o %e %g', 1, 2, 255, 8, 1.5, 0.25)", "printf('%w %z', 'a''b', 'c')"]
    query = "SELECT " + ", ".join(f"{call} AS c{i}" for i, call in enumerate(calls))
    (row,) = sql_mod.sql(ctx, query=query)
    assert list(row.values()) == list(sqlite3.connect(":memory:").execute(query).fetchone())
    assert sql_mod.sql(ctx, query="SELECT printf('%.*c', 200000000, 'x') AS v") == [{"v": None}]


def test_sql_statements_and_rows(ctx, fixture_workspace):
    assert sql_mod.sql(ctx, query="SELECT 1 AS one, 'a;b' AS text; -- a comment") == [{"one": 1, "text": "a;b"}]
    assert sql_mod.sql(ctx, query="CREATE TABLE t(x)") == []
    query = ("CREATE TABLE IF NOT EXISTS kv(k TEXT, v INTEGER); INSERT INTO kv VALUES ('a', 1), ('b', 2);"
             "SELECT a.k, b.k FROM kv a JOIN kv b ON a.v = b.v ORDER BY a.k")
    (fixture_workspace / "data").mkdir()
    assert sql_mod.sql(ctx, query=query, db="data/app.db") == [{"k": "a", "k_2": "a"}, {"k": "b", "k_2": "b"}]
    assert sql_mod.sql(ctx, query="SELECT count(*) AS n FROM kv", db="data/app.db") == [{"n": 2}]


@pytest.mark.usefixtures("fixture_workspace")
def test_sql_errors(ctx):
    with pytest.raises(ToolError, match='SQL error: near "SELEC": syntax error'):
        sql_mod.sql(ctx, query="SELEC 1")
    with pytest.raises(FileNotFoundError, match="its folder does not exist"):
        sql_mod.sql(ctx, query="SELECT 1", db="nowhere/x.db")
    with pytest.raises(ToolError, match="file is not a database"):
        sql_mod.sql(ctx, query="SELECT * FROM sqlite_master", db="README.md")
    with pytest.raises(ValueError):
        sql_mod.sql(ctx, query="  -- nothing  ")


def test_sql_splits_statements_as_sqlite_completes_them():
    split = sql_mod.split_statements
    assert split("SELECT 'a;b'; SELECT [c;d] -- e;f\n; SELECT 2") == [
        "SELECT 'a;b';", " SELECT [c;d] -- e;f\n;", " SELECT 2;"]  # the last one given its ;
    trigger = "CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; SELECT CASE WHEN 1 THEN 2 END; END /* c */ ;"
    assert split(trigger + " SELECT 3;") == [trigger, " SELECT 3;"]
    assert split("SELECT '" + ";" * 200_000) == ["SELECT '" + ";" * 200_000]  # unfinished: one pass
    assert split(" ;; -- y;") == []


def test_sql_splitting_stops_at_the_run_deadline():
    from codeact.core.limits import Deadline
    from codeact.errors import ToolTimeout

    spent = Deadline(0.01)
    import time
    time.sleep(0.02)
    body = "SELECT CASE WHEN 1 THEN 2 END;" * 10  # each END; may end the trigger: SQLite is asked
    with pytest.raises(ToolTimeout, match="while splitting the query into statements"):
        sql_mod.split_statements("CREATE TRIGGER t AFTER INSERT ON a BEGIN " + body, spent)


def test_sql_runaway_query_stops_at_the_time_limit(fixture_workspace, make_ctx):
    import time
    quick = make_ctx(fixture_workspace, limits=Limits(timeout=0.5))
    started = time.monotonic()
    from codeact.errors import ToolTimeout
    with pytest.raises(ToolTimeout, match="time limit"):  # the program sees it as a TimeoutError
        sql_mod.sql(quick, query="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                                 "SELECT count(*) FROM c")
    assert time.monotonic() - started < 3


def test_sql_result_cap_is_visible(fixture_workspace, make_ctx):
    small = make_ctx(fixture_workspace, limits=Limits(tool_result=1000))
    collector = notices.Notes()
    previous = collector.activate()
    try:
        rows = sql_mod.sql(small, query="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000) "
                                        "SELECT x FROM c")
    finally:
        notices.restore(previous)
    assert rows == [{"x": n} for n in range(1, len(rows) + 1)] and len(rows) < 200  # rows only: the cut is a note
    assert collector.items == [f"sql(): returned {len(rows)} of 1,000 rows (the 1,000-byte tool-result limit); add "
                               "LIMIT/OFFSET to page, select fewer columns, or aggregate in SQL (COUNT, GROUP BY)"]


# ---------------------------------------------------------- issue 13: valid programs run, invalid ones told the truth
def _monty(run_program, backend_name):
    if backend_name != "monty":
        pytest.skip("the rewrite and the type check belong to the monty backend")
    return run_program


@pytest.mark.parametrize("code, expected", [
    ('d = {"a": 1, "b": 3}\nmax(d, key=d.get)', "b"),
    ('from collections import Counter\ncounter = Counter("abbccc")\nsorted(counter, key=counter.get)', ["a", "b", "c"]),
    ('s = "abc"\nf = s.upper\nf()', "ABC"),
    ('d = {"a": 1}\nf = d.get\nd = {}\nf("a")', 1),  # the receiver is bound when the method is taken
    ('s = "é"; f = s.upper\nf()', "É"),  # offsets in bytes, not characters
    ('type = "shadowed"\nd = {"a": 2, "b": 1}\nmin(d, key=d.get)', "b"),  # `type` rebound: isinstance guard
    ('from dataclasses import dataclass\n@dataclass\nclass P:\n    get: int\np = P(get=4)\np.get + 1', 5),
    ('import re\nre.search(r"(o+)", "foo").group(1)', "oo"),
    ('words = ["b", "A", "c"]\nsorted(words, key=str.lower)', ["A", "b", "c"]),
])
def test_idioms_models_use_run(run_program, backend_name, code, expected):
    result = _monty(run_program, backend_name)(code)
    assert result.ok, result.error
    assert result.result == expected and result.notes == []


def test_the_rewrite_keeps_every_line_where_it_was():
    from codeact.core.rewrite import bind_methods

    code = 'd = {}\nf = (d\n     .get)\nkeys = sorted(d, key=d.get)  # comment\nx = [s.upper for s in ["a"]]\n'
    new = bind_methods(code)
    assert new != code and len(new.splitlines()) == len(code.splitlines())
    assert new.splitlines()[1:3] == code.splitlines()[1:3]  # `d\n.get` across lines: left alone
    assert new.splitlines()[3].endswith("(d))  # comment")
    assert bind_methods('print("no methods taken")\n') == 'print("no methods taken")\n'
    import sys

    newer = 'x = f"{d["a"]}"; g = d.get\n'  # PEP 701: a host older than 3.12 cannot parse it, and leaves it
    assert (bind_methods(newer) == newer) == (sys.version_info < (3, 12))


def test_a_failing_glob_call_fails_on_the_programs_line_under_its_own_name(run_program, backend_name):
    result = _monty(run_program, backend_name)('x = 1\nglob(pattern="*", path="no-such-folder")')
    assert not result.ok and result.error.line == 2 and "__codeact" not in result.error.message
    assert "__codeact" not in (result.error.hint or "")


def test_errors_after_a_rewrite_report_the_programs_own_lines(run_program, backend_name):
    result = _monty(run_program, backend_name)('d = {"a": 1}\nf = d.get\nx = f("a")\ny = f()\n')
    assert (result.error.type, result.error.line) == ("TypeError", 4)


def test_newer_syntax_runs_though_the_host_cannot_parse_it(run_program, backend_name):
    """PEP 701 f-strings parse in the sandbox; a host older than 3.12 cannot rewrite such a program, so a bound
    method taken as a value there fails with the hint that fixes it."""
    import sys

    run = _monty(run_program, backend_name)
    assert run('h = {"p": "x"}\nf"{h["p"]}"').result == "x"
    result = run('h = {"p": "x"}\nf = h.get\nf"{h["p"]}{f("p")}"')
    if sys.version_info >= (3, 12):
        assert result.ok and result.result == "xx"
        return
    assert (result.error.type, result.error.line) == ("AttributeError", 2) and "lambda" in result.error.hint
    fixed = run('h = {"p": "x"}\nf = lambda k: h.get(k)\nf"{h["p"]}{f("p")}"')
    assert fixed.ok and fixed.result == "xx"


def test_an_unclosed_paren_is_reported_as_python_does(run_program, backend_name):
    result = _monty(run_program, backend_name)('n = len(\nprint(n)\n')
    assert (result.error.type, result.error.line) == ("SyntaxError", 1)
    assert result.error.message.startswith("'(' was never closed")
    assert "positional" not in result.error.message and not result.error.hint


def test_a_positional_tool_call_is_shown_rewritten(run_program, backend_name):
    result = _monty(run_program, backend_name)('x = 1\nview("README.md", [1, 2])\n')
    assert result.error.line == 2 and result.tool_calls == []
    assert result.error.hint == 'Tools take keyword arguments only: write view(path="README.md", view_range=[1, 2])'


def test_a_wrong_key_on_a_tools_result_lists_its_keys(run_program, backend_name):
    result = _monty(run_program, backend_name)('[h["file"] for h in grep(pattern="TODO")]')
    assert result.error.type == "KeyError"
    assert result.error.hint == "No key 'file' in the tool results: grep() gives 'path', 'line', 'text'."


@pytest.mark.parametrize("module, instead", [("subprocess", "bash(command="),
                                             ("ast", "outline"), ("enum", "constants")])
def test_a_missing_module_says_what_to_use_instead(run_program, backend_name, module, instead):
    result = _monty(run_program, backend_name)(f"import {module}\n")
    assert result.error.type == "ModuleNotFoundError" and instead in result.error.hint


def test_exception_attributes_the_subset_lacks_name_the_replacement(run_program, backend_name):
    code = 'import json\ntry:\n    json.loads("{")\nexcept json.JSONDecodeError as e:\n    m = {}\n    m["x"] = e.msg\n'
    result = _monty(run_program, backend_name)(code)
    assert (result.error.type, result.error.line) == ("AttributeError", 6)
    assert "str(e)" in result.error.hint
    fixed = _monty(run_program, backend_name)(code.replace("e.msg", "str(e)") + 'm["x"]')
    assert fixed.ok and fixed.result.startswith("Expecting")


def _server_tool(calls: list) -> Tool:  # noqa: F821 - imported below, where it is used
    from codeact.core.tool import Tool

    def lookup(**kwargs):
        calls.append(kwargs)
        return {"id": kwargs["id"], "title": "First"}

    return Tool(name="tracker.lookup", description="look up an issue", source="mcp", returns="dict",
                parameters={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
                call=lookup)


@pytest.mark.parametrize("call, hint", [
    ("tracker.lokup(id=1)", "Did you mean tracker.lookup()?"),
    ("tracker.lookup(1)", "write tracker.lookup(id=1)"),
    ("tracker.lookup(key=1)", "Call it as tracker.lookup(id: int) -> dict."),
    ('tracker.lookup(id="1")', "Call it as tracker.lookup(id: int) -> dict."),
])
def test_a_bad_mcp_tool_call_is_refused_before_any_tool_runs(run_program, backend_name, call, hint):
    calls: list = []
    tools = {"tracker.lookup": _server_tool(calls)}
    ok = _monty(run_program, backend_name)('tracker.lookup(id=1)["title"]', tools=tools)
    assert ok.ok and ok.result == "First" and calls == [{"id": 1}]
    calls.clear()
    bad = run_program(f'tracker.lookup(id=2)\n{call}\n', tools=tools)
    assert (bad.error.type, bad.error.line) == ("TypeError", 2) and hint in bad.error.hint
    assert calls == [] and bad.tool_calls == []


def test_tools_run_inside_key_functions_and_other_objects_keep_their_sort(run_program, backend_name, fixture_workspace):
    run = _monty(run_program, backend_name)
    readme = len((fixture_workspace / "README.md").read_text())
    result = run('ps = glob(pattern="src/*.py")\n'
                 'a = sorted(ps, key=lambda p: -len(view(path=p)))\n'
                 'def size(p):\n    return len(view(path=p))\n'
                 'ps.sort(key=size, reverse=True)\n'
                 'class Box:\n    def __init__(self):\n        self.seen = []\n'
                 '    def sort(self, key=None):\n        self.seen.append(key("ab"))\n'
                 'b = Box()\nb.sort(key=lambda s: len(view(path="README.md")) + len(s))\n'
                 '(a, ps, b.seen, max(ps, key=size), list(map(size, ps)) == [size(p) for p in ps])')
    assert result.ok, result.error
    sizes = {p: len((fixture_workspace / p).read_text()) for p in ("src/app.py", "src/utils.py")}
    by_size = sorted(sizes, key=lambda p: -sizes[p])
    assert result.result == (by_size, by_size, [readme + 2], by_size[0], True)


def test_a_builtin_the_program_rebinds_is_not_replaced():
    from codeact.core.rewrite import rewrite

    code = 'def sorted(xs, key=None):\n    return list(xs)\nsorted([2, 1], key=lambda x: view(path="a"))\n'
    assert rewrite(code) == code
    assert rewrite('sorted([2, 1], key=lambda x: x)\n').startswith("codeact_sorted(")
    assert rewrite('sorted([2, 1], key=len)\n') == 'sorted([2, 1], key=len)\n'  # a built-in key needs nothing


# ------------------------------------------------- issue 40 items 3 and 6: host-side helpers stay inside and bounded
def _outside_and_link(fixture_workspace):
    outside = fixture_workspace.parent / "outside"
    (outside / "private").mkdir(parents=True)
    (outside / "private" / "secret-name.txt").write_text("x")
    (fixture_workspace / "out").symlink_to(outside)
    return outside


def test_glob_module_never_walks_outside_the_workspace(run_program, backend_name, fixture_workspace):
    _outside_and_link(fixture_workspace)
    ws = fixture_workspace.name
    climbs = [f"../outside/*/../../{ws}/README.md", "../outside/*", f"src/../../{ws}/README.md", "../*",
              f"../nonexistent/*/../../{ws}/README.md", "/etc/*", "**/../../*"]
    code = ("import glob\nseen = []\nfor p in " + repr(climbs) + ":\n    try:\n        seen.append(glob.glob(p, "
            "recursive=True))\n    except PermissionError as e:\n        seen.append(str(e).replace(repr(p), 'P'))\n"
            "seen")
    result = _monty(run_program, backend_name)(code)
    assert result.ok, result.error
    assert all(isinstance(s, str) and "out of the workspace" in s or "outside the workspace" in s
               for s in result.result), result.result
    # an existing outside folder and a missing one are refused alike: the text of the pattern decides
    assert result.result[0] == result.result[4]
    assert not any("secret" in str(n) or "private" in str(n) for n in (result.result, result.notes, result.stdout))


def test_glob_module_lists_a_link_out_by_name_and_never_follows_it(run_program, backend_name, fixture_workspace):
    _outside_and_link(fixture_workspace)
    result = _monty(run_program, backend_name)(
        'import glob\n(sorted(glob.glob("*")), glob.glob("out/*"), glob.glob("out/**", recursive=True), '
        'glob.glob("*/", recursive=True), [p for p in glob.glob("**/*", recursive=True) if "secret" in p])')
    assert result.ok, result.error
    top, inside, deep, folders, secret = result.result
    # 'out/' alone, as CPython gives for any name before '/**' (glob.glob("nonexistent/**") too)
    assert "out" in top and inside == [] and deep == ["out/"] and "out/" not in folders and secret == []
    assert not any("left out" in n or "outside" in n for n in result.notes)


def test_glob_module_gives_cpythons_answer_inside(run_program, backend_name, fixture_workspace):
    import glob as cpython

    patterns = ["*", "**/*.py", "src/*", "src/**", "*/", "./src/*.py", "src/../*.md", "[rs]*", ".*"]
    code = "import glob\n[glob.glob(p, recursive=True) for p in " + repr(patterns) + "]"
    result = _monty(run_program, backend_name)(code)
    assert result.ok, result.error
    assert result.result == [cpython.glob(p, root_dir=fixture_workspace, recursive=True) for p in patterns]


@pytest.mark.parametrize("call", ["statistics.quantiles([1, 2, 3], n=10**9)",
                                  "textwrap.indent('a\\n' * 1000, 'x' * 10**6)"])
def test_host_module_calls_that_would_outgrow_the_run_are_refused_before_they_start(run_program, backend_name, call):
    import time

    started = time.monotonic()
    module = call.split(".")[0]
    result = _monty(run_program, backend_name)(f"import {module}\ntry:\n    {call}\nexcept MemoryError as e:\n"
                                               "    r = str(e)\nr")
    assert result.ok, result.error
    assert "memory limit" in result.result and time.monotonic() - started < 10


def test_a_slow_host_module_call_stops_at_the_runs_deadline(run_program, backend_name):
    from codeact.core.limits import Limits

    started = __import__("time").monotonic()
    code = ("import difflib\na = [str(i % 97) * 40 for i in range(40000)]\nb = [str(i % 89) * 40 for i in "
            "range(40000)]\nlen(difflib.ndiff(a, b))")
    result = _monty(run_program, backend_name)(code, limits=Limits(timeout=3))
    assert not result.ok and result.error.type in ("TimeoutError", "LimitExceeded"), result.error
    assert __import__("time").monotonic() - started < 20


def test_an_error_inside_a_prelude_helper_reports_the_programs_line(run_program, backend_name):
    result = _monty(run_program, backend_name)('import heapq\nh = []\nx = 1\nheapq.heappop(h)\n')
    assert (result.error.type, result.error.line) == ("IndexError", 4), result.error
