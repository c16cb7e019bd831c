"""`codeact drift` and `codeact uninstall` on real stamped repositories."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, git

TOOLS = ["view", "create", "edit", "glob", "grep"]


def codeact(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / ".codeact/runtime")}
    return subprocess.run([sys.executable, "-m", "codeact", *args], cwd=project, capture_output=True, text=True,
                          env=env, timeout=120)


def status(project: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True).stdout


@pytest.fixture
def project(stamp, tmp_path):
    path = stamp(tmp_path / "p", tools=TOOLS, precommit_hook=True)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "codeact")
    return path


def test_clean_repo_is_in_sync_and_the_tree_is_untouched(project):
    result = codeact(project, "drift")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "in sync" in result.stdout
    assert status(project) == ""


def test_each_drift_kind_is_reported_with_exit_1(project):
    (project / ".github/agents/codeact.agent.md").write_text("hand edit\n")
    (project / ".codeact/bin/codeact.ps1").unlink()
    settings = project / ".codeact/settings.json"
    settings.write_text("<<<<<<< before updating\n" + settings.read_text() + "=======\n>>>>>>> after updating\n")
    (project / ".github/skills/codeact/SKILL.md.rej").write_text("@@ rejected hunk\n")
    before = status(project)
    result = codeact(project, "drift", "--json")
    assert result.returncode == 1, result.stderr
    found = {(d["kind"], d["path"]) for d in json.loads(result.stdout)["drift"]}
    assert ("edited", ".github/agents/codeact.agent.md") in found
    assert ("deleted", ".codeact/bin/codeact.ps1") in found
    assert ("conflict", ".codeact/settings.json") in found
    assert ("rejected", ".github/skills/codeact/SKILL.md.rej") in found
    assert status(project) == before, "drift must never modify the working tree"
    text = codeact(project, "drift")
    assert text.returncode == 1 and "edited" in text.stdout and "codeact.agent.md" in text.stdout


def test_seeded_files_are_never_drift(project):
    (project / ".github/instructions/codeact.local.instructions.md").write_text("---\napplyTo: '**'\n---\nOurs.\n")
    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    result = codeact(project, "drift")
    assert result.returncode == 0, result.stdout


def test_unmerged_paths_are_drift(project):
    target = ".codeact/settings.json"
    git(project, "checkout", "-q", "-b", "other")
    (project / target).write_text('{"backend": "monty"}\n')
    git(project, "commit", "-qam", "other")
    git(project, "checkout", "-q", "main")
    (project / target).write_text('{"backend": "hyperlight"}\n')
    git(project, "commit", "-qam", "main")
    subprocess.run(["git", "merge", "other"], cwd=project, capture_output=True)
    result = codeact(project, "drift", "--json")
    kinds = {(d["kind"], d["path"]) for d in json.loads(result.stdout)["drift"]}
    assert result.returncode == 1 and ("unmerged", target) in kinds


def test_uninstall_removes_owned_files_and_keeps_seeded_ones(project):
    local = project / ".github/instructions/codeact.local.instructions.md"
    result = codeact(project, "uninstall")
    assert result.returncode == 0, result.stderr
    assert "removed .codeact/" in result.stdout and "kept your own files" in result.stdout
    assert local.exists() and (project / ".pre-commit-config.yaml").exists()
    lines = [line for line in status(project).splitlines() if line[3:] != ".pre-commit-config.yaml"]
    deleted = {line[3:] for line in lines}
    assert all(line.startswith(" D ") for line in lines)
    assert "codeact-drift" not in (project / ".pre-commit-config.yaml").read_text(), "its hook ran the launcher"
    tracked_before = subprocess.run(["git", "ls-files"], cwd=project, capture_output=True, text=True).stdout.split()
    expected = {p for p in tracked_before if p.startswith(".codeact/") or p in {
        ".copier-answers.codeact.yml", ".github/agents/codeact.agent.md", ".github/hooks/codeact.json",
        ".github/instructions/codeact.instructions.md", ".github/workflows/codeact-drift.yml"}
        or p.startswith(".github/skills/codeact")}
    assert deleted == expected
    assert not (project / ".github/skills").exists(), "empty folders the template made are tidied"


def test_uninstall_all_removes_seeded_files_too(project):
    assert codeact(project, "uninstall", "--all").returncode == 0
    assert not (project / ".github/instructions/codeact.local.instructions.md").exists()
    assert not (project / ".pre-commit-config.yaml").exists()
    remaining = subprocess.run(["git", "ls-files"], cwd=project, capture_output=True, text=True).stdout.split()
    assert {p for p in remaining if (project / p).exists()} == {"README.md"}


OWN_PRECOMMIT = "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks: [{id: black}]\n"


def tracked(project: Path) -> set[str]:
    return set(subprocess.run(["git", "ls-files"], cwd=project, capture_output=True, text=True).stdout.split())


@pytest.mark.parametrize("precommit_hook", [False, True])
@pytest.mark.parametrize("manifest", ["manifest", "stamped before the manifest"])
def test_uninstall_all_keeps_files_the_repository_already_had(stamp, tmp_path, precommit_hook, manifest):
    """The red team's case: a repository with its own .pre-commit-config.yaml (and its own codeact-drift.yml
    workflow), stamped with precommit_hook and drift_workflow off (or on: Copier then skips the existing file)."""
    own = {"README.md": "# demo\n", ".pre-commit-config.yaml": OWN_PRECOMMIT,
           ".github/workflows/codeact-drift.yml": "name: ours\non: push\njobs: {}\n"}
    project = stamp(tmp_path / "own", tools=TOOLS, files=own, precommit_hook=precommit_hook, drift_workflow=False)
    if manifest != "manifest":
        (project / ".codeact/manifest.json").unlink()
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "codeact")
    plain = codeact(project, "uninstall", "--dry-run")
    assert plain.returncode == 0, plain.stderr
    assert ".pre-commit-config.yaml" not in plain.stdout, "never called one of the user's stamped files"
    assert "kept your own files" in plain.stdout and "codeact.local.instructions.md" in plain.stdout
    result = codeact(project, "uninstall", "--all")
    assert result.returncode == 0, result.stderr
    assert (project / ".pre-commit-config.yaml").read_text() == OWN_PRECOMMIT
    assert not (project / ".github/instructions/codeact.local.instructions.md").exists(), "seeded by the stamp"
    assert not (project / ".codeact").exists()
    if manifest == "manifest":  # the layout alone owns codeact-drift.yml; the manifest knows this stamp did not
        assert (project / ".github/workflows/codeact-drift.yml").read_text().startswith("name: ours")
    remaining = {p for p in tracked(project) if (project / p).exists()}
    assert {"README.md", ".pre-commit-config.yaml"} <= remaining
    assert not {p for p in remaining if p.startswith(".codeact/") or "codeact.instructions" in p}


def test_uninstall_removes_exactly_the_manifests_files(project):
    manifest = json.loads((project / ".codeact/manifest.json").read_text())
    assert manifest["format"] == 1 and manifest["scope"] == "repo"
    assert ".pre-commit-config.yaml" in manifest["seeded"] and ".codeact/" in manifest["owned"]
    (project / ".github/skills/codeact-notes").mkdir(parents=True)
    (project / ".github/skills/codeact-notes/SKILL.md").write_text("ours\n")  # beside owned ones, not owned
    dry = codeact(project, "uninstall", "--all", "--dry-run")
    listed = {line.removeprefix("would remove ") for line in dry.stdout.splitlines() if line.startswith("would")}
    assert listed == {p for p in manifest["owned"] + manifest["seeded"] if (project / p.rstrip("/")).exists()}
    assert codeact(project, "uninstall", "--all").returncode == 0
    assert (project / ".github/skills/codeact-notes/SKILL.md").read_text() == "ours\n"


def test_copier_update_writes_and_keeps_the_manifest_current(tmp_path, venv_dir):
    """An install stamped before the manifest existed gets one from `copier update`, and a changed answer changes
    it, without a conflict."""
    from tests.conftest import GIT_ENV, make_repo, snapshot_template

    template = snapshot_template(tmp_path / "template", tag="v0.1.0")
    (template / "template/.codeact/manifest.json.jinja").unlink()
    git(template, "commit", "-qam", "an older version, without the manifest")
    git(template, "tag", "v0.0.8")
    env = {**os.environ, **GIT_ENV, "CODEACT_VENV": str(venv_dir), "COPILOT_HOME": str(tmp_path / "copilot")}

    def copier(*args: str) -> None:
        done = subprocess.run(["copier", *args], cwd=project, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr

    project = make_repo(tmp_path / "p")
    copier("copy", "--trust", "--defaults", "--skip-tasks", "--vcs-ref", "v0.0.8", "-d", f"tools={json.dumps(TOOLS)}",
           str(template), ".")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact v0.0.8")
    assert not (project / ".codeact/manifest.json").exists()
    copier("update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults", "--skip-tasks")
    first = json.loads((project / ".codeact/manifest.json").read_text())
    assert ".github/workflows/codeact-drift.yml" in first["owned"] and ".pre-commit-config.yaml" not in first["seeded"]
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact v0.1.0")
    copier("update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults", "--skip-tasks",
           "-d", "drift_workflow=false", "-d", "precommit_hook=true")
    text = (project / ".codeact/manifest.json").read_text()
    assert "<<<<<<<" not in text and not list(project.rglob("*.rej"))
    second = json.loads(text)
    assert ".github/workflows/codeact-drift.yml" not in second["owned"]
    assert ".pre-commit-config.yaml" in second["seeded"]


def test_layout_matches_copier_config():
    import yaml

    sys.path.insert(0, str(REPO_ROOT / "runtime"))
    from codeact import layout

    config = yaml.safe_load((REPO_ROOT / "copier.yml").read_text())
    assert set(config["_skip_if_exists"]) == set(layout.SEEDED_ANY)
    assert set(layout.LAYOUTS["repo"].seeded) <= set(layout.SEEDED_ANY)
    assert config["_answers_file"] == layout.ANSWERS_FILE


def test_drift_into_a_closed_pipe_ends_without_a_traceback(project, venv_dir):
    """`codeact drift --json | head`: the reader leaves before drift writes (issue 27)."""
    (project / ".github/agents/codeact.agent.md").write_text("hand edit\n")
    env = {**os.environ, "CODEACT_VENV": str(venv_dir)}
    proc = subprocess.Popen([str(project / ".codeact/bin/codeact"), "drift", "--json"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 1, err  # the exit code still says "drift"
    assert "Traceback" not in err and "BrokenPipe" not in err, err
