"""Issue 43.4: MCP servers and ``bash`` see the user's ``PYTHONPATH`` as under the Copilot CLI, through the stamped
launcher (cold and warm); the runtime's own imports never see it."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp_helpers import demo

from tests.conftest import git

PROGRAM = ('print(demo.env(name="PYTHONPATH"))\n'
           'print(bash(command="echo ${PYTHONPATH-unset}")["stdout"].strip())\n')


def launch(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(project / ".codeact/bin/codeact"), *args], cwd=project, capture_output=True,
                          text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_servers_and_bash_see_the_users_pythonpath_and_the_runtime_does_not(stamp, tmp_path: Path, venv_dir: Path,
                                                                             mode: str) -> None:
    user = tmp_path / "userlib"
    (user / "pydantic_monty").mkdir(parents=True)  # would break the runtime if its imports saw the user's path
    (user / "pydantic_monty" / "__init__.py").write_text("raise ImportError('the user PYTHONPATH reached codeact')\n")
    project = stamp(tmp_path / "p", files={".mcp.json": json.dumps({"mcpServers": {"demo": demo()}})},
                    tools=["view", "bash"])
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "codeact")
    home = tmp_path / "home"
    home.mkdir()
    base = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_RUNTIME_DIR": str(tmp_path / "run"), "CODEACT_VENV": str(venv_dir), "COPILOT_ALLOW_ALL": "1",
            "CODEACT_SERVER": "0" if mode == "cold" else "1"}
    done = launch(project, "discover", env=base)
    assert done.returncode == 0, done.stderr
    try:
        done = launch(project, "run", "--code", PROGRAM, env={**base, "PYTHONPATH": str(user)})
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [str(user), str(user)]
        done = launch(project, "run", "--code", PROGRAM, env=base)  # none set: none seen (not the runtime's)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "unset"
        assert ".codeact" not in done.stdout
    finally:
        launch(project, "server", "stop", env=base)
