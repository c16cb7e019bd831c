"""Helpers shared by the MCP tests (kept out of conftest.py so test modules can import them)."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).parent / "servers"
DEMO = str(SERVERS / "demo_server.py")
RAW = str(SERVERS / "raw_server.py")
PY = sys.executable


def demo(**env: str) -> dict[str, Any]:
    """A config entry for the stdio test server with ``env``."""
    return {"type": "stdio", "command": PY, "args": [DEMO], "env": env}


def time_server(**extra: Any) -> dict[str, Any]:
    """A config entry for PyPI's mcp-server-time, pinned to UTC so its schemas do not depend on the host."""
    return {"type": "local", "command": PY, "args": ["-m", "mcp_server_time", "--local-timezone=UTC"], **extra}


def starts(path: Path) -> int:
    """How many times a test server recorded a start in ``path``."""
    return len(path.read_text().split()) if path.exists() else 0


def still_running(pid: int) -> bool:
    """Whether the process ``pid`` still runs (a zombie, exited and not reaped yet, runs no more)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True
