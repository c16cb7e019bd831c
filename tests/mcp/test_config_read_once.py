"""Assembling a run's MCP tools reads the MCP configuration once, into one value the lock and the tools both take
(issue 29: assembly no longer goes back and forth between codeact.mcp.cache and codeact.mcp.config)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp_helpers import demo

from codeact.core.boundary import Workspace
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.mcp import bindings, cache, config
from codeact.mcp.lock import empty_lock, write_lock
from codeact.tools.assemble import assemble


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every ``load_servers`` call, by the workspace it read, whichever module makes it."""
    seen: list[Path] = []
    real = config.load_servers

    def counting(workspace: Path | str, environ: object = None) -> config.LoadedConfig:
        seen.append(Path(workspace))
        return real(workspace, environ)  # type: ignore[arg-type]

    for module in (config, cache, bindings):
        monkeypatch.setattr(module, "load_servers", counting, raising=False)
    return seen


def _context(root: Path, environ: dict[str, str]) -> ToolContext:
    return ToolContext(workspace=Workspace.at(root, environ=environ), limits=Limits(), environ=environ)


@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_outside_repo_scope_the_configuration_is_read_once(scope, workspace, reads, _isolated_home,
                                                           tmp_path) -> None:
    root = workspace({"demo": demo()})
    environ = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COPILOT_ALLOW_ALL": "true",
               "COPILOT_HOME": str(_isolated_home)}
    tools = assemble(_context(root, environ), Settings(scope=scope), environ)
    assert "demo.add" in tools
    assert reads == [root], "the lock and the tools took one reading of the configuration"


def test_in_repo_scope_with_the_users_servers_the_configuration_is_read_once(workspace, reads, _isolated_home,
                                                                            tmp_path) -> None:
    (_isolated_home / "mcp-config.json").write_text(json.dumps({"mcpServers": {"mine": demo()}}))
    root = workspace({})
    write_lock(root, empty_lock())
    environ = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COPILOT_HOME": str(_isolated_home)}
    tools = assemble(_context(root, environ), Settings(scope="repo"), environ)
    assert "mine.add" in tools
    assert reads == [root], reads
