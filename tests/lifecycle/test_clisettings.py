"""The user's `.github/copilot/settings.local.json` is merged into, never overwritten or deleted (issue 41, item 3).

Exclusive mode needs the repository's MCP servers in the CLI's `disabledMcpServers`; that file is personal and
usually git-ignored, so a lost one is lost for good. `codeact refresh` (after every copy and update) merges CodeAct's
entries in and, once the mode is no longer exclusive, takes out only those."""
from __future__ import annotations

import json
from pathlib import Path

from codeact.lifecycle.clisettings import sync

SETTINGS = ".github/copilot/settings.local.json"


def project(tmp_path: Path, enforcement: str, exclude: list[str]) -> Path:
    (tmp_path / ".codeact").mkdir(exist_ok=True)
    (tmp_path / ".codeact/settings.json").write_text(json.dumps({"enforcement": enforcement, "mcp_exclude": exclude}))
    return tmp_path


def read(root: Path) -> dict[str, object]:
    return json.loads((root / SETTINGS).read_text())


def test_the_users_file_is_merged_into_and_given_back(tmp_path):
    root = project(tmp_path, "exclusive", ["slow", "mine"])
    (root / ".github/copilot").mkdir(parents=True)
    (root / SETTINGS).write_text(json.dumps({"model": "gpt-5", "disabledMcpServers": ["mine"]}))
    assert sync(root)
    assert read(root) == {"model": "gpt-5", "disabledMcpServers": ["mine", "slow"]}
    assert not sync(root), "a second refresh changes nothing"
    project(root, "off", [])
    assert sync(root)
    assert read(root) == {"model": "gpt-5", "disabledMcpServers": ["mine"]}, "only CodeAct's entry goes"


def test_a_file_codeact_created_goes_when_the_mode_does(tmp_path):
    root = project(tmp_path, "exclusive", ["slow"])
    assert sync(root) and read(root) == {"disabledMcpServers": ["slow"]}
    project(root, "nudge", [])
    assert sync(root) and not (root / SETTINGS).exists()


def test_a_file_that_existed_before_is_never_deleted(tmp_path):
    root = project(tmp_path, "exclusive", ["slow"])
    (root / ".github/copilot").mkdir(parents=True)
    (root / SETTINGS).write_text("{}\n")
    assert sync(root)
    project(root, "off", [])
    sync(root)
    assert (root / SETTINGS).is_file() and read(root) == {}


def test_an_unreadable_file_of_the_users_is_left_alone(tmp_path):
    root = project(tmp_path, "exclusive", ["slow"])
    (root / ".github/copilot").mkdir(parents=True)
    (root / SETTINGS).write_text("{ not json")
    assert not sync(root) and (root / SETTINGS).read_text() == "{ not json"
