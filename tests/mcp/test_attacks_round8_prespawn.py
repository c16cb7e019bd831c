"""Red team, round 8: discovery's stop of every server it started (mcp/discovery.run_stopping_servers,
prespawn.stop_all). Each test fails while the hole is open."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from mcp_helpers import still_running

RUNTIME = str(Path(__file__).resolve().parents[2] / "runtime")

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and process groups")


def _workspace(tmp_path: Path, server: str) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    pids = tmp_path / "pids"
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"type": "stdio", "command": sys.executable,
                                                                     "args": ["-c", server]}}}))
    return root, pids


def _discover(tmp_path: Path, root: Path, timeout: float) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=RUNTIME, HOME=str(tmp_path))
    # as from a terminal: a test run under nohup or in a background job inherits SIGHUP or SIGQUIT ignored, and a
    # discovery started so rightly keeps ignoring them
    code = ("import signal, sys; from codeact.mcp.discovery import discover\n"
            "for signum in (signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM):\n"
            "    signal.signal(signum, signal.SIG_DFL)\n"
            f"discover(sys.argv[1], timeout={timeout})\n")
    return subprocess.Popen([sys.executable, "-c", code, str(root)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _wait_for(path: Path) -> None:
    started = time.monotonic()
    while not path.exists() and time.monotonic() - started < 30:
        time.sleep(0.005)
    assert path.exists(), f"{path.name} never appeared (the server never started)"


def _signal_then_reap(process: subprocess.Popen[bytes], signum: int, pids: Path, what: str) -> None:
    """``signum`` to ``process`` once its servers run; none of them may run once it has ended."""
    time.sleep(1.0)
    process.send_signal(signum)
    process.wait(timeout=30)
    time.sleep(0.5)
    alive = _reap(pids)
    assert not alive, f"servers still running after {what} ended: {alive}"


def _reap(pids: Path) -> list[int]:
    alive = [int(pid) for pid in pids.read_text().split() if still_running(int(pid))] if pids.exists() else []
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    return alive


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGQUIT], ids=["SIGHUP", "SIGQUIT"])
def test_a_discovery_ended_by_another_signal_leaves_no_server_running(tmp_path: Path, signum: int) -> None:
    """run_stopping_servers turns only SIGTERM into the cleanup (and Ctrl-C's SIGINT); a terminal closed or an ssh
    link lost (SIGHUP to the foreground group) still ends discovery at once by the default action, and the servers
    it started, each in a session of its own (so the hang-up does not reach them), run on."""
    server = "import os, time; open({!r}, 'a').write(str(os.getpid()) + '\\n'); time.sleep(60)"
    root, pids = _workspace(tmp_path, server.format(str(tmp_path / "pids")))
    discover = _discover(tmp_path, root, 30)
    _wait_for(pids)
    _signal_then_reap(discover, signum, pids, "discovery")


def test_a_server_whose_first_process_exits_leaves_nothing_of_its_group_running(tmp_path: Path) -> None:
    """A server command that starts its real server and exits (a wrapper, a shell script's ``cmd &``, a launcher
    that daemonizes without a new session): prespawn.stop_all kills a process group only where its first process
    still runs (``process.returncode is None``), so the group's other processes, started by the configured command
    in the group discovery made for it, outlive discovery."""
    server = ("import os, sys, time\nif os.fork() == 0:\n    os.close(1)\n"
              "    open({!r}, 'a').write(str(os.getpid()) + '\\n'); time.sleep(60); os._exit(0)\n"
              "time.sleep(0.5); sys.exit(0)\n")
    root, pids = _workspace(tmp_path, server.format(str(tmp_path / "pids")))
    done = _discover(tmp_path, root, 5)
    done.wait(timeout=60)
    time.sleep(0.5)
    alive = _reap(pids)
    assert pids.exists(), "the server never started"
    assert not alive, f"processes of the server's group still running after discovery ended: {alive}"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_the_warm_server_ended_by_a_signal_leaves_no_discovered_server_running(tmp_path: Path, signum: int) -> None:
    """The warm server discovers in a run's thread (mcp/cache._discover, in_helper_thread), where
    run_stopping_servers cannot install a handler: a SIGTERM to the server (a logout, ``kill``, a service manager)
    ended the process at once and the MCP servers, each in a session of its own, ran on. The server process
    (codeact.server.daemon.main, run here as the launcher starts it, with a discovery in another thread as a run's)
    must stop every discovery's servers as it ends."""
    server = "import os, time; open({!r}, 'a').write(str(os.getpid()) + '\\n'); time.sleep(60)"
    root, pids = _workspace(tmp_path, server.format(str(tmp_path / "pids")))
    sockets = Path(tempfile.mkdtemp(prefix="cx", dir="/tmp"))  # a socket path must be short
    sockets.chmod(0o700)
    env = dict(os.environ, PYTHONPATH=RUNTIME, HOME=str(tmp_path))
    code = ("import sys, threading; from codeact.mcp.discovery import discover\n"
            "threading.Thread(target=discover, args=(sys.argv[2],), kwargs={'timeout': 30}, daemon=True).start()\n"
            "from codeact.server.daemon import main\n"
            "main(['--socket', sys.argv[1], '--workspace', sys.argv[2]])\n")
    daemon = subprocess.Popen([sys.executable, "-c", code, str(sockets / "s.sock"), str(root)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for(pids)
        _wait_for(sockets / "s.sock")
        _signal_then_reap(daemon, signum, pids, "the warm server")
        assert daemon.stderr is not None and b"stopped" in daemon.stderr.read(), "the server did not stop cleanly"
    finally:
        if daemon.poll() is None:
            daemon.kill()
        shutil.rmtree(sockets, ignore_errors=True)
