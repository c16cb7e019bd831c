"""Issue 28.1 and 26.6 through the real Copilot CLI (1.0.102, offline, scripted model): a global install and a
repo install, both in exclusive mode, in one session. The CLI runs both preToolUse hooks; each passes the other's
launcher, so both launchers run; every other tool is still denied; the model gets ONE session note naming both
installs. A bash call of 1 MiB is denied at once (the hook reads at most 128 KiB + 1) and the session goes on."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from copier import run_copy

from codeact.enforcement import spec
from codeact.lifecycle import links
from tests.conftest import git, make_repo
from tests.copilot.conftest import CopilotRun, bootstrap_launcher, default_tools
from tests.copilot.mock_model import call, text

pytestmark = pytest.mark.e2e

GLOBAL = '"${COPILOT_HOME:-$HOME/.copilot}/codeact/bin/codeact"'
ROOTED = '"$(git rev-parse --show-toplevel)/.codeact/bin/codeact"'
PROGRAM = 'print(",".join(sorted(glob(pattern="src/*.py"))))'
FILES = {"README.md": "# work\n", "src/app.py": "x = 1\n", "src/util.py": "y = 2\n"}
DENIED = "Denied by preToolUse hook: "


def test_global_and_repo_installs_in_exclusive_mode_let_each_other_run(
        template_src: Path, tmp_path: Path, venv_dir: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    answers: dict[str, Any] = {"enforcement": "exclusive", **default_tools()}
    work = make_repo(tmp_path / "work", FILES)
    run_copy(str(template_src), work, data=answers, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True,
             skip_tasks=True, overwrite=True)
    dotfiles = make_repo(tmp_path / "dotfiles")
    run_copy(str(template_src), dotfiles, data={**answers, "scope": "global"}, defaults=True, unsafe=True,
             vcs_ref="HEAD", quiet=True, skip_tasks=True, overwrite=True)
    home = tmp_path / "home"
    copilot_home = home / ".copilot"
    changed, warnings = links.link(dotfiles, copilot_home)
    assert changed and not warnings, warnings
    bootstrap_launcher(work, venv_dir)
    user = {"HOME": str(home), "COPILOT_HOME": str(copilot_home)}

    huge = f".codeact/bin/codeact run --code '{'x' * (1 << 20)}'"
    session = run_copilot(work, "List the Python files under src.", [
        call("bash", command=f".codeact/bin/codeact run --code '{PROGRAM}'", description="repo launcher"),
        call("bash", command=f"{ROOTED} run --code '{PROGRAM}'", description="repo launcher, root-anchored"),
        call("bash", command=f"{GLOBAL} run --code '{PROGRAM}'", description="global launcher"),
        call("view", path=str(work / "README.md")),
        call("bash", command=huge, description="too long"),
        text("done"), text("done"),  # 1 MiB in the conversation: the CLI compacts it with one more request
    ], extra_env=user, check=False)
    assert session.returncode == 0, session.describe()
    repo_run, rooted_run, global_run, view = session.requests[4].all_tool_results()
    for result in (repo_run, rooted_run, global_run):
        assert "src/app.py,src/util.py" in result.content and "exit code 0" in result.content, result.content
    assert view.content.startswith(DENIED), view.content
    # the 1 MiB call's result, as the CLI printed it (the conversation holding it is compacted away)
    shown = " ".join(session.stdout.split("too long (shell)", 1)[1].split())
    assert shown.split("└ ", 1)[1].startswith(DENIED + "CodeAct exclusive mode: " + spec.WHY_TEXT["too_long"]), \
        shown[:400]

    first = json.dumps(session.requests[0].messages)
    notes = first.count("CodeAct (exclusive mode)")
    assert notes == 1, f"{notes} session notes in the first request"
    assert "global (exclusive): " in first and "repo (exclusive): .codeact/bin/codeact" in first


def test_global_and_plugin_installs_in_exclusive_mode_let_each_other_run(
        template_src: Path, tmp_path: Path, venv_dir: Path, run_copilot: Callable[..., CopilotRun],
        copilot_cli: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    """The plugin installed from a local marketplace (loaded live from it) beside a global install: both hooks
    run; the global launcher and the plugin's both run; one note names both."""
    answers: dict[str, Any] = {"enforcement": "exclusive", **default_tools()}
    market = make_repo(tmp_path / "acme-codeact")
    run_copy(str(template_src), market, data={**answers, "scope": "plugin", "marketplace_name": "acme",
                                              "plugin_owner": "Acme"},
             defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True)
    git(market, "add", "-A")
    git(market, "commit", "-qm", "codeact plugin")
    plugin = (market / "plugins/codeact").resolve()
    dotfiles = make_repo(tmp_path / "dotfiles")
    run_copy(str(template_src), dotfiles, data={**answers, "scope": "global"}, defaults=True, unsafe=True,
             vcs_ref="HEAD", quiet=True, skip_tasks=True, overwrite=True)
    work = make_repo(tmp_path / "work", FILES)
    home = tmp_path / "copilot-cli-home"  # HOME of `copilot_cli`: the plugin is installed there
    for args in (("plugin", "marketplace", "add", str(market)), ("plugin", "install", "codeact@acme")):
        proc = copilot_cli(work, *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    changed, warnings = links.link(dotfiles, home / ".copilot")
    assert changed and not warnings, warnings
    user = {"HOME": str(home), "COPILOT_HOME": str(home / ".copilot"), "CODEACT_VENV": str(venv_dir)}

    session = run_copilot(work, "List the Python files under src.", [
        call("bash", command=f"{GLOBAL} run --code '{PROGRAM}'", description="global launcher"),
        call("bash", command=f"{plugin}/bin/codeact run --code '{PROGRAM}'", description="plugin launcher"),
        call("view", path=str(work / "README.md")),
        text("done"),
    ], extra_env=user)
    global_run, plugin_run, view = session.requests[-1].all_tool_results()
    for result in (global_run, plugin_run):
        assert "src/app.py,src/util.py" in result.content and "exit code 0" in result.content, result.content
    assert view.content.startswith(DENIED), view.content
    first = json.dumps(session.requests[0].messages)
    assert first.count("CodeAct (exclusive mode)") == 1
    assert "global (exclusive): " in first and f"plugin (exclusive): {plugin}/bin/codeact" in first
