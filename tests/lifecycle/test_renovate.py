"""Renovate's copier manager and the stamped update workflow, run as they really run, on stamps that record their
answers at the root and on stamps from before the move (``.codeact/.copier-answers.yml``), with the newest Copier
and the declared minimum (issue 41, item 1).

Renovate (lib/modules/manager/copier/artifacts.ts, since 38.33.1, unchanged at its 2026-08 head) runs, with
``cwdFile: packageFileName``, in the answers file's folder:
    copier update --skip-answered --defaults --trust --answers-file <basename> --vcs-ref <new>
and keeps the result only when ``git status`` shows the answers file it named as MODIFIED; it then commits every
modified, added, deleted and renamed file.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import GIT_ENV, git, make_repo
from tests.lifecycle.conftest import history_template

ANSWERS = ".copier-answers.codeact.yml"
LEGACY = ".codeact/.copier-answers.yml"
LOCK = ".codeact/tools.lock.json"
LEGACY_COMMIT = "a5b01d1"  # the last version of this template that recorded its answers in .codeact/


@pytest.fixture(autouse=True)
def _env(venv_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))


@pytest.fixture(params=["newest", "minimum"])
def copier_bin(request) -> str:
    return "copier" if request.param == "newest" else request.getfixturevalue("min_copier")


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """v0.0.1: the legacy layout; v0.1.0: this working tree; v0.2.0: the same with a changed agent text."""
    dest = history_template(tmp_path_factory.mktemp("renovate") / "template", LEGACY_COMMIT)
    agent = dest / "template/{{ agents_dir }}/codeact.agent.md.jinja"
    agent.write_text(agent.read_text() + "\nRelease two.\n")
    git(dest, "commit", "-qam", "release two")
    git(dest, "tag", "v0.2.0")
    return dest


def run(cwd: Path, command: list[str] | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, shell=isinstance(command, str),
                          env={**os.environ, **GIT_ENV}, timeout=600)


def stamp(project: Path, template: Path, version: str, copier: str = "copier") -> Path:
    make_repo(project)
    done = run(project, [copier, "copy", "--trust", "--defaults", "--skip-tasks", "--vcs-ref", version,
                         "-d", "update_workflow=true", "-d", "precommit_hook=true", str(template), "."])
    assert done.returncode == 0, done.stderr
    git(project, "add", "-A")
    git(project, "commit", "-qm", f"codeact {version}")
    return project


def renovate(project: Path, answers: str, new: str, copier: str = "copier") -> list[str]:
    """Renovate's copier manager for the answers file ``answers``; the files it would commit (and commits them)."""
    folder = (project / answers).parent
    command = (f"{copier} update --skip-answered --defaults --trust --answers-file "
               f"{shlex.quote(Path(answers).name)} --vcs-ref {shlex.quote(new)}")
    done = run(folder, command)
    assert done.returncode == 0, done.stdout + done.stderr
    status = git(project, "status", "--porcelain", "--untracked-files=all").splitlines()
    modified = [line[3:] for line in status if "M" in line[:2]]
    assert answers in modified, f"Renovate would drop this update: {answers} is not modified ({status})"
    git(project, "add", "-A")
    git(project, "commit", "-qm", f"chore(deps): update {answers} to {new}")
    return [line[3:] for line in status]


def workflow_update(project: Path, copier: str = "copier") -> None:
    """The stamped update workflow's steps (its own `copier update` line, then `git add -A` and commit)."""
    workflow = yaml.safe_load((project / ".github/workflows/codeact-update.yml").read_text())
    steps = workflow["jobs"]["update"]["steps"]
    script = next(s["run"] for s in steps if s.get("name") == "Update from the template")
    line = next(x.strip() for x in script.splitlines() if x.strip().startswith("copier update"))
    done = run(project, copier + line[len("copier"):])
    assert done.returncode == 0, done.stdout + done.stderr
    if git(project, "status", "--porcelain"):
        git(project, "add", "-A")
        git(project, "commit", "-qm", "chore: update codeact from its template")


