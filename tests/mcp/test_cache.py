"""This machine's lock per repository, for global and plugin installs (codeact.mcp.cache), with real servers."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp_helpers import PY, RAW, demo

from codeact.core.boundary import Workspace
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.mcp import cache
from codeact.runner import run
from codeact.tools.assemble import assemble

RAW_SCHEMA = '{"type": "object", "properties": {"x": {"type": "integer"}}}'


def raw(**env: str) -> dict:
    return {"type": "stdio", "command": PY, "args": [RAW], "env": {"RAW_SCHEMA": RAW_SCHEMA, **env}}


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    """A trusting environment (COPILOT_ALLOW_ALL=true) with its own cache folder."""
    env = {k: v for k, v in os.environ.items() if k != "COPILOT_ALLOW_ALL"}
    return {**env, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COPILOT_ALLOW_ALL": "true"}


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
    written = json.loads(path.read_text())
    assert lock["servers"]["raw"]["status"] == "ok" and {**written, "trusted": True} == lock


@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_installs_outside_the_repository_offer_its_servers(workspace, environ, scope: str) -> None:
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


def test_excluded_servers_are_never_started(workspace, environ) -> None:
    root = workspace({"raw": raw(), "other": raw(OTHER="1")})
    said: list[str] = []
    lock, _ = cache.cached_lock(root, environ, exclude=["other"], progress=said.append)
    assert set(lock["servers"]) == {"raw"} and not any("other" in line for line in said)


def test_a_changed_value_is_a_changed_server(workspace, environ) -> None:
    root = workspace({"raw": raw(TOKEN="one")})
    cache.cached_lock(root, environ, progress=lambda _l: None)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"raw": raw(TOKEN="two")}}))
    said: list[str] = []
    lock, path = cache.cached_lock(root, environ, progress=said.append)
    assert any("discovering 1 MCP server(s)" in line for line in said)
    assert "two" not in path.read_text() and "one" not in path.read_text()  # values only as a hash


def test_repository_servers_start_only_where_copilot_trusts_the_folder(workspace, environ, _isolated_home) -> None:
    root = workspace({"raw": raw()})
    (_isolated_home / "mcp-config.json").write_text(json.dumps({"mcpServers": {"mine": raw()}}))
    untrusted = {k: v for k, v in environ.items() if k != "COPILOT_ALLOW_ALL"}
    said: list[str] = []
    lock, _ = cache.cached_lock(root, untrusted, progress=said.append)
    assert set(lock["servers"]) == {"mine"}  # the user's own server; the repository's waits for consent
    assert any("not starting this repository's MCP server(s) raw: Copilot does not trust" in line for line in said)

    # `codeact discover` is consent: later runs keep its entry for the same configuration
    forced, _ = cache.cached_lock(root, untrusted, force=True, progress=lambda _l: None)
    assert set(forced["servers"]) == {"mine", "raw"}
    said.clear()
    again, _ = cache.cached_lock(root, untrusted, progress=said.append)
    assert set(again["servers"]) == {"mine", "raw"} and said == []
    # ...but not for a changed command line
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"raw": raw(CHANGED="1")}}))
    changed, _ = cache.cached_lock(root, untrusted, progress=said.append)
    assert set(changed["servers"]) == {"mine"} and any("not starting" in line for line in said)

    # a folder Copilot trusts (its config.json), or one inside it
    (_isolated_home / "config.json").write_text("// This file is managed automatically.\n"
                                                + json.dumps({"trustedFolders": [str(root.parent)]}))
    assert cache.copilot_trusts(root, untrusted) and not cache.copilot_trusts(root.parent.parent, untrusted)
    trusted, _ = cache.cached_lock(root, untrusted, progress=lambda _l: None)
    assert set(trusted["servers"]) == {"mine", "raw"}


def test_discovery_works_from_inside_an_event_loop(workspace, environ) -> None:
    import asyncio

    root = workspace({"raw": raw()})

    async def caller() -> dict:
        return cache.cached_lock(root, environ, progress=lambda _l: None)[0]

    assert asyncio.run(caller())["servers"]["raw"]["status"] == "ok"


def test_a_relative_xdg_cache_home_is_ignored(tmp_path) -> None:
    from codeact.backends.probe import cache_dir

    assert cache_dir({"XDG_CACHE_HOME": "rel/cache", "HOME": str(tmp_path)}) == tmp_path / ".cache" / "codeact"


def test_a_lock_the_repository_ships_is_not_used_outside_repo_scope(workspace, environ) -> None:
    from codeact.mcp.discovery import discover

    root = workspace({"evil": raw()})
    discover(root)  # a lock as the repository could commit it, naming its own server
    assert (root / ".codeact" / "tools.lock.json").is_file()
    untrusted = {k: v for k, v in environ.items() if k != "COPILOT_ALLOW_ALL"}
    ctx = ToolContext(workspace=Workspace.at(root), limits=Limits(), environ=untrusted)
    assert not any(name.startswith("evil.") for name in assemble(ctx, Settings(scope="global"), untrusted))
    assert any(name.startswith("evil.") for name in assemble(ctx, Settings(scope="repo"), untrusted))


def test_a_server_whose_configuration_changed_after_listing_is_not_started(workspace, environ, tmp_path) -> None:
    from codeact.mcp.discovery import discover

    root = workspace({"demo": demo()})
    discover(root)
    marker = tmp_path / "started"
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": {
        "type": "stdio", "command": PY, "args": ["-c", f"open({str(marker)!r}, 'w')"]}}}))
    result = run("demo.add(a=1, b=2)", workspace=root, settings=Settings(scope="repo"), environ=environ,
                 backend="monty")
    assert not result.ok and "configuration (.mcp.json) changed since its tools were listed" in result.error.message
    assert not marker.exists()


def test_in_an_untrusted_folder_the_users_servers_start_from_home(workspace, environ, tmp_path,
                                                                   _isolated_home) -> None:
    """`python -m server` imports from its working folder first: started in the repository, a module a program
    wrote there would run on the host."""
    from mcp_helpers import DEMO

    site = tmp_path / "site" / "plantme"
    site.mkdir(parents=True)
    (site / "__main__.py").write_text(Path(DEMO).read_text())
    (_isolated_home / "mcp-config.json").write_text(json.dumps({"mcpServers": {"mine": {
        "command": PY, "args": ["-m", "plantme"], "env": {"PYTHONPATH": str(tmp_path / "site")}}}}))
    root = workspace({})
    untrusted = {k: v for k, v in environ.items() if k != "COPILOT_ALLOW_ALL"}
    marker = tmp_path / "planted-module-ran"
    program = (f'create(path="plantme/__main__.py", file_text="open({str(marker)!r}, \'w\')\\n")\n'
               'mine.add(a=1, b=2)')
    result = run(program, workspace=root, settings=Settings(scope="global"), environ=untrusted, backend="monty")
    assert result.ok and result.result == 3, result.error
    assert not marker.exists()


def test_discover_outside_repo_scope_writes_this_machines_lock_and_check_honours_exclusions(
        workspace, environ, monkeypatch, capsys) -> None:
    import argparse

    from codeact.cli import discover
    from codeact.core import config

    root = workspace({"raw": raw(), "other": raw(OTHER="1")})
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(config.Settings, "load", classmethod(
        lambda cls, _home=None: cls(scope="global", extra={"mcp_exclude": ["other"]})))
    args = argparse.Namespace(workspace=str(root), check=False, json=False, timeout=10.0)
    assert discover.main(args) == 0
    path = cache.cache_path(root, environ)
    assert f"wrote {path}: 1 server(s)" in capsys.readouterr().out
    assert not (root / ".codeact").exists()
    assert discover.main(argparse.Namespace(**{**vars(args), "check": True})) == 0
    assert "matches the configured MCP servers" in capsys.readouterr().out
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"raw": raw(CHANGED="1"), "other": raw()}}))
    assert discover.main(argparse.Namespace(**{**vars(args), "check": True})) == 1
    assert "differs: server 'raw'" in capsys.readouterr().out


def test_a_server_that_fails_where_it_worked_keeps_its_tools_marked(workspace, environ, monkeypatch) -> None:
    """Issue 28.3: a failed re-listing (a busy machine, a server briefly down) keeps the last known tools, marked
    with the failure, and is tried again after RETRY_AFTER, not at every run."""
    root = workspace({"raw": raw()})
    lock, path = cache.cached_lock(root, environ, progress=lambda _l: None)
    assert lock["servers"]["raw"]["status"] == "ok"
    said: list[str] = []
    busy = {**environ, "RAW_START_DELAY": "5"}
    lock, _ = cache.cached_lock(root, busy, timeout=1, force=True, progress=said.append)
    entry = lock["servers"]["raw"]
    assert entry["status"] == "ok" and [t["name"] for t in entry["tools"]] == ["thing"]
    assert entry["last_failure"].startswith("did not start within 1 s") and entry["failed_at"]
    assert any("kept the 1 tool(s) last listed for raw" in line for line in said)
    assert json.loads(path.read_text())["servers"]["raw"]["failed_at"] == entry["failed_at"]
    said.clear()
    monkeypatch.setattr(cache, "MAX_AGE", 0.0)  # due for a new listing, but it failed a moment ago
    cache.cached_lock(root, busy, timeout=1, progress=said.append)
    assert said == []
    monkeypatch.setattr(cache, "RETRY_AFTER", 0.0)
    lock, _ = cache.cached_lock(root, environ, progress=said.append)
    assert "failed_at" not in lock["servers"]["raw"] and lock["servers"]["raw"]["status"] == "ok"


def test_a_servers_configuration_is_checked_once_a_run_and_a_mismatch_at_every_call() -> None:
    from codeact.mcp.bindings import _resolver
    from codeact.mcp.config import LoadedConfig, ServerConfig
    from codeact.mcp.sessions import ServerUnavailable

    good = ServerConfig(name="demo", transport="stdio", source=".mcp.json", scope="workspace", command=PY)
    moved = ServerConfig(name="moved", transport="stdio", source=".mcp.json", scope="workspace", command=PY)
    lock = {"servers": {"demo": {"config_hash": good.config_hash(), "transport": "stdio"},
                        "moved": {"config_hash": "sha256:0000000000000000", "transport": "stdio"}}}
    resolve = _resolver(LoadedConfig({"demo": good, "moved": moved}, [], []), {}, lock)
    assert resolve("demo") is good
    lock["servers"]["demo"]["config_hash"] = "sha256:changed"  # checked once a run: the first answer stands
    assert resolve("demo") is good
    for _ in range(2):  # a refusal is never remembered as a pass
        with pytest.raises(ServerUnavailable, match="changed since its tools were listed"):
            resolve("moved")


def test_a_runs_discovery_prints_one_short_line_naming_its_log(workspace, environ, capfd) -> None:
    """Issue 43.5: the lines of a discovery a run makes (global and plugin scope) go to a log file beside the lock;
    the run's output carries one short line that names it."""
    root = workspace({"raw": raw(), "other": raw(), "broken": {"command": str(root_missing := "/no/such/server")}})
    lock, path = cache.cached_lock(root, environ)
    err = capfd.readouterr().err
    log = cache.discovery_log(path)
    assert err == (f"codeact: MCP servers discovered for this repository: 2 of 3 ok, 2 tool(s) (details: {log})\n")
    text = log.read_text()
    assert "discovering 3 MCP server(s)" in text and root_missing in text
    cache.cached_lock(root, environ)  # known now: nothing discovered, nothing said
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_a_program_that_names_no_mcp_server_starts_none(workspace, environ, scope: str, capfd) -> None:
    """Issue 43.5: discovery happens only for a program that calls an MCP tool. A first run whose program names no
    server starts none, says nothing and writes no lock; the first program that names one discovers them."""
    root = workspace({"demo": demo(), "my-raw": raw()})
    settings = Settings(scope=scope, tools=("view",))
    path = cache.cache_path(root, environ)
    quiet = run("print(6 * 7)", workspace=root, settings=settings, environ=environ, backend="monty")
    assert quiet.ok and quiet.stdout == "42\n", quiet.error
    assert capfd.readouterr().err == "" and not path.exists()
    named = run("print(demo.add(a=40, b=2))", workspace=root, settings=settings, environ=environ, backend="monty")
    assert named.ok and named.stdout == "42\n", named.error
    assert "MCP servers discovered for this repository: 2 of 2 ok" in capfd.readouterr().err and path.is_file()


