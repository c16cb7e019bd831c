"""``codeact discover`` against real servers: the lock, byte-stability, failures in parallel, ``--check``."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from mcp_helpers import PY, RAW, demo, starts, time_server

from codeact.cli import main as cli
from codeact.mcp.config import load_servers
from codeact.mcp.discovery import discover
from codeact.mcp.lock import dumps, empty_lock, lock_path, server_entry, write_lock


def test_lock_content_transports_filter_and_byte_stability(workspace, http_url: str, sse_url: str,
                                                           tmp_path: Path) -> None:
    counter = tmp_path / "demo-starts"
    root = workspace({
        "demo": demo(DEMO_STARTS_FILE=str(counter), SECRET="${DEMO_SECRET}"),
        "time": time_server(tools=["get_current_time", "not_a_tool"]),
        "web": {"type": "http", "url": http_url, "headers": {"Authorization": "Bearer ${DEMO_SECRET}"}},
        "events": {"type": "sse", "url": sse_url},
        "skipped": demo(DEMO_STARTS_FILE=str(tmp_path / "skipped-starts")),
    }, exclude=["skipped"])
    lines: list[str] = []
    report = discover(root, timeout=30, environ={"DEMO_SECRET": "hunter2", "HOME": str(tmp_path)},
                      progress=lines.append)
    text = lock_path(root).read_text(encoding="utf-8")
    lock = json.loads(text)

    assert text == dumps(lock) and text.endswith("}\n")
    assert "hunter2" not in text
    assert list(lock["servers"]) == ["demo", "events", "time", "web"]  # excluded server left out, never started
    assert starts(tmp_path / "skipped-starts") == 0 and report.excluded == ("skipped",)
    assert {n: (e["status"], e["transport"]) for n, e in lock["servers"].items()} == {
        "demo": ("ok", "stdio"), "events": ("ok", "sse"), "time": ("ok", "stdio"), "web": ("ok", "http")}
    demo_entry = lock["servers"]["demo"]
    assert [t["name"] for t in demo_entry["tools"]] == sorted(t["name"] for t in demo_entry["tools"])
    add = next(t for t in demo_entry["tools"] if t["name"] == "add")
    assert add["description"] == "Add two integers."
    assert add["input_schema"]["properties"]["a"]["type"] == "integer" and add["input_schema"]["required"] == ["a"]
    assert add["output_schema"]["properties"]["result"]["type"] == "integer"
    assert next(t for t in demo_entry["tools"] if t["name"] == "echo")["output_schema"] is None
    assert demo_entry["config_hash"] == load_servers(root).servers["demo"].config_hash()
    assert demo_entry["tools_filter"] == ["*"] and demo_entry["reason"] is None
    # the tools filter is honoured and names what it could not find
    assert [t["name"] for t in lock["servers"]["time"]["tools"]] == ["get_current_time"]
    assert lock["servers"]["time"]["tools_filter"] == ["get_current_time", "not_a_tool"]
    assert report.outcomes["time"].notes == [
        "the tools filter names tools the server does not offer: not_a_tool"]
    assert any(line.startswith("discovering 4 MCP server(s) in parallel") for line in lines)
    assert any("ok      web:" in line for line in lines)

    # identical server output gives identical bytes, and the file is left untouched
    mtime = lock_path(root).stat().st_mtime_ns
    discover(root, timeout=30, environ={"DEMO_SECRET": "other", "HOME": str(tmp_path)})
    assert lock_path(root).read_text(encoding="utf-8") == text
    assert lock_path(root).stat().st_mtime_ns == mtime
    # the first discovery: two sessions, as CodeAct connects and as the Copilot CLI does; the second, whose first
    # listing is what the lock holds: one
    assert starts(counter) == 3


def test_failing_servers_do_not_block_the_rest(workspace, tmp_path: Path) -> None:
    root = workspace({
        "good": demo(),
        "hang": demo(DEMO_MODE="hang"),
        "crash": demo(DEMO_MODE="crash"),
        "badschema": {"command": PY, "args": [RAW]},
        "missing": {"command": str(tmp_path / "no-such-server")},
    })
    timeout = 6.0
    began = time.perf_counter()
    report = discover(root, timeout=timeout, environ={"HOME": str(tmp_path)})
    wall = time.perf_counter() - began
    status = {n: (o.status, o.reason) for n, o in report.outcomes.items()}
    assert status["good"] == ("ok", None)
    assert status["hang"][0] == "failed" and status["hang"][1].startswith(f"did not start within {timeout:g} s")
    assert status["crash"][0] == "failed"
    assert report.outcomes["crash"].stderr == "demo server: refusing to start (DEMO_MODE=crash)"
    assert "refusing" not in status["crash"][1]  # stderr is machine noise: shown, never in the lock
    assert status["badschema"] == ("ok", None)  # its one tool is invalid: dropped, the server stays (as in the CLI)
    assert status["missing"] == ("failed", f"command not found: {tmp_path / 'no-such-server'}")
    # in parallel: the lock is written once the slowest server ran out of time, not after the sum of waits;
    # stopping the hung server afterwards takes at most the SDK's grace periods (2 s + 2 s)
    assert report.seconds < timeout + 2.0
    assert wall < timeout + 5.0
    text = lock_path(root).read_text()
    lock = json.loads(text)
    assert lock["servers"]["crash"]["tools"] == [] and lock["servers"]["good"]["tools"]
    assert "refusing to start" not in text


def test_check_is_offline_and_names_differences(workspace, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    counter = tmp_path / "starts"
    servers = {"a": demo(DEMO_STARTS_FILE=str(counter)), "b": time_server()}
    root = workspace(servers)
    lock = empty_lock()
    for name, config in load_servers(root).servers.items():  # a lock as discovery would write it, no server run
        lock["servers"][name] = server_entry(config, status="ok", tools=[])
    write_lock(root, lock)

    def check() -> tuple[int, str]:
        code = cli(["discover", "--check", "--workspace", str(root)])
        return code, capsys.readouterr().out

    assert check() == (0, ".codeact/tools.lock.json matches the configured MCP servers\n")

    workspace({**servers, "b": time_server(tools=["get_current_time"])})
    code, out = check()
    assert code == 1 and "server 'b': tools filter changed from ['*'] to ['get_current_time']" in out

    workspace({**servers, "a": {**servers["a"], "args": [*servers["a"]["args"], "--verbose"]}})
    code, out = check()
    assert code == 1 and "server 'a': configuration changed" in out

    workspace({**servers, "c": demo()})
    code, out = check()
    assert code == 1 and "server 'c' is configured (.mcp.json) but not in the lock" in out

    workspace(servers, exclude=["b"])
    code, out = check()
    assert code == 1 and "server 'b' is in the lock but no longer configured (or now excluded)" in out

    workspace(servers, exclude=[])
    code = cli(["discover", "--check", "--json", "--workspace", str(root)])
    assert code == 0 and json.loads(capsys.readouterr().out)["ok"] is True
    assert starts(counter) == 0  # --check started nothing

    lock_path(root).unlink()
    code, out = check()
    assert code == 1 and "no lock file" in out


def test_discover_cli_json_and_config_problems(workspace, capsys: pytest.CaptureFixture) -> None:
    root = workspace({"crash": demo(DEMO_MODE="crash"), "broken": {"type": "http"}})
    code = cli(["discover", "--json", "--timeout", "20", "--workspace", str(root)])
    captured = capsys.readouterr()
    assert code == 0  # a failing server is recorded, not fatal: the lock is still written
    data = json.loads(captured.out)
    assert data["servers"]["crash"]["status"] == "failed"
    assert data["problems"] == [{"file": ".mcp.json", "key": "mcpServers.broken.url", "severity": "error",
                                 "message": "a http server needs an http(s) \"url\""}]
    assert "error: .mcp.json: mcpServers.broken.url: a http server needs an http(s) \"url\"" in captured.err
    assert "FAILED  crash:" in captured.err
    assert list(json.loads(lock_path(root).read_text())["servers"]) == ["crash"]


def test_check_lock_offline_and_live_for_drift(workspace, tmp_path: Path) -> None:
    from codeact.mcp.discovery import check_lock, check_lock_live

    schema = '{"type": "object", "properties": {"x": {"type": "integer"}}}'
    root = workspace({"raw": {"command": PY, "args": [RAW], "env": {"RAW_SCHEMA": schema}}})
    env = {"HOME": str(tmp_path)}
    discover(root, timeout=20, environ=env)
    assert check_lock(root, env) == [] and check_lock_live(root, environ=env) == []
    # the server now offers a different schema under the same configuration (env VALUES are not in the hash):
    # only the live check can see it
    changed = '{"type": "object", "properties": {"x": {"type": "string"}}}'
    workspace({"raw": {"command": PY, "args": [RAW], "env": {"RAW_SCHEMA": changed}}})
    assert check_lock(root, env) == []
    assert check_lock_live(root, environ=env) == ["server 'raw': tool 'thing' changed (input_schema)"]
    workspace({"raw": {"command": PY, "args": [RAW, "--v"], "env": {"RAW_SCHEMA": schema}}})
    assert check_lock(root, env) == ["server 'raw': configuration changed (.mcp.json: command, args, url, cwd, env "
                                     "or header names)"]


def test_a_server_briefly_down_keeps_its_lock_entry_byte_for_byte(workspace, tmp_path: Path) -> None:
    """Issue 28.3: the committed lock does not change with machine load or a server briefly down. A server whose
    configuration is unchanged but fails at a later discovery keeps its entry (its tools callable once it is back);
    the outcome says so. A changed configuration that fails is written as failed."""
    from codeact.core.config import Settings
    from codeact.runner import run

    entry = {"command": PY, "args": [RAW], "env": {"RAW_SCHEMA": '{"type": "object"}', "RAW_TOOL_COUNT": "3"}}
    root = workspace({"raw": entry})
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    assert discover(root, timeout=20, environ=env).outcomes["raw"].status == "ok"
    text = lock_path(root).read_text(encoding="utf-8")
    lines: list[str] = []
    busy = {**env, "RAW_START_DELAY": "5"}  # inherited by the server: it does not start within the 1 s
    report = discover(root, timeout=1, environ=busy, progress=lines.append)
    outcome = report.outcomes["raw"]
    assert outcome.status == "failed" and outcome.kept == 4, outcome
    assert lock_path(root).read_text(encoding="utf-8") == text
    assert any("kept its lock entry (4 tool(s)) made for this same configuration" in line for line in lines), lines
    assert report.to_json()["servers"]["raw"]["kept_from_lock"] == 4
    result = run("raw.tool_0001(n=1)", workspace=root, settings=Settings(tools=("view",)), environ=env)
    assert result.ok and result.result == '{"n": 1}', result.error

    workspace({"raw": {**entry, "args": [RAW, "--changed"]}})
    report = discover(root, timeout=1, environ=busy)
    assert report.outcomes["raw"].kept is None
    written = json.loads(lock_path(root).read_text())["servers"]["raw"]
    assert written["status"] == "failed" and written["tools"] == []


def test_discover_in_repo_scope_refreshes_this_machines_lock_of_your_servers(
        workspace, tmp_path: Path, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    """Issue 28.3: cache.py says `codeact discover` lists the user's own servers again; in repo scope it did not."""
    from codeact.mcp import cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    counter = tmp_path / "mine-starts"
    root = workspace({"raw": {"command": PY, "args": [RAW], "env": {"RAW_SCHEMA": '{"type": "object"}'}}})
    (_isolated_home / "mcp-config.json").write_text(json.dumps({"mcpServers": {
        "mine": demo(DEMO_STARTS_FILE=str(counter))}}))
    assert cli(["discover", "--workspace", str(root)]) == 0
    out = capsys.readouterr().out
    path = cache.cache_path(root, __import__("os").environ, user_only=True)
    assert f"wrote {path}: 1 server(s) of yours" in out, out
    mine = json.loads(path.read_text())["servers"]["mine"]
    assert mine["status"] == "ok" and "add" in [t["name"] for t in mine["tools"]]
    assert list(json.loads(lock_path(root).read_text())["servers"]) == ["raw"]  # never in the committed lock
    assert cli(["discover", "--workspace", str(root), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["user_lock"]["servers"]["mine"]["status"] == "ok" and starts(counter) == 4  # listed again (two sessions each)
