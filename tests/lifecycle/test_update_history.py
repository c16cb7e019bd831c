"""`copier update` from earlier versions of this template (its own git history) to this working tree (issue 27).

Copier deletes every file the old version rendered and the new one does not, edited or not: versions before the
install manifest rendered the seeded `codeact.local.instructions.md` into the copy an update diffs, so an update
from them deleted the user's file. No update may delete or change a file the template does not own, and the
report lists every file the update deleted.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, git, make_repo
from tests.lifecycle.conftest import history_template

ANSWERS = ".copier-answers.codeact.yml"
LEGACY_ANSWERS = ".codeact/.copier-answers.yml"  # where these versions recorded them
LOCAL = ".github/instructions/codeact.local.instructions.md"
PRECOMMIT = ".pre-commit-config.yaml"
# Earlier versions that stamp: before the MCP exclusions moved (52ea148), the last before the manifest (15e63a6),
# the manifest (88fd933), seeded files kept out of the update's copies (5954520).
VERSIONS = ("52ea148", "15e63a6", "88fd933", "5954520")


def copier(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["copier", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, timeout=300)


@pytest.fixture(autouse=True)
def _env(venv_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))


def deleted_in_report(stderr: str) -> list[str]:
    lines = stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Deleted by the update (")), None)
    if start is None:
        return []
    listed = []
    for line in lines[start + 1:]:
        if not line.startswith("    "):
            break
        listed.append(line.strip())
    return listed


@pytest.mark.parametrize("commit", VERSIONS)
def test_update_from_an_earlier_version_keeps_edited_seeded_files_and_lists_deletions(commit, tmp_path):
    template = history_template(tmp_path / "template", commit)
    project = make_repo(tmp_path / "p")
    stamped = copier(project, "copy", "--trust", "--defaults", "--skip-tasks", "--vcs-ref", "v0.0.1",
                     "-d", "precommit_hook=true", str(template), ".")
    assert stamped.returncode == 0, stamped.stderr
    for rel in (LOCAL, PRECOMMIT):
        assert (project / rel).is_file(), f"{commit} seeds {rel}"
        (project / rel).write_text((project / rel).read_text() + "# the team's own line\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", f"codeact at {commit}, seeded files edited")

    # Switching the hook off: the old version rendered .pre-commit-config.yaml into its copy, the new one does not.
    # The command these versions documented: the update moves the answers file to the root.
    result = copier(project, "update", "-a", LEGACY_ANSWERS, "--trust", "--defaults", "--skip-tasks",
                    "-d", "precommit_hook=false")
    assert result.returncode == 0, result.stderr
    for rel in (LOCAL, PRECOMMIT):
        assert (project / rel).is_file() and (project / rel).read_text().endswith("# the team's own line\n"), \
            f"the update from {commit} deleted or changed {rel}"
    assert (project / ANSWERS).is_file() and "_commit: v0.1.0" in (project / ANSWERS).read_text()
    status = git(project, "status", "--porcelain").splitlines()
    assert not [line for line in status if line[3:] in (LOCAL, PRECOMMIT)]
    deleted = sorted(line[3:] for line in status if "D" in line[:2])
    assert deleted_in_report(result.stderr) == deleted, result.stderr
    assert "No conflicts left" in result.stderr

    git(project, "add", "-A")
    git(project, "commit", "-qm", "update")
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    drift = subprocess.run([sys.executable, "-m", "codeact", "drift", "--json"], cwd=project, capture_output=True,
                           text=True, env=env, timeout=300)
    assert (drift.returncode, json.loads(drift.stdout)["drift"]) == (0, []), drift.stdout + drift.stderr
