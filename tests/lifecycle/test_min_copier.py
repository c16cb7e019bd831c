"""Copy + update with exactly the declared `_min_copier_version` (the newest is what every other test uses)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import GIT_ENV, REPO_ROOT, git, make_repo, snapshot_template

MIN = str(yaml.safe_load((REPO_ROOT / "copier.yml").read_text())["_min_copier_version"])
VENV = REPO_ROOT / ".ci-cache" / f"copier-{MIN}"


@pytest.fixture(scope="module")
def old_copier() -> Path:
    """Copier ``MIN`` in its own venv, made once and kept under .ci-cache/ (skips when it cannot be made)."""
    exe = VENV / "bin" / "copier"
    if not exe.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(VENV)], capture_output=True, text=True)
        pip = subprocess.run([str(VENV / "bin" / "python"), "-m", "pip", "install", "-q", f"copier=={MIN}",
                              "copier-template-extensions==0.3.4"], capture_output=True, text=True) \
            if made.returncode == 0 else made
        if pip.returncode != 0 or not exe.exists():
            pytest.skip(f"cannot make a venv with copier=={MIN}: {(pip.stderr or '').strip()[-300:]}")
    return exe


def test_copy_and_update_with_the_declared_minimum(old_copier, tmp_path, venv_dir):
    version = subprocess.run([str(old_copier), "--version"], capture_output=True, text=True).stdout
    assert MIN in version, version
    template = snapshot_template(tmp_path / "t", tag="v0.1.0")
    agent = template / "template/{{ agents_dir }}/codeact.agent.md.jinja"
    agent.write_text(agent.read_text().replace("You are the CodeAct agent.", "You were the CodeAct agent."))
    git(template, "commit", "-qam", "older")
    git(template, "tag", "v0.0.9")
    project = make_repo(tmp_path / "p")
    env = {**os.environ, **GIT_ENV, "CODEACT_VENV": str(venv_dir)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(old_copier), *args], cwd=project, capture_output=True, text=True, env=env,
                              timeout=300)

    copied = run("copy", "--trust", "--defaults", "--skip-tasks", "--vcs-ref", "v0.0.9", "-d", "precommit_hook=true",
                 str(template), ".")
    assert copied.returncode == 0, copied.stderr
    assert (project / ".codeact/.copier-answers.yml").is_file() and not (project / ".copier-answers.yml").exists()
    git(project, "add", "-A")
    git(project, "commit", "-qm", "stamp")
    updated = run("update", "-a", ".codeact/.copier-answers.yml", "--trust", "--defaults", "--skip-tasks",
                  "-d", "precommit_hook=false")
    assert updated.returncode == 0, updated.stderr
    assert yaml.safe_load((project / ".codeact/.copier-answers.yml").read_text())["_commit"] == "v0.1.0"
    assert "You are the CodeAct agent." in (project / ".github/agents/codeact.agent.md").read_text()
    assert (project / ".pre-commit-config.yaml").exists(), "no update deletes a seeded file, on this Copier too"
