"""Fixtures for the MCP tests: real servers (the test server, PyPI's mcp-server-time, an HTTP and an SSE server)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import DEMO, PY, RAW


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads the real user's ~/.copilot/mcp-config.json."""
    home = tmp_path / "copilot-home"
    home.mkdir()
    monkeypatch.setenv("COPILOT_HOME", str(home))
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Callable[..., Path]:
    """``workspace(servers, file=".mcp.json", exclude=None)``: a folder with a ``.git`` and an MCP config."""

    def make(servers: dict[str, Any] | None = None, *, file: str = ".mcp.json",
             exclude: list[str] | None = None) -> Path:
        root = tmp_path / "ws"
        (root / ".git").mkdir(parents=True, exist_ok=True)
        if servers is not None:
            path = root / file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"mcpServers": servers}, indent=2))
        if exclude is not None:
            (root / ".codeact").mkdir(exist_ok=True)
            (root / ".codeact" / "settings.json").write_text(json.dumps({"mcp_exclude": exclude}))
        return root

    return make


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(flag: str, starts_file: Path, server: str = DEMO, **extra: str) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "DEMO_STARTS_FILE": str(starts_file), **extra}
    proc = subprocess.Popen([PY, server, flag, str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"the {flag} test server exited with {proc.returncode}")
            time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError(f"the {flag} test server did not listen on port {port}")
    try:
        yield f"http://127.0.0.1:{port}/" + ("mcp" if flag == "--http" else "sse")
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A streamable-HTTP test server on 127.0.0.1 (random free port), for the whole session."""
    yield from _serve("--http", tmp_path_factory.mktemp("http") / "starts")


@pytest.fixture(scope="session")
def sse_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An SSE test server on 127.0.0.1 (random free port), for the whole session."""
    yield from _serve("--sse", tmp_path_factory.mktemp("sse") / "starts")


@pytest.fixture(scope="session")
def http_bad_schema_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The raw server over streamable HTTP: its tool ``thing`` has an input schema MCP forbids, ``fine`` is valid.
    (The SDK's own server refuses to send an invalid schema, so it cannot play this part.)"""
    fine = {"name": "fine", "description": "A valid tool.", "inputSchema": {"type": "object", "properties": {}}}
    yield from _serve("--http", tmp_path_factory.mktemp("http-bad") / "starts", RAW, RAW_TOOLS=json.dumps([fine]))


@pytest.fixture
def silent_http_url() -> Iterator[str]:
    """An HTTP address that accepts connections and never answers (a server that starts too slowly)."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        stop.set()
        thread.join(2)
        for conn in held:
            conn.close()
        listener.close()
