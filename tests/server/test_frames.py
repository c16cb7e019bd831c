"""Issue 46.7: every frame of the warm server's protocol is a typed dict both ends check; a malformed frame gets a
clear error naming what is wrong, at either end."""
from __future__ import annotations

import io
import marshal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from codeact import client, frames
from codeact.frames import BadFrame, check_reply, check_request

RUN = {"op": "run", "protocol": frames.PROTOCOL, "argv": ["run", "--code", "1"], "cwd": "/w", "env": {"A": "1"},
       "stdin": None, "workspace": "/w"}


def test_every_well_formed_request_and_reply_passes_unchanged() -> None:
    assert check_request(RUN) is RUN
    assert check_request({"op": "ping", "protocol": 1}) == {"op": "ping", "protocol": 1}
    assert check_reply({"accepted": True, "wall_s": 31.5}, ("accepted", "retry", "refused"))
    assert check_reply({"exit": 0}, ("out", "err", "exit")) == {"exit": 0}


@pytest.mark.parametrize(("frame", "message"), [
    ([1, 2], "a request must be a dict, not list"),
    ({"op": "dance"}, "unknown request 'dance' (one of: ping, status, stop, run)"),
    ({**RUN, "argv": "run --code 1"}, "the 'run' request: 'argv' must be str list, not str"),
    ({**RUN, "env": {"A": 1}}, "the 'run' request: 'env' must be str dict, not dict"),
    ({k: v for k, v in RUN.items() if k != "cwd"}, "the 'run' request lacks 'cwd'"),
    ({**RUN, "protocol": True}, "the 'run' request: 'protocol' must be int, not bool"),
])
def test_a_malformed_request_says_what_is_wrong(frame: Any, message: str) -> None:
    with pytest.raises(BadFrame) as caught:
        check_request(frame)
    assert str(caught.value) == message


@pytest.mark.parametrize(("frame", "kinds", "message"), [
    ({"accepted": True}, ("accepted",), "the 'accepted' answer lacks 'wall_s'"),
    ({"exit": "0"}, ("out", "err", "exit"), "the 'exit' answer: 'exit' must be int, not str"),
    ({"hello": 1}, ("out", "err", "exit"), "an answer with none of the keys out, err, exit (it has: hello)"),
])
def test_a_malformed_reply_says_what_is_wrong(frame: Any, kinds: tuple[str, ...], message: str) -> None:
    with pytest.raises(BadFrame) as caught:
        check_reply(frame, kinds)
    assert str(caught.value) == message


def test_bytes_that_are_no_frame_are_a_bad_frame() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall((5).to_bytes(4, "big") + b"\xffjunk")
        with pytest.raises(BadFrame, match="not marshal-ed data"):
            frames.receive(ours)
        data = marshal.dumps([1])
        theirs.sendall(len(data).to_bytes(4, "big") + data)
        with pytest.raises(BadFrame, match="a frame must be a dict, not list"):
            frames.receive(ours)


def test_the_server_refuses_a_malformed_request_with_the_reason(tmp_path: Path) -> None:
    from codeact.server.daemon import Server

    server = Server(str(tmp_path / "s.sock"), tmp_path, {"HOME": str(tmp_path)})
    ours, theirs = socket.socketpair()
    with ours:
        handler = threading.Thread(target=server._handle, args=(theirs,))
        handler.start()
        frames.send(ours, {**RUN, "env": ["A=1"]})  # type: ignore[typeddict-item]
        assert frames.receive(ours) == {"refused": "malformed request: the 'run' request: 'env' must be str dict, "
                                                   "not list"}
        handler.join(10)
    assert not server.retired  # the same protocol, badly written: refused, the server goes on


def test_the_client_says_a_malformed_frame_during_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    ours, theirs = socket.socketpair()
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    with ours, theirs:
        frames.send(theirs, {"out": "partial\n"})
        frames.send(theirs, {"exit": "zero"})  # type: ignore[typeddict-item]
        assert client._follow(ours) == 1
    assert err.getvalue() == ("codeact: the server sent a malformed frame during the run (the 'exit' answer: 'exit' "
                              "must be int, not str); tools may already have run\n")
