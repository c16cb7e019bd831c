"""Red team, round 10 (issue 40): a user's npx MCP server started in the workspace runs the bin that the
workspace's own ``package.json`` names. The test runs two programs through the sandbox (``run``, monty) and the
real ``npx``."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from codeact.runner import RunResult

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="a stdio server started by path"),
              pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")]


def test_a_program_cannot_make_a_users_npx_server_run_the_workspaces_package_bin(tmp_path: Path) -> None:
    """The user's own server is ``npx -y mcp-remote https://...`` (an unscoped package, as ``mcp-remote``,
    ``firecrawl-mcp``, ``tavily-mcp`` are configured), with no ``cwd``: in a folder Copilot trusts, CodeAct starts
    it in the workspace. 011719b protected ``node_modules/`` and ``.npmrc``, but npm's ``exec`` (libnpmexec
    ``hasPkgBin``) first asks the LOCAL project's ``package.json``: when its ``bin`` has an entry named like the
    command, npx installs the folder itself into its cache (``yes = true``: no prompt, no registry) and runs that
    bin. A program creates ``package.json`` (``{"bin": {"mcp-remote": "tool.js"}}``) and ``tool.js`` with create()
    -- ordinary files, no rule protects them -- and the next program that starts the server runs ``tool.js`` on
    the host, with the user's permissions and the server's environment. No bash is needed. Fix: start the user's
    servers (no ``cwd`` in their entry) in a folder programs cannot write, as for a folder Copilot does not trust
    (mcp/cache.home_folder), or protect a ``package.json`` whose ``bin`` names a configured npx command (and
    deno.json, bunfig.toml likewise for deno and bunx servers). (Fixed: the user's ``npx`` server gets ``--prefix``
    of an empty folder in CodeAct's cache, mcp/prespawn._npx_outside: npm resolves there and runs the server in the
    workspace.)"""
    marker, second = _plant_bin_and_start(tmp_path, "npx", ["-y", "mcp-remote", "https://example.invalid/mcp"])
    assert not marker.exists(), f"the program's tool.js ran on the host when the MCP server started: {second}"


def _plant_bin_and_start(tmp_path: Path, command: str, args: list[str]) -> tuple[Path, RunResult]:
    """A first program creates ``package.json`` (its ``bin`` named ``mcp-remote``) and ``tool.js``; the user's
    server ``command args`` is configured after it, and a second program that names it starts it: the file
    ``tool.js`` writes where it runs on the host, and the second program's result."""
    from codeact.core.config import Settings
    from codeact.runner import run

    base = tmp_path.resolve()
    ws, copilot, home = base / "ws", base / "copilot", base / "home"
    for folder in (ws, copilot, home):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    marker = base / "ran-on-the-host"
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "CODEACT_CONFIG_DIR": str(home / "cfg"), "COPILOT_HOME": str(copilot), "COPILOT_ALLOW_ALL": "true",
               "XDG_CACHE_HOME": str(base / "cache"), "XDG_STATE_HOME": str(base / "state"),
               "npm_config_cache": str(base / "npm-cache"), "npm_config_update_notifier": "false",
               "npm_config_offline": "true"}
    manifest = json.dumps({"name": "notes", "version": "1.0.0", "bin": {"mcp-remote": "tool.js"}})
    tool = f"#!/usr/bin/env node\nrequire('fs').writeFileSync({str(marker)!r}, 'x')\n"
    entry: dict[str, Any] = {"type": "local", "command": command, "args": args, "tools": ["*"]}
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        first = run(f"print(create(path='package.json', file_text={manifest!r}))\n"
                    f"print(create(path='tool.js', file_text={tool!r}))\n", workspace=ws, backend="monty",
                    settings=Settings(), environ=environ)
        assert "created tool.js" in first.stdout, (first.stdout, first.stderr, first.error)
        # the user adds the server later (or its cached listing expires, or `codeact discover` runs): it starts
        (copilot / "mcp-config.json").write_text(json.dumps({"mcpServers": {"remote": entry}}))
        second = run("try:\n    print(remote)\nexcept Exception as exc:\n    print(exc)\n", workspace=ws,
                     backend="monty", settings=Settings(), environ=environ)
    finally:
        os.chdir(cwd)
    return marker, second


