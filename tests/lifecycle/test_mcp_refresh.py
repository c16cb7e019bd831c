"""MCP tools reach the stamped files at copy time, and `copier update` refreshes them (the stale-output trap)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, REPO_ROOT, git

DEMO = REPO_ROOT / "tests/mcp/servers/demo_server.py"
INSTRUCTIONS = ".github/instructions/codeact.instructions.md"
AGENT = ".github/agents/codeact.agent.md"
TOOLS = ["view", "create", "edit", "glob", "grep"]


def mcp_json(servers: dict) -> str:
    return json.dumps({"mcpServers": servers}, indent=2) + "\n"


def status(project: Path) -> list[str]:
    out = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True).stdout
    return sorted(out.splitlines())


@pytest.fixture
def isolated(tmp_path, monkeypatch, venv_dir):
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))  # no user-level servers leak in
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    return tmp_path


def test_copy_discovers_servers_and_update_refreshes_after_a_server_is_added(stamp, isolated):
    demo = {"command": sys.executable, "args": [str(DEMO)]}
    project = stamp(isolated / "p", tasks=True, tools=TOOLS, files={
        "README.md": "# demo\n", ".mcp.json": mcp_json({"demo": demo})})
    lock = json.loads((project / ".codeact/tools.lock.json").read_text())
    assert lock["servers"]["demo"]["status"] == "ok"
    instructions = (project / INSTRUCTIONS).read_text()
    assert "- `demo.add(a: int, b: int = 1)" in instructions and "time_." not in instructions
    assert "- `demo.add(" in (project / AGENT).read_text()
    local = project / ".github/instructions/codeact.local.instructions.md"
    local.write_text(local.read_text() + "Prefer the demo server.\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact with one MCP server")

    # A teammate adds a second server: the lock is now stale, and the drift check (offline) says so.
    time_server = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    (project / ".mcp.json").write_text(mcp_json({"demo": demo, "clock": time_server}))
    git(project, "commit", "-qam", "add the clock server")
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    stale = subprocess.run([sys.executable, "-m", "codeact", "drift", "--offline", "--json"], cwd=project,
                           capture_output=True, text=True, env=env)
    assert stale.returncode == 1
    assert any(d["kind"] == "stale-lock" for d in json.loads(stale.stdout)["drift"])

    # The project's one update command refreshes the lock, the instructions and the agent.
    result = subprocess.run(["copier", "update", "-a", ".codeact/.copier-answers.yml", "--trust", "--defaults"],
                            cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    lock = json.loads((project / ".codeact/tools.lock.json").read_text())
    assert sorted(lock["servers"]) == ["clock", "demo"] and lock["servers"]["clock"]["status"] == "ok"
    instructions = (project / INSTRUCTIONS).read_text()
    assert "- `clock.get_current_time(" in instructions and "- `demo.add(" in instructions
    assert "- `clock.get_current_time(" in (project / AGENT).read_text()
    assert local.read_text().endswith("Prefer the demo server.\n")
    assert status(project) == sorted([f" M {AGENT}", " M .codeact/tools.lock.json", f" M {INSTRUCTIONS}"])
    git(project, "commit", "-qam", "refresh")
    in_sync = subprocess.run([sys.executable, "-m", "codeact", "drift", "--offline"], cwd=project,
                             capture_output=True, text=True, env=env)
    assert in_sync.returncode == 0, in_sync.stdout + in_sync.stderr


def test_excluded_servers_stay_out_of_the_lock_and_the_instructions(stamp, isolated):
    demo = {"command": sys.executable, "args": [str(DEMO)]}
    project = stamp(isolated / "p", tasks=True, tools=TOOLS, mcp_exclude=["noisy"], files={
        "README.md": "# demo\n", ".mcp.json": mcp_json({"demo": demo, "noisy": demo})})
    lock = json.loads((project / ".codeact/tools.lock.json").read_text())
    assert sorted(lock["servers"]) == ["demo"]
    assert "noisy" not in (project / INSTRUCTIONS).read_text()
    assert json.loads((project / ".codeact/settings.json").read_text())["mcp_exclude"] == ["noisy"]


def test_offline_drift_starts_no_mcp_server(stamp, isolated):
    starts = isolated / "starts.txt"
    demo = {"command": sys.executable, "args": [str(DEMO)], "env": {"DEMO_STARTS_FILE": str(starts)}}
    project = stamp(isolated / "p", tasks=True, tools=TOOLS, files={
        "README.md": "# demo\n", ".mcp.json": mcp_json({"demo": demo})})
    assert starts.read_text().count("\n") == 1, "discovery at copy time starts the server once"
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    (project / ".mcp.json").write_text(mcp_json({"demo": demo, "other": demo}))
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    before = starts.read_text()
    result = subprocess.run([sys.executable, "-m", "codeact", "drift", "--offline", "--json"], cwd=project,
                            capture_output=True, text=True, env=env)
    assert result.returncode == 1 and any(d["kind"] == "stale-lock" for d in json.loads(result.stdout)["drift"])
    assert starts.read_text() == before, "--offline must not start any MCP server"
