"""Issue 13, section 4, as stamped text (no CLI needed): repo scope's instructions, agent and skill give the
root-anchored launcher, say where it fails and what then, show the PowerShell form, and say where hooks load."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

ROOTED = '"$(git rev-parse --show-toplevel)/.codeact/bin/codeact"'
PS_FORM = "`& \"$(git rev-parse --show-toplevel)/.codeact/bin/codeact.ps1\" run --code @'`"
REPO_FILES = (".github/instructions/codeact.instructions.md", ".github/agents/codeact.agent.md",
              ".github/skills/codeact/SKILL.md")


@pytest.fixture(scope="module")
def repo(stamp_shared: Callable[..., Path]) -> Path:
    return stamp_shared(files={"README.md": "# demo\n"})


@pytest.mark.parametrize("rel", [rel for rel in REPO_FILES if "agents" not in rel])
def test_repo_scope_text_gives_the_root_anchored_launcher(rel: str, repo: Path) -> None:
    text = (repo / rel).read_text()
    assert f"{ROOTED} run - <<'PY'\n" in text
    assert ".codeact/bin/codeact run" not in text.replace(f"{ROOTED} run", "")  # never the relative form to run
    flat = " ".join(text.split())
    assert "outside a git work tree, or where git refuses the repository (`safe.directory`), it fails: then run " \
           "`.codeact/bin/codeact` from the root." in flat
    assert PS_FORM in flat and "then `'@` alone" in flat
    assert "The CLI loads this repository's hooks only when started at its root, in a trusted folder." in flat


def test_the_repo_scope_agent_runs_the_root_anchored_launcher_and_defers_to_the_instructions(repo: Path) -> None:
    """The agent loads with the instructions (43.7: one copy of the forms, not both): it names the rooted launcher
    and none of the instructions' forms again."""
    text = (repo / ".github/agents/codeact.agent.md").read_text()
    assert f"`{ROOTED} run`" in text and ".codeact/bin/codeact run" not in text.replace(f"{ROOTED} run", "")
    assert "The CodeAct instructions (they load with this agent)" in " ".join(text.split())
    assert f"{ROOTED} run - <<'PY'" not in text and PS_FORM not in " ".join(text.split())


def test_the_always_on_instructions_stay_small(repo: Path) -> None:
    assert len((repo / REPO_FILES[0]).read_bytes()) <= 6000 - 2048  # the MCP section has its own 2 KiB


@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_other_scopes_do_not_get_the_git_note(scope: str, stamp_shared: Callable[..., Path]) -> None:
    answers = {"scope": scope, **({"plugin_owner": "Acme"} if scope == "plugin" else {})}
    dest = stamp_shared(**answers)
    skills = dest / ("plugins/codeact/skills" if scope == "plugin" else "skills")
    text = (skills / "codeact/SKILL.md").read_text()
    assert "git rev-parse" not in text and "safe.directory" not in text
