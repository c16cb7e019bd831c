"""This machine's lock per repository, for global and plugin installs (codeact.mcp.cache), with real servers."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codeact.config import Settings
from codeact.limits import Limits
from codeact.mcp import cache
from codeact.policy import Workspace
from codeact.runner import run
from codeact.toolset import assemble
from codeact.tools import ToolContext

from mcp_helpers import PY, RAW, demo

RAW_SCHEMA = '{"type": "object", "properties": {"x": {"type": "integer"}}}'


def raw(**env: str) -> dict:
    return {"type": "stdio", "command": PY, "args": [RAW], "env": {"RAW_SCHEMA": RAW_SCHEMA, **env}}


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_first_use_discovers_then_the_cache_answers(workspace, environ, _isolated_home: Path, monkeypatch) -> None:
    root = workspace({"raw": raw()})
    (_isolated_home / "mcp-config.json").write_text(json.dumps({"mcpServers": {"mine": raw()}}))
    said: list[str] = []
    lock, path = cache.cached_lock(root, environ, progress=said.append)
    assert path.parent == Path(environ["XDG_CACHE_HOME"]) / "codeact" / "mcp" and path.is_file()
    assert {n: e["status"] for n, e in lock["servers"].items()} == {"mine": "ok", "raw": "ok"}
    assert [t["name"] for t in lock["servers"]["raw"]["tools"]] == ["thing"]
    assert any("discovering 2 MCP server(s)" in line for line in said)

    said.clear()
    again, _ = cache.cached_lock(root, environ, progress=said.append)
    assert said == [] and again == lock  # nothing started

    # one server's configuration changes: only it is discovered again
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"raw": raw(EXTRA="1")}}))
    changed, _ = cache.cached_lock(root, environ, progress=said.append)
    assert any("discovering 1 MCP server(s)" in line and ": raw" in line for line in said), said
    assert changed["servers"]["mine"] == lock["servers"]["mine"]

    # a day later a working server is listed again (it may have been upgraded in place)
    day = cache.MAX_AGE
    monkeypatch.setattr(cache, "MAX_AGE", 0.0)
    said.clear()
    cache.cached_lock(root, environ, progress=said.append)
    assert any("discovering 2 MCP server(s)" in line for line in said), said
    monkeypatch.setattr(cache, "MAX_AGE", day)

    # a server removed from the configuration leaves the cache
    (root / ".mcp.json").unlink()
    gone, _ = cache.cached_lock(root, environ, progress=said.append)
    assert set(gone["servers"]) == {"mine"} and set(json.loads(path.read_text())["servers"]) == {"mine"}


def test_a_failed_server_is_retried_only_after_a_while(workspace, environ, monkeypatch) -> None:
    root = workspace({"broken": {"type": "stdio", "command": PY, "args": ["-c", "raise SystemExit(3)"]}})
    lock, _ = cache.cached_lock(root, environ, timeout=5, progress=lambda _l: None)
    assert lock["servers"]["broken"]["status"] == "failed" and lock["servers"]["broken"]["reason"]
    said: list[str] = []
    cache.cached_lock(root, environ, progress=said.append)
    assert said == []
    monkeypatch.setattr(cache, "RETRY_AFTER", 0.0)
    cache.cached_lock(root, environ, timeout=5, progress=said.append)
    assert any("broken" in line for line in said)


def test_a_damaged_cache_is_rebuilt(workspace, environ) -> None:
    root = workspace({"raw": raw()})
    path = cache.cache_path(root, environ)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    lock, _ = cache.cached_lock(root, environ, progress=lambda _l: None)
    assert lock["servers"]["raw"]["status"] == "ok" and json.loads(path.read_text()) == lock


@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_installs_outside_the_repository_offer_its_servers(workspace, environ, tmp_path: Path, scope: str) -> None:
    root = workspace({"demo": demo()})
    settings = Settings(scope=scope, tools=("view",))
    ctx = ToolContext(workspace=Workspace.at(root), limits=Limits(), environ=environ)
    assert {"demo.add", "demo.echo", "mcp_call"} <= set(assemble(ctx, settings, environ))
    assert not (root / ".codeact").exists(), "nothing is written into the repository"
    result = run("demo.add(a=40, b=2)", workspace=root, settings=settings, environ=environ, backend="monty")
    assert result.ok and result.result == 42, result.error


def test_a_repo_scope_install_uses_only_its_committed_lock(workspace, environ) -> None:
    root = workspace({"demo": demo()})
    ctx = ToolContext(workspace=Workspace.at(root), limits=Limits(), environ=environ)
    assert not any(name.startswith("demo.") for name in assemble(ctx, Settings(scope="repo"), environ))
    assert not (Path(environ["XDG_CACHE_HOME"]) / "codeact" / "mcp").exists()
