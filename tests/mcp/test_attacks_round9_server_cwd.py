"""Red team, round 9 (issue 40): a user's MCP server started in the workspace ran what a program wrote there. The
test runs two programs through the sandbox (``run``, monty)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a stdio server started by path")

SERVERS = Path(__file__).resolve().parent / "servers"


def test_a_program_cannot_plant_code_a_users_mcp_server_runs_at_its_start(tmp_path: Path) -> None:
    """The user's own server in ``$COPILOT_HOME/mcp-config.json`` is ``python -m demo_server`` (as servers installed
    as modules are often configured: ``python -m mcp_server_git``), with no ``cwd``: in a folder Copilot trusts,
    CodeAct starts it in the workspace (mcp/cache.py: ``cwd = workspace if trusted``), and ``-m`` puts that
    folder first on sys.path. A first program writes ``json.py`` at the workspace root with create() -- an ordinary
    file, no rule protects it -- and the next program that calls the server starts it: the server's ``import
    json`` runs the program's file on the host, with the user's permissions and the server's environment (its
    tokens). No bash is needed. (``npx`` servers read ``.npmrc`` and ``node_modules`` from that folder the same
    way, now protected: tests/runtime/test_npm_project_files.py; ``uvx`` reads no project file.) mcp/cache.home_folder names this very vector ("python -m server imports from its working folder
    first, which a program may write") but applies only where Copilot does not trust the folder; Copilot's trust
    is in the repository's files, not in what a sandboxed program writes later. Fix: start a local server whose entry names no ``cwd`` in a folder programs cannot write (the home
    folder, as for a folder Copilot does not trust), and give Python servers ``PYTHONSAFEPATH=1``; or protect the
    files such a start reads. (Fixed: the user's server runs with PYTHONSAFEPATH=1, mcp/prespawn.stdio_params.)"""
    from codeact.core.config import Settings
    from codeact.runner import run

    base = tmp_path.resolve()
    ws, copilot, home = base / "ws", base / "copilot", base / "home"
    for folder in (ws, copilot, home):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (copilot / "mcp-config.json").write_text(json.dumps({"mcpServers": {"demo": {
        "type": "local", "command": sys.executable, "args": ["-m", "demo_server"],
        "env": {"PYTHONPATH": str(SERVERS)}, "tools": ["*"]}}}))
    marker = base / "ran-on-the-host"
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "CODEACT_CONFIG_DIR": str(home / "cfg"), "COPILOT_HOME": str(copilot), "COPILOT_ALLOW_ALL": "true",
               "XDG_CACHE_HOME": str(base / "cache"), "XDG_STATE_HOME": str(base / "state")}
    planted = (f"open({str(marker)!r}, 'w').write('x')\n"
               "import sys\ndel sys.modules['json']\nsys.path.pop(0)\nimport json  # the real one, so the server "
               "serves\n")
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        first = run(f"print(create(path='json.py', file_text={planted!r}))", workspace=ws, backend="monty",
                    settings=Settings(), environ=environ)
        assert "created json.py" in first.stdout, (first.stdout, first.stderr, first.error)
        second = run("print(demo.add(a=1, b=2))", workspace=ws, backend="monty", settings=Settings(),
                     environ=environ)
    finally:
        os.chdir(cwd)
    assert "3" in second.stdout, (second.stdout, second.stderr, second.error)  # the server did start and answer
    assert not marker.exists(), "the program's json.py ran on the host when the MCP server started"
