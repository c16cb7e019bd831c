"""The session pool on its own: lazy start, one session per server, failures, closing, async callers."""
from __future__ import annotations

import asyncio
import gc
import json
import time
from pathlib import Path

import pytest
from mcp_helpers import PY, RAW, demo, starts

from codeact.mcp.config import load_servers
from codeact.mcp.session_pool import SessionPool
from codeact.mcp.sessions import ServerUnavailable


def pool_for(tmp_path: Path, servers: dict, **kw) -> SessionPool:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    configs = load_servers(tmp_path, {"HOME": str(tmp_path)}).servers
    return SessionPool(configs.__getitem__, cwd=tmp_path, **kw)


def raw(**env: str) -> dict:
    schema = json.dumps({"type": "object", "properties": {"x": {"type": "integer"}}})
    return {"command": PY, "args": [RAW], "env": {"RAW_SCHEMA": schema, **env}}


def test_lazy_one_session_text_results_and_close(tmp_path: Path) -> None:
    pool = pool_for(tmp_path, {"a": raw(), "b": raw()})
    assert pool.starts == {}  # nothing starts before the first call
    assert pool.call("a", "thing", {"x": 1}) == '{"x": 1}'  # no structured content: the text
    assert pool.call("a", "thing", {"x": 2}) == '{"x": 2}'
    assert pool.starts == {"a": 1}
    pool.call("b", "thing")
    assert pool.starts == {"a": 1, "b": 1}
    pool.close()
    pool.close()  # idempotent
    with pytest.raises(Exception, match="closed"):
        pool.call("a", "thing")


def test_called_from_async_code(tmp_path: Path) -> None:
    pool = pool_for(tmp_path, {"a": raw()})

    async def inside_a_running_loop() -> str:
        return pool.call("a", "thing", {"x": 3})  # the synchronous API, called from async code

    assert asyncio.run(inside_a_running_loop()) == '{"x": 3}'
    assert pool.call("a", "thing", {"x": 4}) == '{"x": 4}' and pool.starts == {"a": 1}
    pool.close()


def test_server_that_cannot_start(tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    pool = pool_for(tmp_path, {"crash": demo(DEMO_MODE="crash", DEMO_STARTS_FILE=str(counter)),
                               "missing": {"command": str(tmp_path / "nope")}})
    with pytest.raises(ServerUnavailable, match=r"MCP server 'crash' failed: .*refusing to start"):
        pool.call("crash", "add", {"a": 1})
    with pytest.raises(ServerUnavailable, match=r"MCP server 'crash' failed"):
        pool.call("crash", "add", {"a": 1})  # remembered: no second start
    assert starts(counter) == 1
    with pytest.raises(ServerUnavailable, match="command not found"):
        pool.call("missing", "x")
    pool.close()


def test_server_that_hangs_at_start(tmp_path: Path) -> None:
    pool = pool_for(tmp_path, {"hang": demo(DEMO_MODE="hang")}, connect_timeout=1.0)
    began = time.perf_counter()
    with pytest.raises(ServerUnavailable, match=r"did not start within 1 s"):
        pool.call("hang", "add", {"a": 1})
    assert time.perf_counter() - began < 3
    pool.close()


def test_dropping_the_pool_closes_its_sessions(tmp_path: Path) -> None:
    pool = pool_for(tmp_path, {"a": raw()})
    pool.call("a", "thing")
    state = pool._state
    del pool
    gc.collect()
    assert state.closed and all(c.task is not None and c.task.done() for c in state.connections.values())
