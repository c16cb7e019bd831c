"""Helpers for the lifecycle tests: a template repository made of two versions of this one, and the oldest Copier."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from copier import run_copy

from tests.conftest import REPO_ROOT, git, make_repo

MIN_COPIER = str(yaml.safe_load((REPO_ROOT / "copier.yml").read_text())["_min_copier_version"])
# .ci/run installs Copier MIN_COPIER (with copier-template-extensions) into .ci-cache/copier-MIN and exports this.
MIN_COPIER_BIN = os.environ.get("CODEACT_COPIER_MIN", str(REPO_ROOT / ".ci-cache" / f"copier-{MIN_COPIER}" / "bin"
                                                          / "copier"))


@pytest.fixture(scope="session")
def min_copier() -> str:
    """The ``copier`` command of the declared ``_min_copier_version`` (skips when it is not installed)."""
    exe = Path(MIN_COPIER_BIN)
    if not exe.is_file():
        pytest.skip(f"Copier {MIN_COPIER} is not installed at {exe} (CODEACT_COPIER_MIN); .ci/run installs it")
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout
    if MIN_COPIER not in version:
        pytest.skip(f"{exe} is not Copier {MIN_COPIER}: {version.strip()}")
    return str(exe)


@pytest.fixture
def stamped(template_src: Path, tmp_path: Path, venv_dir: Path, monkeypatch) -> Path:
    """A repository stamped with this template (the real Copier, defaults) and committed; the tests' venv as
    its runtime's (``CODEACT_VENV``)."""
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    project = make_repo(tmp_path / "project")
    run_copy(str(template_src), project, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    return project


def copy_working_tree(dest: Path) -> None:
    """This repository's working tree (tracked and untracked, not ignored) into ``dest``, links as links."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = REPO_ROOT / rel
        if src.is_symlink() or src.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                target.symlink_to(os.readlink(src))
            else:
                target.write_bytes(src.read_bytes())
                target.chmod(src.stat().st_mode & 0o777)


def history_template(dest: Path, commit: str) -> Path:
    """A template repository: ``commit`` of this repository tagged v0.0.1, this working tree on top tagged v0.1.0."""
    found = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=REPO_ROOT, capture_output=True)
    if found.returncode != 0:
        pytest.skip(f"commit {commit} is not in this clone's history (a shallow clone?); `git fetch --unshallow`")
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPO_ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", f"template at {commit}")
    git(dest, "tag", "v0.0.1")
    git(dest, "rm", "-rq", ".")
    copy_working_tree(dest)
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "this working tree")
    git(dest, "tag", "v0.1.0")
    return dest
