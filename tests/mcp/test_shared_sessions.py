"""Issue 44.2: the warm server keys a local server's session on the caller's environment without the variables a
shell changes by itself; any other change starts that server afresh and closes the session it replaced once no
run uses it."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import demo, starts

from codeact import run
from codeact.core.config import Settings
from codeact.mcp.discovery import discover
from codeact.mcp.session_pool import SHELL_VARIABLES, close_shared_sessions, share_sessions, shared_sessions
from codeact.processes import process_running

SETTINGS = Settings(tools=("view",))


@pytest.fixture
def project(tmp_path: Path) -> Iterator[dict[str, Any]]:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    counter = tmp_path / "demo-starts"
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo(DEMO_STARTS_FILE=str(counter))}}))
    home = tmp_path / "home"
    home.mkdir()
    environ = {"HOME": str(home), "COPILOT_HOME": str(home / ".copilot"), "PATH": os.environ.get("PATH", ""),
               "PWD": str(root), "OLDPWD": str(home), "SHLVL": "1", "_": "/usr/bin/env", "API_TOKEN": "one"}
    assert discover(root, timeout=30, environ=environ).outcomes["demo"].status == "ok"
    share_sessions()  # as the warm server does
    try:
        yield {"root": root, "environ": environ, "counter": counter}
    finally:
        close_shared_sessions()


def env_of_server(project: dict[str, Any], **changes: str) -> str:
    result = run('demo.env(name="API_TOKEN")', workspace=project["root"], settings=SETTINGS,
                 environ={**project["environ"], **changes})
    assert result.ok, result.error
    return str(result.result)


def test_shell_variables_are_listed_in_the_docs() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text()
    for name in SHELL_VARIABLES:
        assert f"`{name}`" in docs, name


def test_a_cd_starts_no_server_and_a_token_or_pythonpath_starts_it_afresh(project: dict[str, Any]) -> None:
    assert env_of_server(project) == "one"
    before = starts(project["counter"])
    (first,) = [s["pid"] for s in shared_sessions()]
    # what a shell changes by itself between two runs: no server starts
    assert env_of_server(project, PWD="/elsewhere", OLDPWD=str(project["root"]), SHLVL="2", _="/bin/ls",
                         COLUMNS="80", LINES="24") == "one"
    assert starts(project["counter"]) == before
    # a token, then PYTHONPATH: the server starts again and sees it; the session it replaced is closed
    assert env_of_server(project, API_TOKEN="two") == "two"
    assert starts(project["counter"]) == before + 1
    (second,) = [s["pid"] for s in shared_sessions()]
    assert second != first
    assert _ended(first), "the replaced session's server still runs"
    assert env_of_server(project, API_TOKEN="two", PYTHONPATH="/opt/lib") == "two"
    assert starts(project["counter"]) == before + 2
    assert _ended(second)


def test_a_replaced_session_stays_open_while_a_run_uses_it(project: dict[str, Any]) -> None:
    from codeact.mcp.config import load_servers
    from codeact.mcp.session_pool import SessionPool

    configs = load_servers(project["root"], project["environ"]).servers
    old = SessionPool(configs.__getitem__, cwd=project["root"], environ=project["environ"])  # a run in flight
    assert old.call("demo", "env", {"name": "API_TOKEN"}) == "one"
    (pid,) = [s["pid"] for s in shared_sessions()]
    assert env_of_server(project, API_TOKEN="two") == "two"  # another run, another environment
    assert process_running(pid) and old.call("demo", "env", {"name": "API_TOKEN"}) == "one"
    old.close()  # the last run using it ends: its server stops
    assert _ended(pid)


def _ended(pid: int | None, wait: float = 15.0) -> bool:
    assert pid is not None
    until = time.monotonic() + wait
    while time.monotonic() < until:
        if not process_running(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_run_that_calls_no_mcp_tool_leaves_the_sessions_alone(project: dict[str, Any]) -> None:
    """A run under another environment that calls no MCP tool (a limit raised for one heavy run) takes no session
    set: the warm session of the other runs stays open, and their next call starts no server."""
    assert env_of_server(project) == "one"
    before = starts(project["counter"])
    (first,) = [s["pid"] for s in shared_sessions()]
    quiet = run("print(6 * 7)", workspace=project["root"], settings=SETTINGS,
                environ={**project["environ"], "CODEACT_MEMORY": str(64 << 20)})
    assert quiet.ok and quiet.stdout == "42\n", quiet.error
    assert [s["pid"] for s in shared_sessions()] == [first] and process_running(first)
    assert env_of_server(project) == "one" and starts(project["counter"]) == before
