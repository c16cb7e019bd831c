"""Red team, round 7: discovery's early start of local servers (mcp/prespawn.py). Each test fails while the
hole is open."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import still_running

RUNTIME = str(Path(__file__).resolve().parents[2] / "runtime")

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and process groups")


@pytest.mark.parametrize("after", [0.0, 1.5], ids=["while-the-sdk-imports", "while-listing"])
def test_a_discovery_ended_by_sigterm_leaves_no_server_running(tmp_path: Path, after: float) -> None:
    """``codeact discover`` killed with SIGTERM (``timeout 60 codeact discover``, a CI job cancelled, systemd): the
    servers it started run on. Each is started in a session of its own (start_new_session, as the SDK does), so
    neither the terminal nor the process group takes them down, and discovery installs no SIGTERM handler, so
    neither stop_unclaimed() nor the SDK's shutdown runs. Since the early start the window also covers the SDK's
    import, before any server was started until now. A server of the repository's config outlives discovery."""
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    pids = tmp_path / "pids"
    server = f"import os, time; open({str(pids)!r}, 'a').write(str(os.getpid()) + '\\n'); time.sleep(60)"
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"slow": {"type": "stdio", "command": sys.executable,
                                                                        "args": ["-c", server]}}}))
    env = dict(os.environ, PYTHONPATH=RUNTIME, HOME=str(tmp_path))
    discover = subprocess.Popen([sys.executable, "-c", "import sys; from codeact.mcp.discovery import discover; "
                                 "discover(sys.argv[1], timeout=30)", str(root)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.monotonic()
    while not pids.exists() and time.monotonic() - started < 30:
        time.sleep(0.005)
    assert pids.exists(), "the server never started"
    time.sleep(after)
    discover.send_signal(signal.SIGTERM)
    discover.wait(timeout=30)
    time.sleep(0.5)
    alive = [int(pid) for pid in pids.read_text().split() if still_running(int(pid))]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"servers still running after discovery ended: {alive}"


def test_a_server_that_closes_its_stdout_does_not_outlive_discovery(tmp_path: Path) -> None:
    """A configured server that closes its stdout at once and stays alive: discovery reports it failed (out of
    time) and returns, and the server runs on after the discovering process has exited (the transport saw EOF
    and the worker ended without the process group being killed; stop_unclaimed only stops what no session took
    over). It failed the same way before the early start."""
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    pids = tmp_path / "pids"
    server = (f"import os, time; open({str(pids)!r}, 'a').write(str(os.getpid()) + '\\n'); os.close(1); "
              "time.sleep(60)")
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"mute": {"type": "stdio", "command": sys.executable,
                                                                        "args": ["-c", server]}}}))
    env = dict(os.environ, PYTHONPATH=RUNTIME, HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", "import sys; from codeact.mcp.discovery import discover; "
                           "print(discover(sys.argv[1], timeout=2).outcomes['mute'].status)", str(root)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "failed", done.stderr[-2000:]
    time.sleep(3)
    alive = [int(pid) for pid in pids.read_text().split() if still_running(int(pid))]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"servers still running after discovery ended: {alive}"
