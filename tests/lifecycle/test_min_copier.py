"""Copy + update with exactly the declared `_min_copier_version` (the newest is what every other test uses)."""
from __future__ import annotations

import os
import subprocess

import yaml

from tests.conftest import GIT_ENV, git, make_repo, snapshot_template


def test_copy_and_update_with_the_declared_minimum(min_copier, tmp_path, venv_dir):
    template = snapshot_template(tmp_path / "t", tag="v0.1.0")
    agent = template / "template/{{ agents_dir }}/codeact.agent.md.jinja"
    agent.write_text(agent.read_text().replace("You are the CodeAct agent.", "You were the CodeAct agent."))
    git(template, "commit", "-qam", "older")
    git(template, "tag", "v0.0.9")
    project = make_repo(tmp_path / "p")
    env = {**os.environ, **GIT_ENV, "CODEACT_VENV": str(venv_dir)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([min_copier, *args], cwd=project, capture_output=True, text=True, env=env,
                              timeout=300)

    copied = run("copy", "--trust", "--defaults", "--skip-tasks", "--vcs-ref", "v0.0.9", "-d", "precommit_hook=true",
                 str(template), ".")
    assert copied.returncode == 0, copied.stderr
    assert (project / ".copier-answers.codeact.yml").is_file() and not (project / ".copier-answers.yml").exists()
    git(project, "add", "-A")
    git(project, "commit", "-qm", "stamp")
    updated = run("update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults", "--skip-tasks",
                  "-d", "precommit_hook=false")
    assert updated.returncode == 0, updated.stderr
    assert yaml.safe_load((project / ".copier-answers.codeact.yml").read_text())["_commit"] == "v0.1.0"
    assert "You are the CodeAct agent." in (project / ".github/agents/codeact.agent.md").read_text()
    assert (project / ".pre-commit-config.yaml").exists(), "no update deletes a seeded file, on this Copier too"
