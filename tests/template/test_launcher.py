"""The stamped launcher, for real: venv bootstrap, re-sync on new requirements, a program over real files."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git

FILES = {
    "README.md": "# Demo\n",
    "src/app.py": "import os\n\n\ndef main():\n    # TODO: parse args\n    return os.getcwd()\n",
    "src/util.py": "def helper():\n    return 1  # TODO remove\n",
    "docs/guide.md": "Nothing to do here.\n",
}
PROGRAM = """
files = glob(pattern="**/*.py")
text = view(path="src/app.py")
todos = grep(pattern="TODO", glob="*.py")
{"files": files, "app_lines": len(text.splitlines()), "todos": [f"{t['path']}:{t['line']}" for t in todos]}
"""
EXPECTED = {"files": ["src/app.py", "src/util.py"], "app_lines": 6, "todos": ["src/app.py:5", "src/util.py:2"]}


def launch(project: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(project / ".codeact/bin/codeact"), *args], cwd=cwd or project, input=stdin,
                          capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})


@pytest.fixture
def project(stamp, tmp_path):
    path = stamp(tmp_path / "p", files=FILES)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "codeact")
    return path


def test_shared_venv_runs_a_program_that_globs_views_and_greps(project, venv_dir):
    env = {"CODEACT_VENV": str(venv_dir)}
    result = launch(project, "run", "--code", PROGRAM, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == EXPECTED
    # from a sub-folder, the workspace is still the git top-level; stdin works as the program source
    result = launch(project, "run", "-", env=env, stdin=PROGRAM, cwd=project / "src")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == EXPECTED
    assert not (project / ".codeact/.venv").exists(), "CODEACT_VENV must keep the venv out of the repo"
    assert subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True,
                          text=True).stdout == ""


def test_program_errors_and_usage_errors_have_their_exit_codes(project, venv_dir):
    env = {"CODEACT_VENV": str(venv_dir)}
    failed = launch(project, "run", "--code", "x = 1\nview(path='missing.txt')", env=env)
    assert failed.returncode == 1
    assert "FileNotFoundError (line 2)" in failed.stderr and str(project) not in failed.stderr
    usage = launch(project, "run", env=env)
    assert usage.returncode == 2 and "--code" in usage.stderr
    helped = launch(project, "run", "--help", env=env)
    assert helped.returncode == 0 and "--workspace" in helped.stdout


@pytest.mark.slow
def test_clean_bootstrap_in_repo_then_resync_when_requirements_change(project):
    first = launch(project, "run", "--code", PROGRAM, env={"CODEACT_VENV": ""})
    assert first.returncode == 0, first.stderr
    assert "setting up the sandbox runtime" in first.stderr and json.loads(first.stdout) == EXPECTED
    assert (project / ".codeact/.venv/bin/python").exists()
    assert subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True,
                          text=True).stdout == "", ".codeact/.venv must be ignored by git"

    again = launch(project, "run", "--code", "1 + 1", env={"CODEACT_VENV": ""})
    assert again.returncode == 0 and again.stdout == "2\n" and again.stderr == "", "warm runs are silent"

    requirements = project / ".codeact/requirements.txt"
    requirements.write_text(requirements.read_text() + "# changed by an update\n")
    resynced = launch(project, "run", "--code", "1 + 1", env={"CODEACT_VENV": ""})
    assert resynced.returncode == 0 and "setting up the sandbox runtime" in resynced.stderr
    assert resynced.stdout == "2\n"


def test_python_without_venv_module_gets_an_actionable_message(project, tmp_path):
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake = fake_bin / "python3"
    fake.write_text(f"#!/bin/sh\ncase \"$*\" in *ensurepip*) exit 1;; esac\nexec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    for tool in ("sh", "dirname", "cksum", "cut", "cmp", "mkdir", "rm", "mv", "cp", "sleep", "cat"):
        found = shutil.which(tool)
        if found:
            (fake_bin / tool).symlink_to(found)
    env = {"PATH": str(fake_bin), "CODEACT_VENV": str(tmp_path / "venvs"), "CODEACT_PYTHON": str(fake)}
    result = launch(project, "run", "--code", "1", env=env)
    assert result.returncode == 3
    assert "python3-venv" in result.stderr and "uv" in result.stderr
    assert not (tmp_path / "venvs").exists() or not any((tmp_path / "venvs").glob("*/bin/python"))


def test_copier_copy_bootstraps_the_runtime_through_its_task(stamp, tmp_path, venv_dir, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    project = stamp(tmp_path / "p", tasks=True, files=FILES)
    requirements = (project / ".codeact/requirements.txt").read_bytes()
    ready = [p for p in venv_dir.glob("*/.codeact-requirements.txt") if p.read_bytes() == requirements]
    assert ready, "the copy-time task must leave a ready venv for the stamped requirements"
    result = launch(project, "run", "--code", "len(glob(pattern='**/*.py'))")
    assert result.returncode == 0 and result.stdout == "2\n" and result.stderr == ""
