"""The server's deadline watcher, in process: a run stuck past its wall limit in code that gives the interpreter up
(so the server still runs) is answered and abandoned by one watcher thread, and the server retires; a run that ends
in time is answered once; nothing is sent for a run after its answer."""
from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from codeact import client
from codeact.server import daemon, runs

pytestmark = pytest.mark.skipif(os.name != "posix", reason="Unix sockets")


def _server(tmp_path: Path) -> tuple[daemon.Server, dict[str, str]]:
    env = {k: v for k, v in os.environ.items()}
    server = daemon.Server(str(tmp_path / "s.sock"), tmp_path, env)
    threading.Thread(target=server._watch_deadlines, daemon=True).start()
    return server, env


def _frames(sock: socket.socket, until: float) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    sock.settimeout(until)
    while True:
        try:
            frame = client.receive(sock)
        except TimeoutError:
            return got
        if frame is None:
            return got
        got.append(frame)
        if "exit" in frame:
            return got


def test_a_run_stuck_past_its_wall_limit_is_abandoned_and_the_server_retires(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    server, env = _server(tmp_path)
    release = threading.Event()

    def stuck(_message: Any, out: Any, _err: Any) -> int:
        out("started\n")
        release.wait(30)  # gives the GIL up: the server goes on, the run does not
        out("late\n")
        return 0

    monkeypatch.setattr(runs, "execute", stuck)
    monkeypatch.setattr(runs, "wall_limit", lambda _m: 0.5)
    ours, theirs = socket.socketpair()
    message = {"op": "run", "protocol": client.PROTOCOL, "env": env, "workspace": str(tmp_path), "argv": ["run"]}
    worker = threading.Thread(target=server._run, args=(theirs, message), daemon=True)
    t0 = time.monotonic()
    worker.start()
    frames = _frames(ours, 5)
    took = time.monotonic() - t0
    assert frames[0] == {"accepted": True, "wall_s": 0.5}
    assert frames[1] == {"out": "started\n"}
    assert "it was abandoned" in frames[2]["err"] and frames[3] == {"exit": 1}
    assert 0.5 <= took < 2.5, took
    assert server.stopping.wait(2) and server.retired and server.active == 0
    release.set()
    worker.join(5)
    theirs.close()
    ours.settimeout(2)
    assert client.receive(ours) is None, "nothing is sent after the answer (its late print included)"


def test_a_run_that_ends_in_time_is_answered_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server, env = _server(tmp_path)
    monkeypatch.setattr(runs, "execute", lambda _m, out, _e: (out("42\n"), 0)[1])
    monkeypatch.setattr(runs, "wall_limit", lambda _m: 0.3)
    ours, theirs = socket.socketpair()
    message = {"op": "run", "protocol": client.PROTOCOL, "env": env, "workspace": str(tmp_path), "argv": ["run"]}
    server._run(theirs, message)
    theirs.close()
    assert _frames(ours, 2) == [{"accepted": True, "wall_s": 0.3}, {"out": "42\n"}, {"exit": 0}]
    time.sleep(0.6)  # past its limit: the watcher has nothing to abandon
    assert not server.retired and server.active == 0 and server.runs == {}
