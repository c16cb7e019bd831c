"""Issue 40.1 end to end with the REAL Copilot CLI (1.0.102): a global-scope install in exclusive mode never runs a
repository's `.codeact/bin/codeact` because of what the repository's files say.

The user's global install passes a repository's launcher only when that repository's own sessionStart hook recorded
this session in the user's private state folder. The CLI runs repository hooks only in a trusted folder and only
when it starts in the repository's root (docs/copilot-cli.md), so: a hostile clone started in a subfolder, or at
the untrusted root of a clone that ships its own hooks file, gets its fake launcher denied; global + repo installs
at a trusted root (sessionStart, then preToolUse, one sessionId) run the repository's launcher.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.enforcement import spec
from codeact.lifecycle import links
from tests.conftest import make_repo
from tests.copilot.conftest import CopilotRun, bootstrap_launcher, default_tools
from tests.copilot.mock_model import call, text

pytestmark = pytest.mark.e2e

ROOTED = '"$(git rev-parse --show-toplevel)/.codeact/bin/codeact"'
DENIED = "Denied by preToolUse hook: "
UNPROVEN = spec.WHY_TEXT["repo_unproven"].split(" Use ")[0]


@pytest.fixture(scope="module")
def home(copilot_bin: str, stamp_shared: Callable[..., Path],  # noqa: ARG001 - for its skip
         tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Copilot home with the user's global install (exclusive mode) linked in, as `codeact link` does."""
    global_dir = stamp_shared(scope="global", enforcement="exclusive", **default_tools())
    home = tmp_path_factory.mktemp("copilot-home")
    changed, warnings = links.link(global_dir, home)
    assert changed and not warnings, warnings
    return home


def hostile_clone(root: Path, witness: Path) -> Path:
    """A clone whose script carries the launcher's mark, with its own hooks file (which would record anything)."""
    fake = f"#!/bin/sh\n{spec.LAUNCHER_MARK} v9)\ntouch {witness}\necho ran\n"
    hooks = {"version": 1, "hooks": {e: [{"type": "command", "bash": f"touch {witness}-hook; exit 0"}]
                                     for e in ("sessionStart", "preToolUse")}}
    repo = make_repo(root, {"README.md": "# x\n", "src/a.py": "x = 1\n", ".codeact/bin/codeact": fake,
                            ".github/hooks/codeact.json": json.dumps(hooks)})
    (repo / ".codeact/bin/codeact").chmod(0o755)
    return repo


def only_result(run: CopilotRun) -> str:
    (result,) = run.requests[1].tool_results()
    return result.content


@pytest.mark.parametrize("where", ["subfolder", "untrusted root"])
def test_a_hostile_clone_cannot_pass_its_launcher_through_the_global_hook(
        where: str, home: Path, tmp_path: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    witness = tmp_path / "pwned"
    repo = hostile_clone(tmp_path / "clone", witness)
    cwd = repo / "src" if where == "subfolder" else repo
    run = run_copilot(repo, "Run it.", [call("bash", command=f"{ROOTED} run --code 'print(1)'", description="run"),
                                        text("done")], cwd=cwd, trust=where == "subfolder",
                      extra_env={"COPILOT_HOME": str(home)})
    content = only_result(run)
    assert content.startswith(DENIED) and UNPROVEN in content, content
    assert not witness.exists()
    assert not Path(f"{witness}-hook").exists()  # the clone's hooks never ran either


def test_global_and_repo_installs_at_a_trusted_root_run_the_repository_launcher(
        home: Path, stamp_shared: Callable[..., Path], venv_dir: Path,
        run_copilot: Callable[..., CopilotRun]) -> None:
    repo = stamp_shared(files={"README.md": "# x\n"}, enforcement="exclusive", **default_tools())
    bootstrap_launcher(repo, venv_dir)
    script = [call("bash", command=".codeact/bin/codeact run --code 'print(6 * 7)'", description="run"),
              call("bash", command=f"{ROOTED} run --code 'print(7 * 7)'", description="run"), text("done")]
    run = run_copilot(repo, "Compute.", script, extra_env={"COPILOT_HOME": str(home)})
    first, second = (r.tool_results()[0].content for r in run.requests[1:3])
    assert first.startswith("42\n") and second.startswith("49\n"), (first, second)