def test_what_names_an_mcp_server() -> None:
    from codeact.tools.assemble import names_mcp

    servers = ["demo", "my-raw", "class"]
    for program in ("demo.add(a=1, b=2)", "x = my_raw.thing(x=1)", "class_.go()", "mcp_call('demo', 'add')",
                    "print(mcp_resource(server='demo', uri='x'))", "f = demo\nf.add(a=1, b=2)"):
        assert names_mcp(program, servers), program
    for program in ("print(6 * 7)", "demos = 1", "view(path='README.md')", "x = undemo.add()"):
        assert not names_mcp(program, servers), program


def test_the_discover_fix_names_the_launcher_by_its_full_path(workspace, environ) -> None:
    """Issue 41.7: `codeact` is not on PATH; a printed fix names this install's launcher so it can be pasted."""
    from codeact.core.config import codeact_home

    root = workspace({"raw": raw()})
    settings = Settings(scope="global", tools=("view",))
    done = run('mcp_call(server="nope", tool="thing", arguments={"x": 1})', workspace=root, settings=settings,
               environ=environ, backend="monty")
    assert not done.ok and "no MCP server 'nope' here" in done.error.message, done.error
    assert f"`{codeact_home() / 'bin' / 'codeact'} discover`" in done.error.message, done.error.message
