"""Issue 2: the real Copilot CLI discovers what `copier copy` stamps, with no plugin install and no login."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import frontmatter
import pytest

from tests.copilot.conftest import default_tools

pytestmark = pytest.mark.e2e

INSTRUCTIONS = ".github/instructions/codeact.instructions.md"
# A control file with a narrower applyTo: the CLI reports `applyTo` in its JSON only when it is not "**" (1.0.102
# omits it for "**" as for a file without frontmatter), so this proves the listing would show a restriction.
CONTROL = ".github/instructions/control.instructions.md"


def listing(copilot_cli: Callable[..., Any], repo: Path, *args: str) -> list[dict[str, Any]]:
    proc = copilot_cli(repo, *args, "--json")
    assert proc.returncode == 0, f"copilot {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout)


@pytest.fixture
def project(stamp: Callable[..., Path]) -> Path:
    return stamp(files={"README.md": "# demo\n", CONTROL: '---\napplyTo: "src/**"\n---\nOnly for src.\n'},
                 **default_tools())


def test_instructions_listed_for_every_file(project: Path, copilot_cli: Callable[..., Any]) -> None:
    entries = {e["sourcePath"]: e for e in listing(copilot_cli, project, "instruction", "list")}
    assert INSTRUCTIONS in entries, f"the CLI does not list {INSTRUCTIONS}: {sorted(entries)}"
    entry = entries[INSTRUCTIONS]
    assert entry["location"] == "working-directory" and not entry.get("defaultDisabled")
    # repo-wide: no applyTo restriction reported (the control shows what a restriction looks like)...
    assert entry.get("applyTo", ["**"]) == ["**"], entry
    assert entries[CONTROL].get("applyTo") == ["src/**"], entries[CONTROL]
    # ...because the stamped file says `applyTo: "**"`
    assert frontmatter.load(project / INSTRUCTIONS).metadata.get("applyTo") == "**"
    # the seeded team file is picked up too
    assert ".github/instructions/codeact.local.instructions.md" in entries


def test_skills_listed(project: Path, copilot_cli: Callable[..., Any]) -> None:
    skills = {s["name"]: s for s in listing(copilot_cli, project, "skill", "list")}
    for name in ("codeact", "codeact-update"):
        assert name in skills, f"the CLI does not list the {name} skill: {sorted(skills)}"
        assert skills[name]["source"] == "project" and skills[name]["enabled"] is True
        assert Path(skills[name]["path"]) == project / ".github" / "skills" / name
    assert "codeact" in skills["codeact"]["description"].lower()
