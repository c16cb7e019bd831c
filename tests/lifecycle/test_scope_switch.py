"""A scope switch removes every file and link of the old scope (issue 41, item 2): the after-update migration used
to give the old scope's files back as "the user's", and `$COPILOT_HOME` kept links to a launcher that was gone."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, git, make_repo

ANSWERS = ".copier-answers.codeact.yml"


@pytest.fixture(autouse=True)
def _env(venv_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **GIT_ENV})


def test_repo_to_plugin_leaves_nothing_of_the_repo_scope(template_src, tmp_path):
    project = make_repo(tmp_path / "p")
    assert run(project, "copier", "copy", "--trust", "--defaults", "--skip-tasks", str(template_src), ".").returncode == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    done = run(project, "copier", "update", "-a", ANSWERS, "--trust", "--defaults", "--skip-tasks",
               "-d", "scope=plugin", "-d", "plugin_owner=acme")
    assert done.returncode == 0, done.stderr
    assert "codeact: kept .github/agents" not in done.stderr
    for gone in (".github/agents/codeact.agent.md", ".github/hooks/codeact.json", ".codeact/bin/codeact",
                 ".github/skills/codeact/SKILL.md", ".github/instructions/codeact.instructions.md"):
        assert not (project / gone).exists(), gone
    assert (project / "plugins/codeact/bin/codeact").is_file()
    assert (project / ".github/instructions/codeact.local.instructions.md").is_file(), "the seeded file is yours"
    git(project, "add", "-A")
    git(project, "commit", "-qm", "plugin")
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / "plugins/codeact/runtime")}
    drift = subprocess.run([sys.executable, "-m", "codeact", "drift", "--json"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=300)
    assert json.loads(drift.stdout)["drift"] == [], drift.stdout + drift.stderr


def test_global_to_repo_removes_the_links(template_src, tmp_path):
    home = tmp_path / "copilot-home"
    install = make_repo(tmp_path / "dotfiles")
    done = run(install, "copier", "copy", "--trust", "--defaults", "-d", "scope=global", str(template_src), ".")
    assert done.returncode == 0, done.stderr
    assert (home / "agents/codeact.agent.md").is_symlink()
    git(install, "add", "-A")
    git(install, "commit", "-qm", "global")
    done = run(install, "copier", "update", "-a", ANSWERS, "--trust", "--defaults", "--skip-tasks", "-d", "scope=repo")
    assert done.returncode == 0, done.stderr
    leftovers = [p for p in home.rglob("*") if p.is_symlink()]
    assert leftovers == [], leftovers
    assert not (install / "agents/codeact.agent.md").exists()
