"""What an MCP call costs on top of the SDK's own round trip (issue 25): no per-call CPU moves, no schema walk.

A run keeps its thread and sandbox worker on one CPU (codeact.backends.cpu). An MCP call that goes to an open
session starts nothing, so the thread stays there: no ``sched_setaffinity`` pair (and migration back) per call.
The call that starts a server gives the thread every CPU first, so the server is not confined to the run's CPU.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_helpers import demo

from codeact import run
from codeact.core.boundary import Workspace
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext, tool_from_function
from codeact.mcp.bindings import mcp_tools
from codeact.mcp.discovery import discover
from codeact.mcp.exposure import ExposedTool
from codeact.mcp.session_pool import close_shared_sessions, share_sessions

SETTINGS = Settings(tools=("view",))
pinning = pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                             reason="CPU pinning needs Linux and at least two CPUs this process may use")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("cost")
    (root / ".git").mkdir()
    starts = root / "demo-starts"
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo(DEMO_STARTS_FILE=str(starts))}}))
    home = tmp_path_factory.mktemp("home")
    environ = {"HOME": str(home), "COPILOT_HOME": str(home / "no-user-config"), "PATH": os.environ.get("PATH", "")}
    report = discover(root, timeout=30, environ=environ)
    assert report.outcomes["demo"].status == "ok", report.outcomes
    yield {"root": root, "environ": environ, "starts": starts}


def _echo_loop(calls: int) -> str:
    return f'n = 0\nfor i in range({calls}):\n    n += len(demo.echo(text="hi"))\nn'


@pinning
@pytest.mark.parametrize("shared", [False, True], ids=["cold", "warm-server-sessions"])
def test_mcp_calls_on_an_open_session_do_not_move_the_run_between_cpus(project, monkeypatch, shared) -> None:
    moves: list[int] = []
    real = os.sched_setaffinity

    def counting(pid: int, cpus: Any) -> None:
        moves.append(pid)
        real(pid, cpus)

    monkeypatch.setattr(os, "sched_setaffinity", counting)
    counts = {}
    if shared:  # as the warm server does: sessions kept across runs (the first run below starts the server)
        share_sessions()
    try:
        for calls in (1, 2, 40):
            moves.clear()
            result = run(_echo_loop(calls), workspace=project["root"], settings=SETTINGS,
                         environ=project["environ"])
            assert result.ok and result.result == 2 * calls, result.error
            counts[calls] = len(moves)
    finally:
        close_shared_sessions()
    # pinning the run's threads (their number varies a little) and widening once for the call that starts the
    # server: not two more per call (76 more for the 38 more calls)
    assert counts[40] <= counts[2] + 4, counts


@pinning
def test_a_server_a_run_starts_gets_every_cpu(project) -> None:
    own = os.sched_getaffinity(0)
    root = project["root"]

    def server_cpus() -> int:
        """How many CPUs the demo server started last may use."""
        pid = int(project["starts"].read_text().split()[-1])
        return len(os.sched_getaffinity(pid))

    def run_cpus() -> int:
        """How many CPUs the run's thread may use now."""
        return len(os.sched_getaffinity(0))

    ctx = ToolContext(workspace=Workspace.at(root), limits=Limits(), environ=project["environ"])
    tools = {**mcp_tools(ctx, workspace=root),
             "server_cpus": tool_from_function(server_cpus, source="user"),
             "run_cpus": tool_from_function(run_cpus, source="user")._replace(in_process=True)}
    result = run('demo.echo(text="hi")\n[server_cpus(), run_cpus(), demo.echo(text="again"), run_cpus()]',
                 workspace=root, tools=tools, settings=SETTINGS, environ=project["environ"])
    assert result.ok, result.error
    # the server has every CPU; the run is back on its one after the call that started it, and an MCP call on the
    # open session leaves it there (its round trips with the worker stay on one CPU: measured faster, cpu.py)
    assert result.result == [len(own), 1, "again", 1]
    assert os.sched_getaffinity(0) == own


def test_arguments_walk_the_schema_once() -> None:
    tool = ExposedTool(server="s", tool="t", py_server="s", py_tool="t", description="", output_schema=None,
                       returns="Any", unwrap=False,
                       input_schema={"type": "object", "required": ["a"],
                                     "properties": {"a": {"type": "string"}, "head": {"type": "number"},
                                                    "tail": {"type": ["number", "null"]}}})
    assert tool.arguments({"a": "x", "head": None, "tail": None}) == {"a": "x", "tail": None}
    assert tool.omit_if_none is tool.omit_if_none  # computed once, not at every call
    plain = ExposedTool(server="s", tool="u", py_server="s", py_tool="u", description="", output_schema=None,
                        returns="Any", unwrap=False,
                        input_schema={"type": "object", "properties": {"a": {"type": ["string", "null"]}}})
    given = {"a": None}
    assert plain.arguments(given) == given and plain.arguments(given) is not given
