"""npm's project files are protected: npx, which starts the user's MCP servers in the repository (Copilot does, and
CodeAct does in a folder Copilot trusts), runs a package installed in the repository's ``node_modules`` before the
registry's and runs what the repository's ``.npmrc`` names (``node-options``, ``script-shell``). A program that
wrote either would run its code on the host at the next server start, bash or no bash."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_attacks_round6_links import _run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX paths and an npx shell script")

PLANTED = ("node_modules/.bin/mcp-server-demo", "node_modules/@acme/mcp-demo/package.json", ".npmrc", "sub/.npmrc",
           "web/node_modules/left-pad/index.js", "NODE_MODULES/x.js", "node_modules./x.js")


@pytest.mark.parametrize("idiom", [  # the sandbox's own open() and pathlib write nothing: they send to these
    "create(path={p!r}, file_text='x')",
    "sql(db={p!r}, query='create table t (x)')",
])
def test_a_program_writes_no_npm_project_file(tmp_path: Path, idiom: str) -> None:
    ws = tmp_path.resolve() / "ws"
    (ws / "node_modules/left-pad").mkdir(parents=True)
    (ws / "node_modules/left-pad/index.js").write_text("module.exports = 1\n")
    code = "".join(f"try:\n    {idiom.format(p=p)}\n    print('written', {p!r})\n"
                   f"except Exception as exc:\n    print('refused', {p!r}, str(exc)[:160])\n" for p in PLANTED)
    code += ("try:\n    edit(path='node_modules/left-pad/index.js', old_str='1', new_str='2')\n    print('edited')\n"
             "except Exception as exc:\n    print('refused edit', str(exc)[:160])\n"
             "print(open('node_modules/left-pad/index.js').read().strip())\n")
    out = _run(ws, tmp_path, code)
    assert "written" not in out and "edited" not in out, out
    assert out.count("npm's project files") == len(PLANTED) + 1, out
    assert "module.exports = 1" in out, out  # reading stays allowed
    assert not (ws / ".npmrc").exists() and not (ws / "node_modules/.bin").exists()
    assert (ws / "node_modules/left-pad/index.js").read_text() == "module.exports = 1\n"


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")
def test_npx_runs_a_package_planted_in_the_workspace(tmp_path: Path) -> None:
    """Why the rule exists, checked against the real npx: a server entry ``npx -y @acme/mcp-demo`` started in a
    folder whose node_modules holds that package runs the folder's copy (no registry is asked)."""
    ws = tmp_path.resolve() / "ws"
    package = ws / "node_modules/@acme/mcp-demo"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@acme/mcp-demo", "version": "1.0.0", "bin": {"mcp-demo": "x.js"}}')
    bin_dir = ws / "node_modules/.bin"
    bin_dir.mkdir()
    (bin_dir / "mcp-demo").write_text(f"#!/bin/sh\necho planted > {tmp_path}/ran\n")
    (bin_dir / "mcp-demo").chmod(0o755)
    env = {**os.environ, "npm_config_cache": str(tmp_path / "npm-cache"), "npm_config_update_notifier": "false"}
    subprocess.run(["npx", "-y", "@acme/mcp-demo"], cwd=ws, env=env, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=120)
    assert (tmp_path / "ran").read_text().strip() == "planted"
