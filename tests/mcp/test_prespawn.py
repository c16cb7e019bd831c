"""Discovery starts the local servers first, and its own client (plain_listing) or the SDK's transport takes each
one over (issue 44.4): never a server started twice, never one left running."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import PY, demo, starts

from codeact.mcp import prespawn
from codeact.mcp.config import load_servers
from codeact.mcp.discovery import discover

pytestmark = pytest.mark.skipif(not prespawn.SUPPORTED, reason="POSIX only: on Windows the SDK starts servers")


def test_the_environment_is_the_one_the_sdk_would_give() -> None:
    """The mirror of the SDK's inherited variables fails here once the SDK changes its list or its rule."""
    from mcp.client import stdio

    assert prespawn.SDK_INHERITED == tuple(stdio.DEFAULT_INHERITED_ENV_VARS)
    assert prespawn._sdk_defaults() == stdio.get_default_environment()


def _record_stops(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    stopped: list[Any] = []
    real = prespawn._stop

    async def recording(process: Any) -> None:
        if process.returncode is None:  # still running: not one the SDK had stopped already
            stopped.append(process)
        await real(process)

    monkeypatch.setattr(prespawn, "_stop", recording)
    return stopped


def test_each_server_is_started_once_and_handed_to_the_sdk(workspace, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    counter = tmp_path / "starts"
    root = workspace({"demo": demo(DEMO_STARTS_FILE=str(counter))})
    stopped = _record_stops(monkeypatch)
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}  # less than this process has: the SDK adds its share
    assert discover(root, timeout=30, environ=env).outcomes["demo"].status == "ok"
    # the first discovery lists twice (as CodeAct's client, then as the CLI's): two starts, none thrown away
    assert starts(counter) == 2 and stopped == []
    assert discover(root, timeout=30, environ=env).outcomes["demo"].status == "ok"
    assert starts(counter) == 3 and stopped == []  # unchanged: listed once, by the process started first


def test_a_server_the_sdk_would_start_otherwise_is_stopped_before_it_does(
        workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = tmp_path / "starts"
    root = workspace({"demo": demo(DEMO_STARTS_FILE=str(counter))})
    stopped = _record_stops(monkeypatch)

    async def sdk_only(*_args: Any) -> None:
        return None  # no plain listing: the SDK's transport is offered the server started ahead

    monkeypatch.setattr(prespawn, "take", sdk_only)
    monkeypatch.setattr(prespawn, "_sdk_defaults", lambda: {"CODEACT_TEST_GUESS": "wrong"})
    report = discover(root, timeout=30, environ={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert report.outcomes["demo"].status == "ok"
    assert len(stopped) == 1 and stopped[0].returncode is not None  # stopped, not left waiting beside the new one


def test_servers_no_session_took_over_are_stopped(workspace, tmp_path: Path) -> None:
    root = workspace({"slow": {"command": PY, "args": ["-c", "import time; time.sleep(60)"]}})
    config = load_servers(root).servers["slow"]

    async def start_then_give_up() -> Any:
        with open(tmp_path / "err", "w+", encoding="utf-8") as errlog:
            await prespawn.start({"slow": config}, {"slow": errlog}, tmp_path, None)
            process = prespawn._current.get().waiting[0].process  # type: ignore[union-attr]
            assert prespawn.still_waiting() == 1 and process.returncode is None
            await prespawn.stop_all()
            return process

    process = asyncio.run(start_then_give_up())
    assert process.returncode is not None


def test_a_server_that_cannot_start_is_left_to_the_sdk_to_report(workspace) -> None:
    root = workspace({"gone": {"command": "/nonexistent/codeact-test-server"}})
    outcome = discover(root, timeout=10).outcomes["gone"]
    assert outcome.status == "failed" and "/nonexistent/codeact-test-server" in (outcome.reason or "")
