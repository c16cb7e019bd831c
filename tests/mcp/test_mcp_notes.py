"""Issue 24 rule 1 for MCP results: a text result past the tool-result limit is cut by the runner, and a note says
how much of it the program got."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_helpers import demo

from codeact import run
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.mcp.discovery import discover


def test_an_mcp_text_result_past_the_limit_is_noted(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo()}}))
    home = tmp_path_factory.mktemp("home")
    environ = {"HOME": str(home), "COPILOT_HOME": str(home / "none")}
    report = discover(root, timeout=30, environ=environ)
    assert report.outcomes["demo"].status == "ok", report.outcomes
    code = 'short = demo.echo(text="x" * 100)\nlong = demo.echo(text="y" * 5000)\n[len(short), long[:3]]'
    result = run(code, workspace=root, settings=Settings(tools=("view",)), environ=environ,
                 limits=Limits(tool_result=2000, timeout=30))
    assert result.ok, result.error
    assert result.result == [100, "yyy"]
    assert result.notes == ["demo.echo(): returned the first 2,000 of 5,000 bytes of text (the tool-result limit); ask "
                            "the server for less (a narrower query, a page, a limit argument)"]
