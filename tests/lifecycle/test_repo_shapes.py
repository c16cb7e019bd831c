"""Repositories as users have them (issue 42, items 1 and 5; issue 41, item 4): a `.gitignore` with `bin` or
`bin/` (Go, Java, .NET; pytest has `bin/`, cobra `bin`), a monorepo stamped from a subfolder, a folder that is not
a git work tree, and a clone with core.autocrlf=true (Git for Windows' default). Generated from what the real
repositories hold (fetched and stamped by hand: spf13/cobra, pytest-dev/pytest, colinhacks/zod)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, git, make_repo

# The rules as the real repositories write them (only the lines that matter here).
GITIGNORES = {
    "cobra": "cobra.test\nbin\n.idea/\n*.iml\n",
    "pytest": "*.pyc\n*.pyo\n*.swp\n*.class\n*.orig\n*~\n.hypothesis/\nbin/\ninclude/\n.Python\n",
}


def copier(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["copier", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV},
                          timeout=600)


def codeact(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    return subprocess.run([sys.executable, "-m", "codeact", *args], cwd=project, capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.fixture(autouse=True)
def _env(venv_dir, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))


@pytest.mark.parametrize("shape", sorted(GITIGNORES))
def test_a_bin_rule_never_hides_the_launcher(shape, template_src, tmp_path):
    project = make_repo(tmp_path / shape, {".gitignore": GITIGNORES[shape], "README.md": "# x\n"})
    done = copier(project, "copy", "--trust", "--defaults", "--skip-tasks", str(template_src), ".")
    assert done.returncode == 0, done.stderr
    assert "is ignored by git" not in done.stderr, done.stderr
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    tracked = git(project, "ls-files").splitlines()
    assert ".codeact/bin/codeact" in tracked and ".codeact/hooks/pre-tool-use.sh" in tracked
    # A teammate's clone on Windows (core.autocrlf=true) gets a launcher that starts.
    clone = tmp_path / "clone"
    git(tmp_path, "-c", "core.autocrlf=true", "clone", "-q", str(project), str(clone))
    git(clone, "config", "core.autocrlf", "true")
    launcher = clone / ".codeact/bin/codeact"
    assert b"\r" not in launcher.read_bytes() and os.access(launcher, os.X_OK)
    assert b"\r" not in (clone / ".codeact/hooks/pre-tool-use.sh").read_bytes()
    ran = subprocess.run([str(launcher), "--help"], cwd=clone, capture_output=True, text=True, timeout=600,
                         env={**os.environ, **GIT_ENV})
    assert ran.returncode == 0, ran.stderr
    drifts = json.loads(codeact(clone, "drift", "--json").stdout)["drift"]
    assert drifts == [], drifts


def test_a_rule_that_hides_an_owned_file_is_named(template_src, tmp_path):
    project = make_repo(tmp_path / "p", {".gitignore": ".github/agents/\n", "README.md": "# x\n"})
    done = copier(project, "copy", "--trust", "--defaults", "--skip-tasks", str(template_src), ".")
    assert done.returncode == 0, done.stderr
    assert "WARNING: .github/agents/codeact.agent.md is ignored by git" in done.stderr
    assert ".gitignore:1: .github/agents/" in done.stderr
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    result = codeact(project, "drift", "--json")
    ignored = [d for d in json.loads(result.stdout)["drift"] if d["kind"] == "ignored"]
    assert [d["path"] for d in ignored] == [".github/agents/codeact.agent.md"], result.stdout
    doctor = codeact(project, "doctor", "--json")
    checks = json.loads(doctor.stdout)["checks"]
    assert any(c["name"] == "ignored" and c["ok"] is False and ".gitignore:1" in (c["fix"] or "") for c in checks)


def test_a_monorepo_subfolder_is_refused_before_anything_is_written(template_src, tmp_path):
    repo = make_repo(tmp_path / "zod", {"packages/zod/package.json": "{}\n", "package.json": "{}\n"})
    sub = repo / "packages/zod"
    done = copier(sub, "copy", "--trust", "--defaults", "--skip-tasks", str(template_src), ".")
    assert done.returncode != 0
    assert f"cd {repo.resolve()} && copier copy --trust {template_src} ." in done.stderr, done.stderr
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_folder_outside_git_is_warned(template_src, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    done = copier(plain, "copy", "--trust", "--defaults", "--skip-tasks", str(template_src), ".")
    assert done.returncode == 0, done.stderr
    assert "is not a git work tree" in done.stderr
