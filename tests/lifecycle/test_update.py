"""`copier update` as users run it: upgrades across template versions, migrations, switches, Renovate's command."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import GIT_ENV, git, make_repo, snapshot_template

TOOLS = '["view","create","edit","glob","grep"]'
OLD_AGENT_LINE = "You are the CodeAct agent."
NEW_AGENT_LINE = "You are the CodeAct agent (upgraded)."


def copier(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["copier", *args], cwd=project, capture_output=True, text=True, env=env, timeout=300)


def status(project: Path) -> list[str]:
    out = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True).stdout
    return sorted(out.splitlines())


def drift(project: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / ".codeact/runtime")}
    return subprocess.run([sys.executable, "-m", "codeact", "drift", "--json"], cwd=project, capture_output=True,
                          text=True, env=env, timeout=120)


@pytest.fixture(autouse=True)
def _shared_runtime(venv_dir, tmp_path, monkeypatch):
    """Copier's copy task and update migration run the stamped launcher: share one venv, no user MCP config."""
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory) -> Path:
    """A template repo whose tag v0.1.0 is this working tree and v0.0.9 an older layout of it.

    v0.0.9 differs in the agent text, and it still offered the pre-release enforcement name `warn` that the
    v0.1.0 migration renames to `nudge`.
    """
    repo = snapshot_template(tmp_path_factory.mktemp("versions"), tag="v0.1.0")
    agent = repo / "template/{{ agents_dir }}/codeact.agent.md.jinja"
    current = agent.read_text()
    agent.write_text(current.replace(OLD_AGENT_LINE, NEW_AGENT_LINE))
    git(repo, "commit", "-qam", "v0.1.0 agent text")
    git(repo, "tag", "-f", "v0.1.0")
    agent.write_text(current)
    config = repo / "copier.yml"
    text = config.read_text()
    old = text.replace('    "off: instructions only; the hook never blocks": "off"\n',
                       '    "off: instructions only; the hook never blocks": "off"\n'
                       '    "warn: old name of nudge": warn\n')
    old = old.replace("choice_error('enforcement', enforcement) or ", "")  # its runtime knew `warn`
    old = old.split("_migrations:")[0] + "_message_after_copy:" + old.split("_message_after_copy:")[1]
    config.write_text(old)
    git(repo, "commit", "-qam", "older layout")
    git(repo, "tag", "v0.0.9")
    return repo


def stamp_old(template: Path, dest: Path, *data: str) -> Path:
    make_repo(dest)
    args = ["copy", "--trust", "--defaults", "--vcs-ref", "v0.0.9", "-d", f"tools={TOOLS}"]
    for item in data:
        args += ["-d", item]
    result = copier(dest, *args, str(template), ".")
    assert result.returncode == 0, result.stderr
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "codeact v0.0.9")
    return dest


def test_upgrade_keeps_seeded_edits_and_never_hides_a_conflict(two_versions, tmp_path):
    project = stamp_old(two_versions, tmp_path / "p")
    local = project / ".github/instructions/codeact.local.instructions.md"
    local.write_text(local.read_text() + "Prefer grep over view for searches.\n")
    agent = project / ".github/agents/codeact.agent.md"
    agent.write_text(agent.read_text().replace(OLD_AGENT_LINE, "You are OUR agent."))
    git(project, "commit", "-qam", "team edits")

    result = copier(project, "update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults",
                    "--skip-tasks", "--conflict", "inline")
    assert result.returncode == 0, result.stderr  # Copier exits 0 even with conflicts...
    assert local.read_text().endswith("Prefer grep over view for searches.\n")
    answers = yaml.safe_load((project / ".copier-answers.codeact.yml").read_text())
    assert answers["_commit"] == "v0.1.0"
    assert "<<<<<<<" in agent.read_text()
    report = drift(project)  # ...so the drift check must catch it
    assert report.returncode == 1
    kinds = {(d["kind"], d["path"]) for d in json.loads(report.stdout)["drift"]}
    assert ("conflict", ".github/agents/codeact.agent.md") in kinds or \
        ("unmerged", ".github/agents/codeact.agent.md") in kinds


def test_versioned_migration_renames_an_old_answer(two_versions, tmp_path):
    project = stamp_old(two_versions, tmp_path / "p", "enforcement=warn")
    assert json.loads((project / ".codeact/settings.json").read_text())["enforcement"] == "warn"
    result = copier(project, "update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults",
                    "--skip-tasks")
    assert result.returncode == 0, result.stderr
    assert "enforcement 'warn' is now called 'nudge'" in result.stderr
    assert yaml.safe_load((project / ".copier-answers.codeact.yml").read_text())["enforcement"] == "nudge"
    assert json.loads((project / ".codeact/settings.json").read_text())["enforcement"] == "nudge"