def drift(project: Path) -> list[dict[str, str]]:
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    done = subprocess.run([sys.executable, "-m", "codeact", "drift", "--json"], cwd=project, capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return list(json.loads(done.stdout)["drift"])


def tree(project: Path) -> dict[str, str]:
    """Every tracked file's path, mode and content hash."""
    listed = git(project, "ls-files", "-s").splitlines()
    return {line.split("\t", 1)[1]: line.split()[0] + " " + hashlib.sha256(
        (project / line.split("\t", 1)[1]).read_bytes()).hexdigest()[:12] for line in listed}


def test_renovate_updates_a_legacy_stamp_from_inside_codeact(template, tmp_path, copier_bin):
    project = stamp(tmp_path / "p", template, "v0.0.1", copier_bin)
    assert (project / LEGACY).is_file() and not (project / ANSWERS).exists()
    committed = renovate(project, LEGACY, "v0.1.0", copier_bin)
    assert ANSWERS in committed and not any(p.startswith((".codeact/.codeact/", ".codeact/.github/")) for p in committed)
    assert yaml.safe_load((project / ANSWERS).read_text())["_commit"] == "v0.1.0"
    assert yaml.safe_load((project / LEGACY).read_text()) is None, "the old file is no answers file any more"
    assert drift(project) == []
    # A fresh stamp of the same version holds the same files (and the moved answers).
    fresh = stamp(tmp_path / "fresh", template, "v0.1.0", copier_bin)
    mine, theirs = tree(project), tree(fresh)
    skip = (ANSWERS, LEGACY, LOCK)  # the lock: written by the update's refresh, not by a copy without tasks
    assert {k: v for k, v in mine.items() if k not in skip} == {k: v for k, v in theirs.items() if k not in skip}
    # Renovate's next update finds the root file and runs from the root; the old file goes.
    committed = renovate(project, ANSWERS, "v0.2.0", copier_bin)
    assert LEGACY in committed and not (project / LEGACY).exists()
    assert "Release two." in (project / ".github/agents/codeact.agent.md").read_text()
    assert drift(project) == []


def test_the_documented_command_of_a_legacy_stamp_moves_the_answers(template, tmp_path, copier_bin):
    project = stamp(tmp_path / "p", template, "v0.0.1", copier_bin)
    done = run(project, [copier_bin, "update", "-a", LEGACY, "--trust", "--defaults", "--vcs-ref", "v0.1.0"])
    assert done.returncode == 0, done.stderr
    assert f"moved the answers from {LEGACY} to {ANSWERS}" in done.stderr
    assert yaml.safe_load((project / ANSWERS).read_text())["_commit"] == "v0.1.0"
    git(project, "add", "-A")
    git(project, "commit", "-qm", "update")
    assert drift(project) == []
    done = run(project, [copier_bin, "update", "-a", ANSWERS, "--trust", "--defaults"])
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load((project / ANSWERS).read_text())["_commit"] == "v0.2.0"
    assert not (project / LEGACY).exists()


def test_fleet_renovate_and_the_update_workflow_converge(template, tmp_path):
    """Four repositories, legacy and current stamps, updated by Renovate's form and by the stamped workflow's own
    steps, twice: each ends identical to the others and in sync."""
    fleet = {
        "legacy-renovate": (stamp(tmp_path / "a", template, "v0.0.1"), "renovate"),
        "legacy-workflow": (stamp(tmp_path / "b", template, "v0.0.1"), "workflow"),
        "current-renovate": (stamp(tmp_path / "c", template, "v0.1.0"), "renovate"),
        "current-workflow": (stamp(tmp_path / "d", template, "v0.1.0"), "workflow"),
    }
    for project, how in fleet.values():
        if how == "renovate":
            renovate(project, LEGACY if (project / LEGACY).is_file() else ANSWERS, "v0.2.0")
        else:
            workflow_update(project)
    trees = {name: {k: v for k, v in tree(project).items() if k != LEGACY} for name, (project, _) in fleet.items()}
    first = trees["current-workflow"]
    for name, files in trees.items():
        assert files == first, f"{name} differs: {set(files.items()) ^ set(first.items())}"
    for name, (project, _) in fleet.items():
        assert yaml.safe_load((project / ANSWERS).read_text())["_commit"] == "v0.2.0", name
        assert drift(project) == [], name
