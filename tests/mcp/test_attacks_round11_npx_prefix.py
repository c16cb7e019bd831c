"""Red team, round 11 (issue 40): mcp/npm_outside.py leaves a user's npx server alone when ANY of its arguments is
``--prefix``, the server's own included. The test starts the command stdio_params gives with the real ``npx``
(offline)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="npm_outside is POSIX only"),
              pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")]


def test_a_users_npx_server_taking_its_own_prefix_option_runs_no_workspace_bin(tmp_path: Path) -> None:
    """``outside()`` returns the arguments unchanged, and puts no shim on PATH, when any argument is ``--prefix``
    or ``--prefix=...``, meant for an entry that names npm's prefix itself. But arguments after the package are
    the SERVER's: ``npx -y cache-mcp --prefix app:`` (a server taking a key prefix, a path prefix, a URL prefix)
    then starts in the workspace with npm's project there, and libnpmexec runs the bin the workspace's own
    ``package.json`` names for ``cache-mcp`` (round 10's attack): a program that created ``package.json`` and
    ``tool.js`` with create() runs ``tool.js`` on the host when the server starts. Fix: look for ``--prefix``
    only among npm's own options, before the package spec (or the first argument not starting with ``-``), and
    keep the shims on PATH whatever the arguments."""
    from codeact.mcp.config import ServerConfig
    from codeact.mcp.prespawn import stdio_params

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    marker = base / "ran-on-the-host"
    (ws / "package.json").write_text(json.dumps({"name": "notes", "version": "1.0.0",
                                                 "bin": {"cache-mcp": "tool.js"}}))
    (ws / "tool.js").write_text(f"#!/usr/bin/env node\nrequire('fs').writeFileSync({str(marker)!r}, 'x')\n")
    config = ServerConfig(name="cache", transport="stdio", source="x", scope="user", command="npx",
                          args=("-y", "cache-mcp", "--prefix", "app:"))
    command, args, env, _ = stdio_params(config, ws, {"PATH": os.environ.get("PATH", ""),
                                                      "XDG_CACHE_HOME": str(base / "cache")})
    env |= {"npm_config_cache": str(base / "npm-cache"), "npm_config_update_notifier": "false",
            "npm_config_offline": "true", "HOME": str(base)}
    subprocess.run([command, *args], cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                   timeout=120)
    assert not marker.exists(), "the workspace's tool.js ran on the host when the user's npx server started"
