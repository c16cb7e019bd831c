"""Tracked files that a .gitignore rule matches are not hidden (issue 42 item 4): git never ignores a tracked file,
so glob, grep and outline list them, with git itself as the oracle (``git ls-files --cached --others
--exclude-standard``), through both search engines, on ripgrep's and git's edge cases: negations, nested .gitignore,
info/exclude, a tracked file in an ignored folder, zod's ``**/package.json``, and a submodule with its own rules."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codeact.tools import search
from codeact.tools.search import ripgrep

FILES = {
    ".gitignore": "**/package.json\nbuild/\n*.log\n!keep.log\n/top-only.txt\ndocs/*.md\n!docs/README.md\n",
    "package.json": "{}  # marker\n",
    "packages/zod/package.json": "{}  # marker\n",
    "packages/zod/src/index.ts": "export const marker = 1;\n",
    "build/generated.py": "def marker():\n    return 1\n",
    "build/untracked.py": "marker = 2\n",
    "app.log": "marker\n",
    "keep.log": "marker\n",
    "top-only.txt": "marker\n",
    "sub/top-only.txt": "marker\n",
    "docs/guide.md": "marker\n",
    "docs/README.md": "marker\n",
    "nested/.gitignore": "*.txt\n!important.txt\n",
    "nested/a.txt": "marker\n",
    "nested/important.txt": "marker\n",
    "nested/b.txt": "marker\n",
    "excluded.tmp": "marker\n",
    "plain.py": "def marker():\n    return 3\n",
}
TRACKED = ["package.json", "packages/zod/package.json", "build/generated.py", "app.log", "nested/a.txt",
           "excluded.tmp", "docs/guide.md", "plain.py", ".gitignore", "nested/.gitignore", "keep.log",
           "sub/top-only.txt", "packages/zod/src/index.ts", "docs/README.md", "nested/important.txt"]
SUB_FILES = {".gitignore": "*.gen\n", "lib.gen": "marker\n", "lib.c": "marker\n", "fresh.gen": "marker\n"}
SUB_TRACKED = [".gitignore", "lib.gen", "lib.c"]


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / ".nocfg")}
    done = subprocess.run(["git", "-c", "protocol.file.allow=always", *args], cwd=cwd, check=True,
                          capture_output=True, env=env)
    return done.stdout.decode()


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("tracked")
    sub = base / "subrepo"
    sub.mkdir()
    _git(sub, "init", "-q")
    _write(sub, SUB_FILES)
    _git(sub, "add", "-f", *SUB_TRACKED)
    _git(sub, "commit", "-qm", "sub")
    root = (base / "repo").resolve()
    root.mkdir()
    _git(root, "init", "-q")
    _write(root, FILES)
    (root / ".git" / "info" / "exclude").write_text("*.tmp\n")
    _git(root, "add", "-f", *TRACKED)
    _git(root, "submodule", "add", "-q", str(sub), "vendor/sub")
    _git(root, "commit", "-qm", "init")
    (root / "vendor/sub/fresh.gen").write_text("marker\n")  # untracked in the submodule: its rule hides it
    return root


def _oracle(root: Path) -> list[str]:
    """What git lists as not ignored, the submodule's own files included, with its own rules."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    found = {p for p in listed if p and (root / p).is_file()}
    sub = root / "vendor/sub"
    found |= {"vendor/sub/" + p for p in _git(sub, "ls-files", "-z", "--cached", "--others",
                                                 "--exclude-standard").split("\0") if p}
    found |= {".gitmodules"}
    return sorted(found)


@pytest.fixture(params=["ripgrep", "python"], autouse=True)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(ripgrep, "_rg_cache", None)
    elif search.rg_binary() is None:
        pytest.skip("ripgrep is not installed")
    return str(request.param)


def test_glob_lists_what_git_does_not_ignore(repo, make_ctx):
    expected = _oracle(repo)
    assert "packages/zod/package.json" in expected and "vendor/sub/lib.gen" in expected  # the cases at stake
    assert "build/untracked.py" not in expected and "vendor/sub/fresh.gen" not in expected
    assert search.glob(make_ctx(repo), pattern="*") == expected


@pytest.mark.parametrize("pattern", ["package.json", "*.json", "**/package.json", "packages/**/package.json",
                                     "build/*.py", "*.log", "nested/*.txt", "*.gen", "docs/*.md"])
def test_each_glob_agrees_with_git(repo, make_ctx, pattern):
    from codeact.tools.search.walk import Glob

    plan = Glob(pattern)
    lead = "".join(d + "/" for d in plan.dirs)
    expected = [p for p in _oracle(repo) if p.startswith(lead) and plan.matches(p[len(lead):])]
    assert search.glob(make_ctx(repo), pattern=pattern) == expected


