"""Rendering the template with the real Copier: every answer combination gives valid, deterministic files."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import frontmatter
import pytest
import yaml

from codeact.enforcement import spec
from tests.conftest import REPO_ROOT, make_repo

# The stamped files every repo-scope project has, OWNED by the template (regenerated on update).
OWNED = {
    ".copier-answers.codeact.yml",
    ".codeact/.gitattributes",
    ".codeact/.gitignore",
    ".codeact/bin/codeact",
    ".codeact/bin/codeact.ps1",
    ".codeact/hooks/post-tool-use.sh",
    ".codeact/hooks/pre-tool-use.ps1",
    ".codeact/hooks/pre-tool-use.sh",
    ".codeact/hooks/session-start.sh",
    ".codeact/manifest.json",
    ".codeact/requirements-hyperlight.txt",
    ".codeact/requirements.txt",
    ".codeact/sdk/codeact-hooks.mjs",
    ".codeact/settings.json",
    ".github/agents/codeact.agent.md",
    ".github/hooks/codeact.json",
    ".github/instructions/codeact.instructions.md",
    ".github/skills/codeact-update/SKILL.md",
    ".github/skills/codeact/SKILL.md",
    ".github/skills/codeact/references/patterns.md",
    ".github/workflows/codeact-drift.yml",
}
# SEEDED for the user: written once, never overwritten, never drift.
SEEDED = {".github/instructions/codeact.local.instructions.md"}
SEEDED_ON_REQUEST = {".pre-commit-config.yaml"}  # precommit_hook=true
SAFE_TOOLS = ["view", "create", "edit", "glob", "grep"]
ALL_TOOLS = ["view", "create", "edit", "glob", "grep", "outline", "bash", "sql", "web_fetch", "github_api"]


def stamped_files(project: Path) -> set[str]:
    out = subprocess.run(["git", "ls-files", "-o", "--exclude-standard"], cwd=project, capture_output=True,
                         text=True, check=True).stdout.split()
    return set(out)


def runtime_files() -> set[str]:
    root = REPO_ROOT / "runtime"
    return {".codeact/runtime/" + p.relative_to(root).as_posix() for p in (root / "codeact").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def check_frontmatter(path: Path, required: tuple[str, ...]) -> dict:
    post = frontmatter.load(path)
    for key in required:
        assert post.metadata.get(key), f"{path}: frontmatter lacks {key!r}"
    if "name" in post.metadata:
        assert len(str(post.metadata["name"])) <= 64
    if "description" in post.metadata:
        assert len(str(post.metadata["description"])) <= 1024
    return post.metadata


@pytest.mark.parametrize("backend", ["auto", "monty", "hyperlight"])
@pytest.mark.parametrize("enforcement", ["off", "nudge", "exclusive"])
def test_every_backend_and_mode_renders_valid_files(stamp, tmp_path, backend, enforcement):
    project = stamp(tmp_path / "p", backend=backend, enforcement=enforcement)
    files = stamped_files(project)
    assert files == OWNED | SEEDED | runtime_files()  # never the user's CLI settings (`codeact refresh` merges)

    for rel in files:
        if rel.endswith(".json"):
            json.loads((project / rel).read_text())
        text = (project / rel).read_text()
        assert text.endswith("\n") and not text.endswith("\n\n"), f"{rel} must end with exactly one newline"
        assert str(tmp_path) not in text and str(REPO_ROOT) not in text, f"{rel} holds an absolute path"

    settings = json.loads((project / ".codeact/settings.json").read_text())
    assert settings == {"backend": backend, "enforcement": enforcement, "scope": "repo", "mcp_exclude": [],
                        "tools": ["view", "create", "edit", "glob", "grep", "outline", "bash", "sql"]}
    answers = yaml.safe_load((project / ".copier-answers.codeact.yml").read_text())
    assert answers["backend"] == backend and answers["enforcement"] == enforcement

    meta = check_frontmatter(project / ".github/instructions/codeact.instructions.md", ("applyTo",))
    assert meta["applyTo"] == "**"
    agent = check_frontmatter(project / ".github/agents/codeact.agent.md", ("description",))
    assert agent["tools"] == list(spec.AGENT_TOOLS) and agent["name"] == "codeact"  # each client's terminal tool
    for skill in ("codeact", "codeact-update"):
        assert check_frontmatter(project / f".github/skills/{skill}/SKILL.md", ("name", "description"))["name"] == skill

    hooks = json.loads((project / ".github/hooks/codeact.json").read_text())
    entry = hooks["hooks"]["preToolUse"][0]
    assert hooks["version"] == 1 and entry["type"] == "command"
    assert ".codeact/hooks/pre-tool-use.sh" in entry["bash"] and ".codeact/hooks/pre-tool-use.ps1" in entry["powershell"]
    instructions = (project / ".github/instructions/codeact.instructions.md").read_text()
    assert f"Backend: `{backend}`" in instructions


@pytest.mark.parametrize("tools", [["view"], ["grep", "glob"], SAFE_TOOLS + ["web_fetch", "github_api"]])
def test_tool_subsets_name_exactly_the_chosen_tools(stamp, tmp_path, tools):
    project = stamp(tmp_path / "p", tools=tools)
    instructions = (project / ".github/instructions/codeact.instructions.md").read_text()
    agent = (project / ".github/agents/codeact.agent.md").read_text()
    for name in ALL_TOOLS:
        listed = f"- `{name}(" in instructions
        assert listed == (name in tools), f"{name} listed={listed} but chosen={name in tools}"
        assert f"- `{name}(" not in agent  # issue 43.7: the instructions load with the agent; it does not repeat them
    catalog_order = [t for t in ALL_TOOLS if t in tools]
    assert json.loads((project / ".codeact/settings.json").read_text())["tools"] == catalog_order
    if "github_api" in tools:
        assert "your GitHub token" in agent


def test_runtime_is_stamped_byte_identical(stamp, tmp_path):
    project = stamp(tmp_path / "p")
    for rel in runtime_files():
        source = REPO_ROOT / "runtime" / rel.removeprefix(".codeact/runtime/")
        assert (project / rel).read_bytes() == source.read_bytes(), rel
        assert not (project / rel).is_symlink()
    assert (project / ".codeact/bin/codeact").stat().st_mode & 0o111, "launcher must be executable"
    assert (project / ".codeact/hooks/pre-tool-use.sh").stat().st_mode & 0o111, "hook must be executable"


def test_output_is_deterministic(stamp, tmp_path):
    a = stamp(tmp_path / "a", enforcement="nudge", tools=["view", "grep"])
    b = stamp(tmp_path / "b", enforcement="nudge", tools=["view", "grep"])
    for rel in stamped_files(a):
        if rel == ".copier-answers.codeact.yml":
            continue  # records the template's source path, which differs per test folder only in name
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_seeded_file_survives_recopy_while_owned_files_are_restored(stamp, tmp_path):
    project = stamp(tmp_path / "p")
    local = project / ".github/instructions/codeact.local.instructions.md"
    local.write_text("---\napplyTo: \"**\"\n---\nOur own rule.\n")
    owned = project / ".github/instructions/codeact.instructions.md"
    original = owned.read_text()
    owned.write_text("hand edit\n")
    stamp(project)
    assert local.read_text().endswith("Our own rule.\n")
    assert owned.read_text() == original


def test_copier_config_lists_seeded_files_and_answers_file():
    config = yaml.safe_load((REPO_ROOT / "copier.yml").read_text())
    # every scope's seeded files (global scope seeds its local instructions under instructions/)
    assert set(config["_skip_if_exists"]) == SEEDED | SEEDED_ON_REQUEST | {"instructions/codeact.local.instructions.md"}
    assert config["_answers_file"] == ".copier-answers.codeact.yml"
    for name in ("scope", "backend", "tools", "enforcement"):
        assert config[name].get("help"), f"question {name} needs help text"


def test_shell_scripts_pass_shellcheck(stamp, tmp_path):
    project = stamp(tmp_path / "p", enforcement="exclusive")
    scripts = [project / ".codeact/bin/codeact", project / ".codeact/hooks/pre-tool-use.sh"]
    result = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("answer", "message"), [
    ("backend=docker", "backend"),
    ('tools=["rm"]', "tools"),
    ("enforcement=strict", "enforcement"),
    ("scope=galaxy", "scope"),
    ("scope=plugin", "name the publisher"),  # plugin_owner has no usable default
    ("scope=plugin plugin_owner=Acme marketplace_name=Acme_Tools", "kebab-case"),
    ("scope=plugin plugin_owner=Acme plugin_version=latest", "semantic version"),
])
def test_bad_answers_are_refused_and_nothing_is_written(template_src, tmp_path, answer, message):
    dest = make_repo(tmp_path / "p")
    before = sorted(p.name for p in dest.iterdir())
    data = [arg for item in answer.split(" ") for arg in ("-d", item)]
    result = subprocess.run(["copier", "copy", "--trust", "--defaults", "--vcs-ref", "HEAD", *data,
                             str(template_src), str(dest)], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert "Validation error" in result.stderr or "Invalid" in result.stderr or "not a valid" in result.stderr
    assert message in result.stderr
    assert sorted(p.name for p in dest.iterdir()) == before
