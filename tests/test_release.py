"""A release is a tag made by .ci/release from what the repository says (CONTRIBUTING.md, "Releases")."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git

REPO = Path(__file__).resolve().parents[1]
FILES = ("pyproject.toml", "runtime/codeact/__init__.py", "CHANGELOG.md", ".ci/release")


def test_the_versions_agree() -> None:
    pyproject = re.search(r'^version = "(.+)"$', (REPO / "pyproject.toml").read_text(), re.M)
    runtime = re.search(r'^__version__ = "(.+)"$', (REPO / "runtime/codeact/__init__.py").read_text(), re.M)
    changelog = re.findall(r"^## \[(\d[^]]*)\]", (REPO / "CHANGELOG.md").read_text(), re.M)
    assert pyproject and runtime and changelog
    assert pyproject[1] == runtime[1] == changelog[0], "bump pyproject.toml, __version__ and CHANGELOG.md together"


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tmp_path / name)
    version = re.search(r'^version = "(.+)"$', (tmp_path / "pyproject.toml").read_text(), re.M)[1]  # type: ignore[index]
    log = tmp_path / "CHANGELOG.md"
    log.write_text(re.sub(rf"^## \[{re.escape(version)}\] - .*$", f"## [{version}] - 2027-01-04", log.read_text(),
                          count=1, flags=re.M))
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "release")
    return tmp_path


def _release(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(repo / ".ci/release"), *args], cwd=repo, capture_output=True, text=True)


def _version(repo: Path) -> str:
    return re.search(r'^version = "(.+)"$', (repo / "pyproject.toml").read_text(), re.M)[1]  # type: ignore[index]


def test_a_dated_release_is_tagged_once(clone: Path) -> None:
    version = _version(clone)
    assert _release(clone, "--check", version).returncode == 0
    done = _release(clone, version)
    assert done.returncode == 0, done.stderr
    assert git(clone, "tag", "--list").split() == [f"v{version}"]
    assert git(clone, "cat-file", "-t", f"v{version}").strip() == "tag"  # annotated: git describe and Copier see it
    again = _release(clone, version)
    assert again.returncode == 1 and "exists already" in again.stderr


@pytest.mark.parametrize("other, said", [("9.9.9", "pyproject.toml's version is not 9.9.9"),
                                         ("v1.0", "VERSION must be X.Y.Z")])
def test_a_version_the_files_do_not_name_is_refused(clone: Path, other: str, said: str) -> None:
    done = _release(clone, other)
    assert done.returncode == 1 and said in done.stderr
    assert git(clone, "tag", "--list") == ""


def test_an_undated_changelog_and_a_dirty_tree_are_refused(clone: Path) -> None:
    version = _version(clone)
    log = clone / "CHANGELOG.md"
    log.write_text(log.read_text().replace(f"## [{version}] - 2027-01-04", f"## [{version}] - unreleased"))
    assert "CHANGELOG.md has no" in _release(clone, "--check", version).stderr
    log.write_text(log.read_text().replace(f"## [{version}] - unreleased", f"## [{version}] - 2027-01-04") + "x\n")
    done = _release(clone, version)
    assert done.returncode == 1 and "not clean" in done.stderr
