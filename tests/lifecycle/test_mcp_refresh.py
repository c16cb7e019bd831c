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
RAW = REPO_ROOT / "tests/mcp/servers/raw_server.py"
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
    assert "- `demo`: add, " in instructions and "time_" not in instructions
    assert "- `demo`" not in (project / AGENT).read_text()  # the repo-scope agent loads the instructions (43.7)
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
    result = subprocess.run(["copier", "update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults"],
                            cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    lock = json.loads((project / ".codeact/tools.lock.json").read_text())
    assert sorted(lock["servers"]) == ["clock", "demo"] and lock["servers"]["clock"]["status"] == "ok"
    instructions = (project / INSTRUCTIONS).read_text()
    assert "- `clock`: convert_time, get_current_time" in instructions and "- `demo`: add, " in instructions
    assert local.read_text().endswith("Prefer the demo server.\n")
    assert status(project) == sorted([" M .codeact/tools.lock.json", f" M {INSTRUCTIONS}"])  # not the agent
    git(project, "commit", "-qam", "refresh")
    in_sync = subprocess.run([sys.executable, "-m", "codeact", "drift", "--offline"], cwd=project,
                             capture_output=True, text=True, env=env)
    assert in_sync.returncode == 0, in_sync.stdout + in_sync.stderr


def test_update_with_skip_tasks_starts_no_mcp_server_and_says_what_to_run(stamp, isolated):
    """``copier update --skip-tasks``: the user asked for no commands, so the after-update refresh (which starts every
    MCP server) is not run; the user's files are still kept, and the update says how to refresh."""
    demo = {"command": sys.executable, "args": [str(DEMO)]}
    project = stamp(isolated / "p", tasks=True, tools=TOOLS, files={
        "README.md": "# demo\n", ".mcp.json": mcp_json({"demo": demo})})
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact with one MCP server")
    started = isolated / "started"
    probe = {"command": sys.executable, "args": ["-c", f"open({str(started)!r}, 'w')"]}
    (project / ".mcp.json").write_text(mcp_json({"demo": demo, "probe": probe}))
    git(project, "commit", "-qam", "add a server")
    before = (project / ".codeact/tools.lock.json").read_text()
    env = {**os.environ, **GIT_ENV}
    result = subprocess.run(["copier", "update", "-a", ".copier-answers.codeact.yml", "--trust", "--defaults",
                             "--skip-tasks"], cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert not started.exists(), "an MCP server was started"
    assert (project / ".codeact/tools.lock.json").read_text() == before
    assert "codeact: --skip-tasks: the MCP tool lock was not refreshed; run .codeact/bin/codeact refresh" in (
        result.stderr), result.stderr


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
    assert starts.read_text().count("\n") == 2, "discovery at copy time lists the server twice (as CodeAct connects, then as the CLI does)"
    git(project, "add", "-A")
    git(project, "commit", "-qm", "codeact")
    (project / ".mcp.json").write_text(mcp_json({"demo": demo, "other": demo}))
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(project / ".codeact/runtime")}
    before = starts.read_text()
    result = subprocess.run([sys.executable, "-m", "codeact", "drift", "--offline", "--json"], cwd=project,
                            capture_output=True, text=True, env=env)
    assert result.returncode == 1 and any(d["kind"] == "stale-lock" for d in json.loads(result.stdout)["drift"])
    assert starts.read_text() == before, "--offline must not start any MCP server"


@pytest.mark.parametrize("count", [300, 1000])
def test_context_stays_flat_as_tools_grow_and_every_tool_stays_callable(stamp, isolated, count, capsys):
    """Issue 15: with 300 and 1000 MCP tools the stamped instructions stay <= 6 KB and the agent <= 8 KB (the MCP
    part <= 2 KB), every tool is still callable and type-checked, and `codeact search WORD` finds a tool whose
    description holds WORD."""
    from codeact.cli import main as cli
    from codeact.core.config import Settings
    from codeact.layout import LAYOUTS
    from codeact.lifecycle.refresh import BEGIN, END
    from codeact.mcp.discovery import discover
    from codeact.runner import run

    big = {"command": sys.executable, "args": [str(RAW)],
           "env": {"RAW_TOOL_COUNT": str(count), "RAW_PAGE": "128", "RAW_SCHEMA": '{"type": "object"}'}}
    small = {"command": sys.executable, "args": [str(DEMO)]}
    project = isolated / "p"
    files = {"README.md": "# demo\n", ".mcp.json": mcp_json({"big": big, "demo": small})}
    from tests.conftest import make_repo

    make_repo(project, files)
    env = {"HOME": str(isolated / "home"), "COPILOT_HOME": str(isolated / "copilot-home"), "PATH": "/usr/bin:/bin"}
    report = discover(project, environ=env)
    assert len(report.outcomes["big"].tools) == count + 1 and report.outcomes["demo"].status == "ok"
    stamp(project, tools=TOOLS)
    instructions, agent = (project / INSTRUCTIONS).read_bytes(), (project / AGENT).read_bytes()
    assert len(instructions) <= 6 * 1024 and len(agent) <= 8 * 1024, (len(instructions), len(agent))
    text = instructions.decode()
    section = text[text.index(BEGIN):text.index(END) + len(END)]
    assert len(section.encode()) <= 2048
    assert f"- `big`: {count + 1} tools" in section and "- `demo`: add, " in section
    launcher = LAYOUTS["repo"].launcher_command  # issue 13: the root-anchored form
    assert section.rstrip().splitlines()[-2].endswith("search WORDS` finds them by name and description, "
                                                       f"`{launcher} describe server.tool` prints one's schema.")

    calls = ", ".join(f"big.tool_{i:04d}(n={i})" for i in range(count))
    result = run(f"[{calls}]", workspace=project, settings=Settings(tools=("view",)), environ=env)
    assert result.ok, result.error
    assert [json.loads(r)["n"] for r in result.result] == list(range(count))
    refused = run(f'big.tool_{count - 1:04d}(n="x")', workspace=project, settings=Settings(tools=("view",)),
                  environ=env)
    assert not refused.ok and refused.error.type == "TypeError" and not refused.tool_calls

    capsys.readouterr()
    assert cli(["search", "invoice", "--json", "--limit", "0", "--workspace", str(project)]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert {h["name"] for h in hits} == {f"big.tool_{i:04d}" for i in range(0, count, 7)}
    assert all("invoice" in h["description"] for h in hits)