def test_backend_switch_changes_exactly_the_dependent_files(template_src, tmp_path):
    project = make_repo(tmp_path / "p")
    assert copier(project, "copy", "--trust", "--defaults", "--vcs-ref", "HEAD", "-d",
                  f"tools={TOOLS}", str(template_src), ".").returncode == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    result = copier(project, "update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults",
                    "--skip-tasks", "-d", "backend=monty")
    assert result.returncode == 0, result.stderr
    assert status(project) == sorted([
        " M .copier-answers.codeact.yml",
        " M .codeact/settings.json",
        " M .github/instructions/codeact.instructions.md",
        " M .github/skills/codeact/SKILL.md",
    ])
    assert json.loads((project / ".codeact/settings.json").read_text())["backend"] == "monty"
    assert "Backend: `monty`" in (project / ".github/instructions/codeact.instructions.md").read_text()
    git(project, "commit", "-qam", "switch")
    assert drift(project).returncode == 0


def test_renovate_command_updates_a_stamped_repo(two_versions, tmp_path):
    project = stamp_old(two_versions, tmp_path / "p")
    # renovatebot/renovate lib/modules/manager/copier/artifacts.ts, self-hosted with allowScripts (adds --trust)
    result = copier(project, "update", "--skip-answered", "--defaults", "--trust", "--answers-file",
                    ".copier-answers.codeact.yml", "--vcs-ref", "v0.1.0")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load((project / ".copier-answers.codeact.yml").read_text())["_commit"] == "v0.1.0"
    assert NEW_AGENT_LINE in (project / ".github/agents/codeact.agent.md").read_text()
    git(project, "add", "-A")
    git(project, "commit", "-qm", "renovate")
    assert drift(project).returncode == 0


def test_organisation_defaults_from_a_data_file_are_honoured_and_kept(template_src, tmp_path):
    org = tmp_path / "org.yml"
    org.write_text("backend: monty\nenforcement: exclusive\ntools: [view, glob, grep]\n")
    project = make_repo(tmp_path / "p")
    result = copier(project, "copy", "--trust", "--defaults", "--vcs-ref", "HEAD",
                    "--data-file", str(org), str(template_src), ".")
    assert result.returncode == 0, result.stderr
    settings = json.loads((project / ".codeact/settings.json").read_text())
    assert settings == {"backend": "monty", "enforcement": "exclusive", "scope": "repo", "mcp_exclude": [],
                        "tools": ["view", "glob", "grep"]}
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    again = copier(project, "update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults",
                   "--skip-answered", "--skip-tasks")
    assert again.returncode == 0, again.stderr
    assert json.loads((project / ".codeact/settings.json").read_text()) == settings


def test_locked_answers_in_an_org_fork_are_not_asked(template_src, tmp_path):
    fork = tmp_path / "fork"
    subprocess.run(["git", "clone", "-q", str(template_src), str(fork)], check=True, capture_output=True)
    config = yaml.safe_load((fork / "copier.yml").read_text())
    text = (fork / "copier.yml").read_text()
    # An organisation pins a question by making it computed: `when: false` with its value as default.
    text = text.replace("backend:\n  type: str\n", "backend:\n  type: str\n  when: false\n", 1)
    text = text.replace("  default: \"{{ org_default('backend', 'auto') }}\"\n", "  default: monty\n", 1)
    (fork / "copier.yml").write_text(text)
    git(fork, "commit", "-qam", "org pins backend=monty")
    git(fork, "tag", "v0.1.1")
    assert "'auto'" in config["backend"]["default"] and "default: monty\n" in text
    project = make_repo(tmp_path / "p")
    # No --defaults and no terminal: any question still asked would fail; the pinned one must not be asked.
    result = copier(project, "copy", "--trust", "--skip-tasks", "--vcs-ref", "HEAD", "-d", "scope=repo",
                    "-d", f"tools={TOOLS}", "-d", "enforcement=off", "-d", "drift_workflow=false",
                    "-d", "update_workflow=false", "-d", "precommit_hook=false", "-d", "mcp_exclude=[]",
                    str(fork), ".")
    assert result.returncode == 0, result.stderr
    assert "backend" not in result.stderr.lower() or "Validation" not in result.stderr
    assert json.loads((project / ".codeact/settings.json").read_text())["backend"] == "monty"
    assert "backend" not in yaml.safe_load((project / ".copier-answers.codeact.yml").read_text())


def test_the_answers_record_the_tag_asked_for_when_a_commit_has_two(template_src, tmp_path):
    """A fork tags upstream's release commit `v0.1.0` with its own `v1!0.1.0`: `git describe` names either one."""
    git(template_src, "tag", "v1!0.1.0", "v0.1.0")
    try:
        for tag in ("v0.1.0", "v1!0.1.0"):
            project = make_repo(tmp_path / tag.replace("!", "_"))
            result = copier(project, "copy", "--trust", "--defaults", "--skip-tasks", "--vcs-ref", tag,
                            str(template_src), ".")
            assert result.returncode == 0, result.stderr
            assert yaml.safe_load((project / ".copier-answers.codeact.yml").read_text())["_commit"] == tag
        latest = make_repo(tmp_path / "latest")
        assert copier(latest, "copy", "--trust", "--defaults", "--skip-tasks", str(template_src), ".").returncode == 0
        assert yaml.safe_load((latest / ".copier-answers.codeact.yml").read_text())["_commit"] == "v1!0.1.0"
    finally:
        git(template_src, "tag", "-d", "v1!0.1.0")
