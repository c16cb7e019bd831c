"""Issue 28.2 against the real Copilot CLI 1.0.102 (offline, scripted model): what an MCP server's ``timeout``
bounds there, and that CodeAct does the same. A server that needs 4 s to start with ``"timeout": 2000`` is loaded
(its tools are in the first request), a 5 s call fails with the CLI's request timeout and a 0.1 s call succeeds;
CodeAct lists the same server and stops the same 5 s call at 2 s."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_helpers import DEMO, PY

from codeact.core.config import Settings
from codeact.mcp.discovery import discover
from codeact.runner import run
from tests.conftest import make_repo
from tests.copilot.conftest import CopilotRun, copilot_bin, copilot_cache, mock_model, run_copilot  # noqa: F401
from tests.copilot.mock_model import call, text

pytestmark = pytest.mark.e2e


def test_timeout_bounds_each_call_not_start_up_in_the_cli_and_in_codeact(
        run_copilot: Callable[..., CopilotRun], tmp_path: Path) -> None:  # noqa: F811
    repo = make_repo(tmp_path / "repo")
    server = {"type": "local", "command": PY, "args": [DEMO], "env": {"DEMO_START_DELAY": "4"}, "timeout": 2000}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": server}}))
    session = run_copilot(repo, "Call the slow tool.", [
        call("demo-slow", seconds=5), call("demo-slow", seconds=0.1), text("done")],
        extra_env={"COPILOT_ALLOW_ALL": "true"})
    assert "demo-slow" in session.requests[0].tool_names, "the CLI did not load the server that took 4 s"
    (slow,), (quick,) = [r.tool_results() for r in session.requests[1:3]]
    assert "Request timed out" in slow.content, slow.content
    assert "slept 0.1" in quick.content, quick.content

    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    assert discover(repo, environ=env).outcomes["demo"].status == "ok"
    program = "try:\n    demo.slow(seconds=5)\nexcept Exception as exc:\n    out = str(exc)\n[out, demo.slow(seconds=0.1)]"
    result = run(program, workspace=repo, settings=Settings(tools=("view",)), environ=env)
    assert result.ok and result.result == ["demo.slow() did not answer within 2 s", "slept 0.1"], result.error
