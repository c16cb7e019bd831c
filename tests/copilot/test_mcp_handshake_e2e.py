"""CLI 1.0.102 opens an MCP connection with `server/discover` and, when no answer comes in time, sends `initialize` on
the same pipe; a Python MCP SDK 2.x server that starts slowly reads the probe first, serves the 2026-07-28
protocol and refuses that `initialize` (-32022): the CLI runs without it. The benchmark's servers run behind
`benchmarks/codeact_bench/handshake_shim.py`, which answers the probe at once, so a slow start no longer loses them
(the cause of the realistic benchmark's crashes)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.codeact_bench.session import DEMO_SERVER, behind_shim, mcp_connect_failures
from tests.conftest import git
from tests.copilot.mock_model import text

SLOW = "12"  # seconds before the server reads stdin: longer than the CLI waits for its probe's answer


def session(run_copilot, tmp_path: Path, name: str, shim: bool):
    repo = tmp_path / name
    repo.mkdir()
    entry = {"type": "stdio", "command": sys.executable, "args": [str(DEMO_SERVER)],
             "env": {"DEMO_START_DELAY": SLOW}}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": behind_shim(entry) if shim else entry}}))
    git(repo, "init", "-q")
    run = run_copilot(repo, "hi", [text("ok")])
    homes = sorted(tmp_path.glob("copilot-home-*"), key=lambda p: p.stat().st_mtime)
    return [t for t in run.requests[0].tool_names if t.startswith("demo-")], mcp_connect_failures(homes[-1])


def test_a_slow_sdk2_server_is_lost_without_the_shim_and_kept_behind_it(run_copilot, tmp_path: Path) -> None:
    tools, failures = session(run_copilot, tmp_path, "plain", shim=False)
    assert tools == [] and any("-32022" in f for f in failures), failures
    tools, failures = session(run_copilot, tmp_path, "shim", shim=True)
    assert "demo-add" in tools and failures == []
