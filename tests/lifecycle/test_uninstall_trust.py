"""`codeact uninstall` trusts no manifest: it removes only what the recorded template version renders (issue 26).

A hostile repository, or a merged pull request, can list anything in ``.codeact/manifest.json``; uninstall checks
each entry against the scope's layout, never goes near ``.git`` or out of the install through a link, keeps the
user's untracked files inside the install's folders unless ``--force``, and leaves no empty folder behind.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git

TOOLS = ["view", "create", "edit", "glob", "grep"]
USER_FILES = {"src/app.py": "print('the code')\n", "docs/guide.md": "# guide\n",
              ".github/workflows/ci.yml": "name: ci\non: push\njobs: {}\n"}


def codeact(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(project / ".codeact/runtime"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "codeact", *args], cwd=project, capture_output=True, text=True,
                          env=environ, timeout=300)


def commits(project: Path) -> int:
    return int(git(project, "rev-list", "--count", "HEAD").strip())


@pytest.fixture
def project(stamp, tmp_path: Path) -> Path:
    path = stamp(tmp_path / "p", tools=TOOLS, precommit_hook=True,
                 files={"README.md": "# demo\n", **USER_FILES})
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "codeact")
    return path


def test_a_hostile_manifest_cannot_make_uninstall_delete_history_or_code(project):
    manifest = json.loads((project / ".codeact/manifest.json").read_text())
    manifest["owned"] += [".git/", "src/", "README.md", ".github/workflows/ci.yml", ".GIT/config"]
    manifest["seeded"] += ["docs/", ".git/hooks/"]
    (project / ".codeact/manifest.json").write_text(json.dumps(manifest))
    git(project, "commit", "-qam", "a merged pull request")
    history = commits(project)

    dry = codeact(project, "uninstall", "--all", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    listed = {line.removeprefix("would remove ") for line in dry.stdout.splitlines() if line.startswith("would ")}
    assert ".codeact/" in listed and not listed & {".git/", "src/", "README.md", "docs/", ".github/workflows/ci.yml"}
    for entry in (".git/", "src/", "README.md", "docs/", ".github/workflows/ci.yml"):
        assert f"warning: left alone: the manifest lists {entry}," in dry.stderr, dry.stderr

    done = codeact(project, "uninstall", "--all")
    assert done.returncode == 0, done.stderr
    assert "left alone: the manifest lists .git/" in done.stderr
    assert commits(project) == history and git(project, "status", "--porcelain")  # history kept; the tree changed
    for rel, text in {"README.md": "# demo\n", **USER_FILES}.items():
        assert (project / rel).read_text() == text, rel
    assert not (project / ".codeact").exists() and not (project / ".github/agents").exists()


def test_uninstall_never_follows_a_link_out_of_the_install(project, tmp_path):
    """`.github/skills` made a link to a folder elsewhere: `skills/codeact/` there is not the install's."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "codeact").mkdir(parents=True)
    (elsewhere / "codeact/important.md").write_text("not the template's\n")
    subprocess.run(["rm", "-rf", str(project / ".github/skills")], check=True)
    (project / ".github/skills").symlink_to(elsewhere, target_is_directory=True)
    done = codeact(project, "uninstall")
    assert done.returncode == 0, done.stderr
    assert (elsewhere / "codeact/important.md").read_text() == "not the template's\n"
    assert "left alone: .github/skills/codeact/ lies outside the install" in done.stderr, done.stderr


def test_uninstall_keeps_your_untracked_files_inside_the_install_unless_forced(project):
    mine = {".codeact/notes.md": "my notes\n", ".codeact/tools/mine.py": "def mine(): ...\n",
            ".github/skills/codeact/references/ours.md": "ours\n"}
    for rel, text in mine.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    (project / ".codeact/cache").mkdir(exist_ok=True)
    (project / ".codeact/cache/probe.json").write_text("{}")  # machine-local, ignored: the install's
    dry = codeact(project, "uninstall", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    kept_line = next(line for line in dry.stdout.splitlines() if line.startswith("kept files of yours"))
    assert all(rel in kept_line for rel in mine) and "--force" in kept_line, dry.stdout

    done = codeact(project, "uninstall")
    assert done.returncode == 0, done.stderr
    for rel, text in mine.items():
        assert (project / rel).read_text() == text, rel
    assert not (project / ".codeact/bin").exists() and not (project / ".codeact/runtime").exists()
    assert not (project / ".codeact/cache").exists() and not (project / ".github/skills/codeact/SKILL.md").exists()
    assert sorted(p.relative_to(project).as_posix() for p in (project / ".codeact").rglob("*") if p.is_file()) == \
        sorted(rel for rel in mine if rel.startswith(".codeact/"))

    forced = codeact(project, "uninstall", "--force", env={"PYTHONPATH": str(Path(__file__).parents[2] / "runtime")})
    assert forced.returncode == 0, forced.stderr
    assert not (project / ".codeact").exists() and not (project / ".github/skills").exists()


def test_uninstall_of_an_uncommitted_stamp_tells_the_template_files_from_yours(stamp, tmp_path):
    """Nothing is tracked yet: what the recorded template version renders is recomputed (Copier renders it)."""
    project = stamp(tmp_path / "fresh", tools=TOOLS)
    (project / ".codeact/notes.md").write_text("my notes\n")
    done = codeact(project, "uninstall", env={"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    assert (project / ".codeact/notes.md").read_text() == "my notes\n"
    assert [p.name for p in (project / ".codeact").iterdir()] == ["notes.md"]
    assert "kept files of yours" in done.stdout and ".codeact/notes.md" in done.stdout


def test_a_global_uninstall_leaves_no_empty_folders(stamp, tmp_path):
    project = stamp(tmp_path / "dotfiles", scope="global", precommit_hook=True)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    home = tmp_path / "copilot-home"
    (home / "agents").mkdir(parents=True)
    (home / "agents/mine.agent.md").write_text("my own agent\n")
    env = {"COPILOT_HOME": str(home)}
    linked = codeact(project, "link", env=env)
    assert linked.returncode == 0, linked.stderr
    assert (home / "hooks/codeact.json").is_symlink()
    done = codeact(project, "uninstall", "--all", env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == ["agents", "agents/mine.agent.md"]
    left = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if ".git" not in p.parts)
    assert left == ["README.md"], left


def test_without_copier_an_uncommitted_stamp_is_kept_and_said_so(stamp, tmp_path):
    project = stamp(tmp_path / "fresh", tools=TOOLS)
    done = codeact(project, "uninstall", env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "could not be recomputed: `copier` is not on PATH; --force removes them too" in done.stdout, done.stdout
    assert (project / ".codeact/bin/codeact").exists()
    assert not (project / ".github/agents/codeact.agent.md").exists()  # whole files the layout names still go
