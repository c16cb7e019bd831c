"""Issue 28.5, the evidence docs/context.md gives: CLI 1.0.102 has no repository setting that selects the agent or
removes built-in tools. The one file-based path, an extension that selects the agent, works only behind the
user's own experimental switch (``$COPILOT_HOME/settings.json``) and, in ``-p`` mode, an environment variable."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git
from tests.copilot.mock_model import text

AGENT = "---\nname: codeact\ndescription: Runs programs.\ntools: [\"bash\"]\n---\nUse bash.\n"
SELECT = ('import { joinSession } from "@github/copilot-sdk/extension";\n'
          'const session = await joinSession({});\nawait session.rpc.agent.select({ name: "codeact" });\n')
FLAGS = {"experimental": True, "enabledFeatureFlags": {"EXTENSIONS": True}}
PROMPT_MODE = {"GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS": "true"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".github" / "agents").mkdir(parents=True)
    (root / ".github" / "agents" / "codeact.agent.md").write_text(AGENT)
    (root / ".github" / "extensions" / "codeact").mkdir(parents=True)
    (root / ".github" / "extensions" / "codeact" / "extension.mjs").write_text(SELECT)
    (root / ".github" / "copilot").mkdir()
    (root / ".github" / "copilot" / "settings.json").write_text(json.dumps(
        {**FLAGS, "askUser": False, "customAgents": {"defaultLocalOnly": True}}))
    git(root, "init", "-q")
    return root


def tools(run) -> list[str]:
    return sorted(run.requests[0].tool_names)


def test_no_repository_setting_selects_the_agent(run_copilot, repo: Path) -> None:
    with_agent = tools(run_copilot(repo, "hi", [text("ok")], agent="codeact"))
    assert "view" not in with_agent and "bash" in with_agent
    # the experimental switch in the repository's settings (and the prompt-mode variable) loads no extension
    default = tools(run_copilot(repo, "hi", [text("ok")], extra_env=PROMPT_MODE))
    assert {"view", "edit", "create", "grep", "glob", "task"} <= set(default)


def test_an_extension_selects_the_agent_only_behind_the_users_experimental_switch(run_copilot, repo: Path,
                                                                                 tmp_path: Path) -> None:
    with_agent = tools(run_copilot(repo, "hi", [text("ok")], agent="codeact"))
    # run_copilot's homes are tmp_path/copilot-home-N: the user's settings go where the next session reads them
    for n in range(1, 4):
        home = tmp_path / f"copilot-home-{n}" / ".copilot"
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps(FLAGS))
    assert tools(run_copilot(repo, "hi", [text("ok")], extra_env=PROMPT_MODE)) == with_agent