def test_grep_searches_what_git_does_not_ignore(repo, make_ctx):
    expected = [p for p in _oracle(repo) if "marker" in (repo / p).read_text()]
    hits = search.grep(make_ctx(repo), pattern="marker")
    assert sorted({h["path"] for h in hits}) == expected
    # a folder named as the path is searched though ignored (its own files listed once); one named in the
    # pattern is not walked: only its tracked files
    inside = search.grep(make_ctx(repo), pattern="marker", path="build")
    assert [h["path"] for h in inside] == ["build/generated.py", "build/untracked.py"]
    assert search.glob(make_ctx(repo), pattern="*", path="build") == ["build/generated.py", "build/untracked.py"]
    assert search.glob(make_ctx(repo), pattern="build/**") == ["build/generated.py"]
    assert [h["path"] for h in search.grep(make_ctx(repo), pattern="marker", glob="build/*.py")] == [
        "build/generated.py"]


def test_grep_counts_the_tracked_files_in_its_total(repo, make_ctx):
    from codeact.core import notices

    collector = notices.Notes()
    previous = collector.activate()
    try:
        hits = search.grep(make_ctx(repo), pattern="marker", max_results=1)
    finally:
        notices.restore(previous)
    assert len(hits) == 1
    total = len(search.grep(make_ctx(repo), pattern="marker"))
    assert any(f"of {total:,} matching lines" in note for note in collector.items), collector.items


def test_outline_reads_a_tracked_file_in_an_ignored_folder(repo, make_ctx):
    from codeact.tools.outline import outline

    assert {i["path"] for i in outline(make_ctx(repo), glob="*.py")} >= {"build/generated.py", "plain.py"}


def test_glob_asks_git_while_ripgrep_lists(repo, make_ctx, monkeypatch, engine):
    """glob puts its question to git before ripgrep starts listing, so the two run side by side instead of git's
    wait following the listing; the answer is the same, and no git is left running."""
    from codeact.tools import proc

    if engine == "python":
        pytest.skip("the Python walk starts no process to run beside")
    started: list[tuple[str, proc.Child]] = []
    real = proc.Child.start.__func__

    def recording(cls, cmd, *args, **kwargs):
        child = real(cls, cmd, *args, **kwargs)
        started.append((Path(cmd[0]).name, child))
        return child

    monkeypatch.setattr(proc.Child, "start", classmethod(recording))
    expected = _oracle(repo)
    assert search.glob(make_ctx(repo), pattern="*") == expected
    names = [name for name, _ in started]
    assert names.index("git") < names.index("rg"), names
    assert all(child.proc.poll() is not None for _, child in started)


def test_an_ignore_file_is_read_up_to_its_first_mib_and_the_cut_is_noted(tmp_path):
    """The rules are parsed in this process with the interpreter held, and a program may write 128 MiB: only the
    first MiB (whole lines) is read, and the model is told which file was cut and how large it is."""
    from codeact.core import notices
    from codeact.tools.search import walk

    root = tmp_path.resolve()
    line = "generated/file-" + "x" * 50 + "\n"
    (root / ".gitignore").write_text(line * (2 * walk.MAX_IGNORE_BYTES // len(line)) + "last.txt\n")
    size = (root / ".gitignore").stat().st_size
    notes = notices.Notes()
    previous = notes.activate()
    try:
        text = walk.read_ignore_file(root / ".gitignore", root)
    finally:
        notices.restore(previous)
    assert text is not None and len(text.encode()) <= walk.MAX_IGNORE_BYTES and text.endswith(line)
    assert "last.txt" not in text
    assert notes.items == [f".gitignore holds {size:,} bytes: only its first 1 MiB (whole lines) were read; its rules "
                           "past that are not applied by the searches' own checks (ripgrep still reads them all)"]
    (root / "small").write_text("a\n")
    assert walk.read_ignore(root / "small", root) == walk.IgnoreText("a\n", 0)


def test_gitmodules_paths_are_bounded_walked_below_the_root_and_stop_at_the_deadline(tmp_path):
    from codeact.core import notices
    from codeact.core.limits import Deadline
    from codeact.tools.search import tracked

    root = tmp_path.resolve()
    (root / "one/two").mkdir(parents=True)
    (root / "afile").write_text("x")
    (root / "out").symlink_to(tmp_path.parent)
    entries = ["one/two", "one/two/", "one", "missing/x", "afile", "afile/x", "out", "out/x", "../x", "/abs", "a/./b",
               "a" * (tracked.MAX_SUBMODULE_PATH + 1)]
    (root / ".gitmodules").write_text("".join(f'[submodule "{i}"]\n\tpath = {p}\n' for i, p in enumerate(entries)))
    notes = notices.Notes()
    previous = notes.activate()
    try:
        assert tracked._submodules(root, Deadline(30)) == ["one/two", "one"]
        (root / ".gitmodules").write_text("".join(f"\tpath = d{i}\n" for i in range(tracked.MAX_SUBMODULES + 5)))
        for i in range(tracked.MAX_SUBMODULES + 5):
            (root / f"d{i}").mkdir()
        assert len(tracked._submodules(root, Deadline(30))) == tracked.MAX_SUBMODULES
        assert tracked._submodules(root, Deadline(0)) == []  # past the deadline: nothing checked
    finally:
        notices.restore(previous)
    assert [n.split(" are not searched")[0] for n in notes.items] == [
        ".gitmodules: 1 path(s) longer than 4,096 bytes", ".gitmodules: more than 1,000 submodule paths: those past them",
        ".gitmodules: the run's deadline came while its submodule paths were checked: those not checked"]
