"""Issue 44.1: what a lock yields (its catalog, every tool and stub) is kept while ``tools.lock.json`` is unchanged,
and built again as soon as it changes."""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from mcp_helpers import PY, RAW

from codeact import run
from codeact.core.boundary import Workspace
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.core.stubs import stub_source
from codeact.core.tool import Tool, ToolContext
from codeact.core.toolset import named_in, namespaces
from codeact.mcp.discovery import discover
from codeact.mcp.lock import lock_path
from codeact.tools.assemble import assemble

SETTINGS = Settings(tools=("view",))


def offered(root: Path, environ: dict[str, str]) -> Mapping[str, Tool]:
    ctx = ToolContext(workspace=Workspace.at(root, environ=environ), limits=Limits(), environ=environ)
    return assemble(ctx, SETTINGS, environ, user_config={})


def discovered(tmp_path: Path, tools: int) -> tuple[Path, dict[str, str]]:
    """A workspace configuring the raw server ``big`` with ``tools`` tools, discovered; its environment."""
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"big": {
        "command": PY, "args": [RAW], "env": {"RAW_SCHEMA": '{"type": "object"}', "RAW_TOOL_COUNT": str(tools)}}}}))
    home = tmp_path / "home"
    home.mkdir()
    environ = {"HOME": str(home), "COPILOT_HOME": str(home / ".copilot"), "PATH": os.environ.get("PATH", ""),
               "CODEACT_CONFIG_DIR": str(tmp_path / "config")}
    assert discover(root, timeout=30, environ=environ).outcomes["big"].status == "ok"
    return root, environ


def test_the_tools_of_an_unchanged_lock_are_built_once_and_a_changed_lock_is_read_again(tmp_path: Path) -> None:
    root, environ = discovered(tmp_path, 3)

    first, second = offered(root, environ), offered(root, environ)
    assert first["big.tool_0001"].parameters is second["big.tool_0001"].parameters  # built once
    assert first["big.tool_0001"].call is not second["big.tool_0001"].call  # each run its own session pool
    assert "big.tool_0003" not in second

    # the lock changes (the same size: only a description's digit): the next run reads it again
    path = lock_path(root)
    text = path.read_text()
    assert "Tool number 1: handles word1." in text
    path.write_text(text.replace("Tool number 1: handles word1.", "Tool number 1: handles word9."))
    third = offered(root, environ)
    assert third["big.tool_0001"].description == "Tool number 1: handles word9."
    assert third["big.tool_0001"].parameters is not second["big.tool_0001"].parameters

    # a discovery that lists more tools: the next run offers them, and calls them
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"big": {
        "command": PY, "args": [RAW], "env": {"RAW_SCHEMA": '{"type": "object"}', "RAW_TOOL_COUNT": "5"}}}}))
    assert discover(root, timeout=30, environ=environ).outcomes["big"].status == "ok"
    assert "big.tool_0004" in offered(root, environ)
    result = run("big.tool_0004(n=4)", workspace=root, settings=SETTINGS, environ=environ)
    assert result.ok, result.error


def test_a_run_binds_only_the_mcp_tools_it_uses_and_its_own_tools_hide_a_server(tmp_path: Path) -> None:
    root, environ = discovered(tmp_path, 40)

    tools = offered(root, environ)
    # view and previous_output; the server's 41 tools (thing, tool_0000...tool_0039); mcp_call and mcp_resource
    assert len(tools) == len(list(tools)) == 2 + 41 + 2
    assert "big.tool_0039" in tools and "big.tool_0040" not in tools and "big" not in tools
    assert stub_source(named_in(tools, "print(1)")).count("def ") == 0  # a trivial run: no stub, no tool bound
    stubs = stub_source(named_in(tools, "big.tool_0002(n=2)"))
    assert stubs.count("    def tool_") == 40 and "class _big_tools:" in stubs and "def thing(" in stubs  # the namespace the program names
    assert namespaces(tools)["big"][:2] == ("thing", "tool_0000")
    assert tools["big.tool_0002"].call(n=2) == tools["big.tool_0002"].call(n=2)  # bound once, to the run's pool

    # a user tool named as the server: the server's tools are hidden, each said, and the run calls the user's
    (tmp_path / "config" / "tools").mkdir(parents=True)
    (tmp_path / "config" / "tools" / "big.py").write_text("def big() -> str:\n    \"\"\"Mine.\"\"\"\n    return 'mine'\n")
    warnings: list[str] = []
    ctx = ToolContext(workspace=Workspace.at(root, environ=environ), limits=Limits(), environ=environ)
    shadowed = assemble(ctx, SETTINGS, environ, user_config={}, warn=warnings.append)
    assert "big.tool_0001" not in shadowed and shadowed["big"].source == "user" and "big" not in namespaces(shadowed)
    assert len(shadowed) == 5 and sorted(shadowed) == ["big", "mcp_call", "mcp_resource", "previous_output", "view"]
    assert sum("is shadowed by the tool 'big'" in w for w in warnings) == 41, warnings
    result = run("big()", workspace=root, settings=SETTINGS, environ=environ)
    assert result.ok and result.result == "mine", result.error
