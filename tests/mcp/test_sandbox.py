"""MCP tools inside the sandbox: ``server.tool(**kw)``, one lazy session per server per run, errors, type checks."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import demo, starts, time_server

from codeact import run
from codeact.cli import main as cli
from codeact.core.config import Settings
from codeact.mcp.discovery import discover

SETTINGS = Settings(tools=("view", "glob"))
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, http_url: str) -> Iterator[dict[str, Any]]:
    """A workspace with three servers (two stdio, one HTTP) discovered once into its lock."""
    root = tmp_path_factory.mktemp("project")
    (root / ".git").mkdir()
    (root / "notes.txt").write_text("hello from the workspace\n")
    counters = {"demo": root / "demo-starts", "fragile": root / "fragile-starts"}
    config = {
        "demo": demo(DEMO_STARTS_FILE=str(counters["demo"]), GREETING="${DEMO_GREETING}"),
        "time": time_server(),
        "web": {"type": "http", "url": http_url, "headers": {"X-Demo-Token": "${DEMO_TOKEN}"}},
        "fragile": {**demo(DEMO_STARTS_FILE=str(counters["fragile"])), "timeout": 5000},
    }
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": config}))
    home = tmp_path_factory.mktemp("home")  # not the workspace: a workspace that is $HOME is refused
    environ = {"HOME": str(home), "COPILOT_HOME": str(home / "no-user-config"), "DEMO_GREETING": "hi ${not-expanded}",
               "DEMO_TOKEN": "tok-123"}
    report = discover(root, timeout=30, environ=environ)
    assert {n: o.status for n, o in report.outcomes.items()} == dict.fromkeys(config, "ok"), report.outcomes
    yield {"root": root, "environ": environ, "counters": counters}


def run_in(project: dict[str, Any], code: str, **kw: Any):
    return run(code, workspace=project["root"], settings=SETTINGS, environ=project["environ"], **kw)


CHAIN = '''
pid_session = demo.whoami()
total = demo.add(a=2, b=40)
who = demo.profile(name="ada")
now = time_.get_current_time(timezone="UTC")
shout = demo.echo(text=view(path="notes.txt").strip(), upper=True)
greeting = demo.env(name="GREETING")
token = web.header(name="X-Demo-Token")
web_sessions = [web.whoami(), web.whoami()]
via_generic = mcp_call(server="demo", tool="add", arguments={"a": total})
try:
    demo.fail(message="expected failure")
    failure = None
except RuntimeError as exc:
    failure = str(exc)
{"pid_session": pid_session, "again": demo.whoami(), "total": total, "who": who, "tz": now["timezone"],
 "shout": shout, "greeting": greeting, "token": token, "web_sessions": web_sessions, "via_generic": via_generic,
 "failure": failure, "files": glob(pattern="*.txt")}
'''


def test_chain_two_servers_and_builtins_one_session_each(project: dict[str, Any]) -> None:
    before = starts(project["counters"]["demo"])
    result = run_in(project, CHAIN)
    assert result.ok, result.error
    out = result.result
    assert out["total"] == 42 and out["via_generic"] == 43  # SDK-wrapped {"result": n} handed over as n
    assert out["who"] == {"name": "ada", "tags": ["a", "demo"], "score": 1.5}  # structured content as data
    assert out["tz"] == "UTC" and out["shout"] == "HELLO FROM THE WORKSPACE" and out["files"] == ["notes.txt"]
    assert out["greeting"] == "hi ${not-expanded}" and out["token"] == "tok-123"  # ${VAR} reached the servers
    assert out["failure"] == "demo.fail() failed: Error executing tool fail"
    # one session per server for the whole run: same process and session on every call, one start
    assert out["again"] == out["pid_session"]
    assert out["web_sessions"][0] == out["web_sessions"][1] and len(out["web_sessions"][0]) > 20
    assert starts(project["counters"]["demo"]) - before == 1
    names = [c.tool for c in result.tool_calls]
    assert names.count("demo.add") == 1 and "time_.get_current_time" in names and "view" in names
    assert [c.ok for c in result.tool_calls if c.tool == "demo.fail"] == [False]
    # the sessions close when the run is over: the server process goes away
    pid = int(out["pid_session"].split(":")[0])
    gc.collect()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"MCP server process {pid} still runs after the run ended")


def test_server_dying_mid_run_is_a_catchable_error(project: dict[str, Any]) -> None:
    code = '''
log = []
try:
    fragile.slow(seconds=7)
except TimeoutError as exc:
    log.append("timeout: " + str(exc))
log.append(fragile.add(a=1))
try:
    fragile.die()
except RuntimeError as exc:
    log.append(str(exc))
try:
    fragile.add(a=2)
except RuntimeError as exc:
    log.append(str(exc))
log
'''
    before = starts(project["counters"]["fragile"])
    result = run_in(project, code)
    assert result.ok, result.error
    timeout, added, died, after = result.result
    assert timeout == "timeout: fragile.slow() did not answer within 5 s"
    assert added == 2  # the session survives a timed-out call
    assert died.startswith("MCP server 'fragile' stopped during fragile.die() (connection closed)")
    assert after == died  # later calls fail the same way, quickly, without restarting it
    assert starts(project["counters"]["fragile"]) - before == 1


def test_type_check_catches_wrong_kwarg_before_any_server_starts(project: dict[str, Any]) -> None:
    before = starts(project["counters"]["demo"])
    result = run_in(project, 'demo.add(a=1, c=2)')
    assert not result.ok and result.error.type == "TypeError"
    assert "`c` does not match any known parameter" in result.error.message
    assert "no tool ran" in result.error.message
    result = run_in(project, 'time_.get_current_time(timezone=3)')
    assert not result.ok and result.error.type == "TypeError"
    result = run_in(project, 'demo.no_such_tool()')
    assert not result.ok and "has no attribute `no_such_tool`" in result.error.message
    assert starts(project["counters"]["demo"]) == before and not result.tool_calls


def test_tools_and_describe_list_mcp_tools(project: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("CODEACT_TOOLS", "view")
    monkeypatch.setenv("CODEACT_DISABLE", "bash,sql,create,edit,grep")
    assert cli(["tools", "--workspace", str(project["root"])]) == 0
    out = capsys.readouterr().out
    assert "demo.add(a: int, b: int = 1) -> int  [mcp]\n    Add two integers." in out
    assert "time_.get_current_time(timezone: str) -> dict  [mcp: time.get_current_time]" in out  # mangled
    assert "mcp_call(server: str, tool: str" in out
    assert cli(["describe", "demo.profile", "--workspace", str(project["root"])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("demo.profile(name: str) -> dict\n")
    assert "MCP tool 'profile' of server 'demo'" in out and "Output schema:" in out and '"tags"' in out
    assert "Parameters (JSON Schema):" in out


def test_a_run_without_mcp_calls_never_imports_the_sdk(project: dict[str, Any]) -> None:
    script = f'''
import sys
from codeact import run
from codeact.core.config import Settings
r = run("len(glob(pattern='*.txt'))", workspace={str(project["root"])!r}, settings=Settings(tools=("glob",)),
        environ={project["environ"]!r})
assert r.ok and r.result == 1, r
import codeact.mcp.config, codeact.mcp.discovery, codeact.mcp.render, codeact.mcp.lock, codeact.mcp.session_pool
print(sorted(m for m in sys.modules if m == "mcp" or m.startswith("mcp.")))
'''
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "runtime"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert starts(project["counters"]["demo"]) >= 1  # (the servers exist; they just were not needed)
