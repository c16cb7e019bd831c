"""What the Copilot CLI 1.0.102 declares when it connects an MCP server (issue 28.4): sampling and elicitation,
no roots. `codeact discover` lists servers a second time declaring exactly that, to find the tools a server
offers only to such clients; this test holds the CLI to the assumption."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, git
from tests.copilot.mock_model import text

CAPABILITY = REPO_ROOT / "tests" / "mcp" / "servers" / "capability_server.py"


def test_the_cli_declares_sampling_and_elicitation_and_sees_those_tools(run_copilot, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    caps = tmp_path / "caps.jsonl"
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"cap": {
        "type": "stdio", "command": sys.executable, "args": [str(CAPABILITY)], "env": {"CAP_LOG": str(caps)}}}}))
    git(repo, "init", "-q")
    run = run_copilot(repo, "hi", [text("ok")])
    assert [json.loads(line) for line in caps.read_text().splitlines()] == [
        {"sampling": {}, "elicitation": {"form": {}, "url": {}}}]
    offered = sorted(t for t in run.requests[0].tool_names if t.startswith("cap-"))
    assert offered == ["cap-ask_model", "cap-ask_user", "cap-echo"]
