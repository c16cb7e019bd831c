"""What goes wrong around an update, and what the user is told (issue 41, items 5-9): an update cut short, a
read-only owned folder, the pre-commit hook offline and after uninstall, fixes that can be pasted, a seeded file
that an old update deleted."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, git, make_repo, snapshot_template

ANSWERS = ".copier-answers.codeact.yml"
LOCAL = ".github/instructions/codeact.local.instructions.md"


@pytest.fixture(autouse=True)
def _env(venv_dir, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    monkeypatch.delenv("CI", raising=False)


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **GIT_ENV, **(env or {})})


def codeact(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run(project, sys.executable, "-m", "codeact", *args,
               env={"PYTHONPATH": str(project / ".codeact/runtime"), **(env or {})})


def stamped(tmp_path: Path, template: Path, *extra: str) -> Path:
    project = make_repo(tmp_path / "p")
    done = run(project, "copier", "copy", "--trust", "--defaults", "--skip-tasks", *extra, str(template), ".")
    assert done.returncode == 0, done.stderr
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    return project


def test_an_update_cut_short_is_reported_with_its_recovery(tmp_path):
    template = snapshot_template(tmp_path / "t", tag="v0.1.0")
    project = stamped(tmp_path, template)
    agent = template / "template/{{ agents_dir }}/codeact.agent.md.jinja"
    agent.write_text(agent.read_text() + "\n{{ 1 // 0 }}\n")  # the render dies half-way through the project
    git(template, "commit", "-qam", "broken release")
    git(template, "tag", "v0.2.0")
    done = run(project, "copier", "update", "-a", ANSWERS, "--trust", "--defaults", "--skip-tasks")
    assert done.returncode != 0
    launcher = run(project, str(project / ".codeact/bin/codeact"), "run", "--code", "print(1)")
    assert launcher.returncode == 2 and "did not finish" in launcher.stderr, launcher.stderr
    recover = next(line.strip() for line in launcher.stderr.splitlines() if "git restore" in line)
    recover = recover.removeprefix("codeact:").strip()
    drift = json.loads(codeact(project, "drift", "--json").stdout)["drift"]
    assert [d["kind"] for d in drift] == ["interrupted"] and "git restore --source=HEAD" in drift[0]["detail"]
    # The printed recovery, without its last step (the update to the broken release again).
    assert run(project, "sh", "-c", recover.rsplit(" && copier update", 1)[0]).returncode == 0
    assert git(project, "status", "--porcelain") == ""
    assert json.loads(codeact(project, "drift", "--json").stdout)["drift"] == []


def test_a_read_only_owned_folder_stops_the_update_before_it_writes(template_src, tmp_path):
    project = stamped(tmp_path, template_src)
    skill = project / ".github/skills/codeact"
    mode = skill.stat().st_mode
    skill.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        as_user: list[str] = []
        if os.access(skill, os.W_OK):  # root: the update runs without the capability that ignores a folder's mode
            setpriv = shutil.which("setpriv")
            if os.geteuid() != 0 or setpriv is None:
                pytest.skip("this user writes read-only folders, and setpriv (util-linux) cannot drop that right")
            as_user = [setpriv, "--bounding-set=-dac_override"]
        done = run(project, *as_user, "copier", "update", "-a", ANSWERS, "--trust", "--defaults", "--skip-tasks")
        assert done.returncode != 0 and ".github/skills/codeact/" in done.stderr and "chmod u+w" in done.stderr
        assert git(project, "status", "--porcelain") == ""
    finally:
        skill.chmod(mode)


def test_uninstall_takes_only_codeacts_hook_out_of_the_precommit_config(template_src, tmp_path):
    project = stamped(tmp_path, template_src, "-d", "precommit_hook=true")
    config = project / ".pre-commit-config.yaml"
    config.write_text(config.read_text() + "  - repo: https://github.com/psf/black\n    rev: 24.1.0\n"
                      "    hooks: [{id: black}]\n")
    git(project, "commit", "-qam", "the team's own hook")
    done = codeact(project, "uninstall")
    assert done.returncode == 0, done.stderr
    text = config.read_text()
    assert "codeact-drift" not in text and "id: black" in text and "psf/black" in text
    assert "removed the codeact-drift hook" in done.stderr


def test_drift_offline_skips_an_unreachable_template_with_one_line(tmp_path):
    template = snapshot_template(tmp_path / "t", tag="v0.1.0")
    project = stamped(tmp_path, template)
    shutil.move(str(template), str(tmp_path / "gone"))
    done = codeact(project, "drift", "--offline")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in done.stderr.splitlines() if "skipped the owned files" in line]
    in_ci = codeact(project, "drift", "--offline", env={"CI": "true"})
    assert in_ci.returncode != 0 and "cannot read the template" in in_ci.stdout + in_ci.stderr


def test_printed_fixes_can_be_pasted(template_src, tmp_path):
    project = stamped(tmp_path, template_src)
    (project / ".codeact/notes.txt").write_text("mine\n")
    drift = json.loads(codeact(project, "drift", "--json").stdout)["drift"]
    extra = next(d for d in drift if d["kind"] == "extra")
    command = extra["detail"].split("(`", 1)[1].split("`)", 1)[0]
    assert command == "rm -- .codeact/notes.txt"
    assert run(project, "sh", "-c", command).returncode == 0 and not (project / ".codeact/notes.txt").exists()


def test_a_seeded_file_an_update_deleted_can_be_got_back(template_src, tmp_path):
    project = stamped(tmp_path, template_src)
    (project / LOCAL).write_text("the team's rules\n")
    git(project, "commit", "-qam", "our rules")
    git(project, "rm", "-q", LOCAL)
    git(project, "commit", "-qm", "an old update deleted it")
    done = codeact(project, "drift")
    line = next(x for x in done.stderr.splitlines() if LOCAL in x and "get it back" in x)
    fix = line.split("get it back: ", 1)[1].split("  (", 1)[0]
    assert run(project, "sh", "-c", fix).returncode == 0
    assert (project / LOCAL).read_text() == "the team's rules\n"
