"""Shared fixtures: a git-tagged copy of this template, stamping with the real Copier, one shared runtime venv."""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# Launchers run in-process in the suite, as CODEACT_SERVER=0 makes them: one warm server per stamped repository
# would leave hundreds of servers behind. tests/server/ runs the warm path on purpose, through the launcher.
os.environ.setdefault("CODEACT_SERVER", "0")
os.environ.setdefault("CODEACT_SERVER_IDLE", "30")  # a server a test starts anyway goes soon after it
TEMPLATE_VERSION = "v0.1.0"
# One venv for every launcher test, keyed by requirements hash inside; reused across runs (CI caches it).
VENV_CACHE = Path(os.environ.get("CODEACT_TEST_VENV_DIR", REPO_ROOT / ".ci-cache" / "venvs"))

GIT_ENV = {
    "GIT_AUTHOR_NAME": "codeact-tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "codeact-tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd,
                          env=env, check=True, capture_output=True, text=True).stdout


def snapshot_template(dest: Path, tag: str = TEMPLATE_VERSION) -> Path:
    """Copy the working tree of this repository (tracked and untracked, not ignored) into a fresh git repo, tagged."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = REPO_ROOT / rel
        if not src.exists() or src.is_dir():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "template snapshot")
    git(dest, "tag", tag)
    return dest


@pytest.fixture(scope="session")
def template_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding this template's current working tree, tagged ``v0.1.0``."""
    return snapshot_template(tmp_path_factory.mktemp("template"))


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository at ``path`` with ``files`` committed."""
    path.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or {"README.md": "# demo\n"}).items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def stamp(template_src: Path, tmp_path: Path) -> Callable[..., Path]:
    """``stamp(dest=None, tasks=False, files=None, **answers)``: run the real ``copier copy`` into a git repo."""
    from copier import run_copy
    from plumbum import local

    def _stamp(dest: Path | None = None, *, tasks: bool = False, files: dict[str, str] | None = None,
               **answers: Any) -> Path:
        dest = dest or tmp_path / "project"
        if not (dest / ".git").exists():
            make_repo(dest, files)
        # Copier runs its tasks with plumbum's environment, a copy of os.environ taken when plumbum was first
        # imported: without this, a test's monkeypatch.setenv (CODEACT_VENV, COPILOT_HOME) never reaches the copy
        # task, which then installs a venv inside the stamp (~40 s) and reads the real user's MCP config.
        with local.env():
            local.env.clear()
            local.env.update(os.environ)
            run_copy(str(template_src), dest, data=answers, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True,
                     skip_tasks=not tasks, overwrite=True)
        return dest

    return _stamp


@pytest.fixture(scope="session")
def venv_dir() -> Path:
    """The shared CODEACT_VENV folder for launcher tests."""
    VENV_CACHE.mkdir(parents=True, exist_ok=True)
    return VENV_CACHE


# The everyday subset (`pytest -m "not slow"`): what stamps with the real Copier, builds or uses the stamped
# runtime's venv, drives the real Copilot CLI or SDK, or starts a warm server is slow by what it needs, so it is
# marked here once instead of test by test. CI runs everything.
SLOW_FIXTURES = frozenset({"stamp", "stamped", "stamp_shared", "template_src", "venv_dir", "copilot_bin",
                           "copilot_sdk", "installs", "stamped_installs"})
SLOW_FOLDERS = frozenset({"benchmarks", "copilot", "sdk", "server", "lifecycle", "scopes"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(str(item.fspath)).relative_to(REPO_ROOT / "tests").parts[0]
        if folder in SLOW_FOLDERS or SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
