"""``python handshake_shim.py COMMAND [ARGS...]``: run an MCP stdio server behind a pass-through that answers the
Copilot CLI's ``server/discover`` probe itself with "method not found", so the CLI opens with the 2025 handshake.

Why: CLI 1.0.102 first sends ``server/discover`` (the 2026-07-28 protocol) and, when no answer comes in time,
sends ``initialize`` on the same pipe. A server on the Python MCP SDK 2.x takes its era from the first request it
reads: when it starts slowly (16 servers starting at once on a loaded machine), it reads the probe, locks the
connection to 2026-07-28 and refuses the late ``initialize`` with -32022, and the CLI runs the session without
it. Answered at once, the probe fails fast, and the server reads ``initialize`` first, as any 2025 client sends.
Every other line passes through unchanged, both ways. Stdlib only: it starts in milliseconds.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import BinaryIO

PROBE = "server/discover"


def _relay_replies(child: subprocess.Popen[bytes], dst: BinaryIO) -> None:
    """The server's stdout to ours; when it ends (the server exited), this process ends with its status."""
    assert child.stdout is not None
    for line in iter(child.stdout.readline, b""):
        dst.write(line)
        dst.flush()
    os._exit(child.wait())


def main(argv: list[str]) -> int:
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = sys.stdout.buffer
    lock = threading.Lock()

    class Locked:
        def write(self, data: bytes) -> None:
            with lock:
                out.write(data)

        def flush(self) -> None:
            with lock:
                out.flush()

    threading.Thread(target=_relay_replies, args=(child, Locked()), daemon=True).start()
    for line in iter(sys.stdin.buffer.readline, b""):
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg.get("method") == PROBE and "id" in msg:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
            with lock:
                out.write(json.dumps(reply).encode() + b"\n")
                out.flush()
            continue
        assert child.stdin is not None
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except BrokenPipeError:
            break
    if child.stdin is not None:
        child.stdin.close()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
