"""Fixtures for the live-provider tests: a running hub, raw WebSocket clients, programs run against live tools."""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("websockets", reason="websockets is not installed (template requirements.txt pins it)")

from providers_helpers import RESERVED, TOKEN  # noqa: E402

from codeact.providers.hub import ProviderHub  # noqa: E402


@pytest.fixture
def hub() -> Iterator[ProviderHub]:
    hub = ProviderHub(token=TOKEN, reserved=lambda: RESERVED, allowed_origins=("http://localhost:5173",),
                      max_result=1000)
    hub.start()
    yield hub
    hub.stop()


@pytest.fixture
def url(hub: ProviderHub) -> str:
    return str(hub.status()["url"])


class Raw:
    """A raw provider connection: send dicts, receive dicts."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    def send(self, data: dict[str, Any] | str) -> None:
        self.connection.send(data if isinstance(data, str) else json.dumps(data))

    def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        return json.loads(self.connection.recv(timeout=timeout))

    def hello(self, name: str, tools: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        self.send({"type": "hello", "role": "provider", "name": name, "tools": tools, **extra})
        return self.recv()

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def raw(url: str) -> Iterator[Callable[..., Raw]]:
    """``raw(headers=None, path="", **options)``: an open connection (authorised by header unless headers=...)."""
    from websockets.sync.client import connect

    opened: list[Raw] = []

    def open_(headers: dict[str, str] | None = None, path: str = "", **options: Any) -> Raw:
        given = {"Authorization": f"Bearer {TOKEN}"} if headers is None else headers
        conn = Raw(connect(url + path, additional_headers=given, open_timeout=5, proxy=None, **options))
        opened.append(conn)
        return conn

    yield open_
    for conn in opened:
        conn.close()


@pytest.fixture
def run_program(tmp_path: Path) -> Callable[..., Any]:
    """``run_program(code, tools, timeout=10)``: the program's RunResult with the monty backend."""
    import codeact
    from codeact.core.config import Settings

    space = tmp_path / "ws"
    space.mkdir()
    environ = {"CODEACT_CONFIG_DIR": str(tmp_path / "config"), "PATH": os.environ.get("PATH", "")}

    def run_(code: str, tools: dict[str, Any], timeout: float = 10) -> Any:
        return codeact.run(code, workspace=space, backend="monty", tools=tools, settings=Settings(),
                           environ=environ, limits=codeact.Limits(timeout=timeout))

    return run_