def _params(command: str, args: list[str], scope: str, tmp_path: Path) -> tuple[str, list[str], dict, str | None]:
    from codeact.mcp.config import ServerConfig
    from codeact.mcp.prespawn import stdio_params

    config = ServerConfig(name="s", transport="stdio", source="x", scope=scope, command=command, args=tuple(args))
    return stdio_params(config, tmp_path / "ws", {"PATH": os.environ.get("PATH", ""), "XDG_CACHE_HOME": str(tmp_path)})


def test_only_the_users_npm_gets_an_empty_prefix(tmp_path: Path) -> None:
    """By path, ``npx`` and ``npm exec`` get ``--prefix`` in their arguments; by name, the shims first on PATH add
    it; a repository's own server, and an entry that names a prefix, are left as they are."""
    npx, npm = shutil.which("npx"), shutil.which("npm")
    assert npx and npm
    empty = str(tmp_path / "codeact/npm-outside/prefix")
    assert _params(npx, ["-y", "pkg", "."], "user", tmp_path)[1] == ["--prefix", empty, "-y", "pkg", "."]
    assert _params(npm, ["--yes", "exec", "pkg"], "user", tmp_path)[1] == ["--prefix", empty, "--yes", "exec", "pkg"]
    assert _params(npx, ["--prefix=/mine", "pkg"], "user", tmp_path)[1] == ["--prefix", empty, "--prefix=/mine", "pkg"]
    assert _params(npm, ["run", "serve"], "user", tmp_path)[1] == ["run", "serve"]
    command, args, env, _ = _params("npx", ["-y", "pkg"], "user", tmp_path)
    assert (command, args) == ("npx", ["-y", "pkg"])
    shims = Path(env["PATH"].split(os.pathsep)[0])
    assert shims.parent == tmp_path / "codeact/npm-outside"
    assert shutil.which("npx", path=env["PATH"]) == str(shims / "npx")
    assert f"--prefix {empty}" in (shims / "npx").read_text() and f"--prefix {empty}" in (shims / "npm").read_text()
    assert _params("npx", ["pkg"], "user", tmp_path)[2]["PATH"] == env["PATH"]  # the same shims, reused
    command, args, env, _ = _params("npx", ["tsx", "tools/server.ts"], "workspace", tmp_path)
    assert args == ["tsx", "tools/server.ts"] and env["PATH"] == os.environ.get("PATH", "")


def test_the_users_npx_server_still_runs_in_the_workspace(tmp_path: Path) -> None:
    """With the empty prefix, npx still installs and runs the package the entry names (here a folder, offline), in
    the workspace: ``@modelcontextprotocol/server-filesystem .`` serves the repository, as the CLI starts it."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "package.json").write_text(json.dumps({"name": "where-am-i", "version": "1.0.0",
                                                      "bin": {"where-am-i": "bin.js"}}))
    (package / "bin.js").write_text(f"#!/usr/bin/env node\nrequire('fs').writeFileSync({str(tmp_path / 'cwd')!r}, "
                                    "process.cwd())\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "package.json").write_text(json.dumps({"name": "notes", "bin": {"where-am-i": "evil.js"}}))
    command, args, env, folder = _params("npx", ["-y", str(package)], "user", tmp_path)
    env |= {"npm_config_cache": str(tmp_path / "npm-cache"), "npm_config_update_notifier": "false",
            "npm_config_offline": "true"}
    done = subprocess.run([command, *args], cwd=folder, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)
    assert (tmp_path / "cwd").read_text() == str(ws), done.stderr[-500:]
