"""Issue 13, sections 4 and 6, end to end with the REAL Copilot CLI (1.0.102) and the scripted model.

Section 4: started in a SUBFOLDER of a stamped repository, the command exactly as the stamped instructions give it
(read back from the system prompt the model received) runs; which `--allow-tool` flags approve it in a `-p` run
without --allow-all-tools. Section 6: the sessionStart note and the nudge pointer (postToolUse additionalContext)
reach the model, and the 4th read in a row is then not denied.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.enforcement import spec
from tests.copilot.conftest import CopilotRun, bootstrap_launcher, default_tools
from tests.copilot.mock_model import ChatRequest, ToolCall, call, text

pytestmark = pytest.mark.e2e

FILES = {
    "README.md": "# demo\n",
    "src/app.py": "import os\n\n# TODO: handle errors\ndef main():\n    return os.getcwd()\n",
    "src/deep/util.py": "def helper():\n    return 42  # TODO: make configurable\n",
}
# What the instructions' example prints on FILES (it greps TODO in *.py over the whole repository).
TODO_LINES = ["src/app.py:3: # TODO: handle errors", "src/deep/util.py:2: return 42  # TODO: make configurable"]
ROOTED = '"$(git rev-parse --show-toplevel)/.codeact/bin/codeact"'
DENIED_NO_USER = "Permission denied because no interactive user response was available"
SHELL_TRAILER = re.compile(r"\n?<shellId: \d+ completed with exit code (\d+)>\s*$")


@pytest.fixture(scope="module")
def project(copilot_bin: str, stamp_shared: Callable[..., Path], venv_dir: Path) -> Path:  # noqa: ARG001 - for its skip
    repo = stamp_shared(files=FILES, enforcement="nudge", **default_tools())
    bootstrap_launcher(repo, venv_dir)
    return repo


def instructed_command(request: ChatRequest) -> str:
    """The first ```sh block of the CodeAct instructions, as the model received them in the system prompt."""
    start = request.system.index("# CodeAct\n")
    match = re.search(r"```sh\n(.*?)\n```", request.system[start:], re.S)
    assert match, request.system[start:start + 2000]
    return match.group(1)


def run_instructed(request: ChatRequest) -> ToolCall:
    return call("bash", command=instructed_command(request), description="Run a CodeAct program")


def output(content: str) -> tuple[list[str], int]:
    match = SHELL_TRAILER.search(content)
    assert match, content[-400:]
    return [line.strip() for line in content[:match.start()].strip().splitlines()], int(match.group(1))


def first_result(run: CopilotRun) -> str:
    (result,) = run.requests[1].tool_results()
    return result.content


def test_from_a_subfolder_the_instructed_command_runs(project: Path,
                                                     run_copilot: Callable[..., CopilotRun]) -> None:
    run = run_copilot(project, "List the TODOs.", [run_instructed, text("done")], cwd=project / "src" / "deep")
    assert instructed_command(run.requests[0]).startswith(ROOTED + " run - <<'PY'\n")
    lines, code = output(first_result(run))
    assert (code, lines) == (0, [line.strip() for line in TODO_LINES])


def test_the_relative_form_fails_in_a_subfolder(project: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    """Why the instructions give the root-anchored form: relative, it is exit 127 outside the root."""
    run = run_copilot(project, "Run it.", [call("bash", command=".codeact/bin/codeact run --code 'print(1)'",
                                                description="run"), text("done")], cwd=project / "src")
    assert output(first_result(run))[1] == 127


@pytest.mark.parametrize("command,allow,runs", [
    (".codeact/bin/codeact run --code 'print(6 * 7)'", ["shell(.codeact/bin/codeact:*)"], True),
    (ROOTED + " run --code 'print(6 * 7)'", ["shell(.codeact/bin/codeact:*)"], False),
    (ROOTED + " run --code 'print(6 * 7)'", ["shell(.codeact/bin/codeact:*)", "shell(git:*)"], False),
    (ROOTED + " run --code 'print(6 * 7)'", ["shell"], True),
])
def test_which_allow_tool_flags_approve_the_launcher_in_p_mode(command: str, allow: list[str], runs: bool,
                                                               project: Path,
                                                               run_copilot: Callable[..., CopilotRun]) -> None:
    """`-p` without --allow-all-tools (docs/copilot-cli.md): only `shell` (every shell command) approves the
    root-anchored form; `shell(.codeact/bin/codeact:*)` approves the relative one."""
    run = run_copilot(project, "Compute it.", [call("bash", command=command, description="run"), text("done")],
                      allow_tools=allow)
    content = first_result(run)
    if runs:
        assert output(content) == (["42"], 0), content
    else:
        assert content.startswith(DENIED_NO_USER), content


def test_nudge_teaches_without_a_failed_call(project: Path, run_copilot: Callable[..., CopilotRun],
                                             tmp_path: Path) -> None:
    views = [call("view", path=str(project / "README.md")) for _ in range(4)]
    run = run_copilot(project, "Read the README four times.", [*views, text("done")],
                      extra_env={"CODEACT_VENV": str(tmp_path / "no-venv-yet")})
    first = run.requests[0]
    notes = [m["content"] for m in first.messages if m.get("role") == "user" and "CodeAct (" in str(m["content"])]
    launcher = ".codeact/bin/codeact"
    assert notes == [spec.SESSION["nudge"].replace("{launcher}", launcher) + spec.SESSION_FRESH]
    results = [r.tool_results()[0].content for r in run.requests[1:5]]
    assert results[0] == results[1] == results[3] == "# demo\n", results
    pointer = spec.POINTER.split("\n")[0]
    assert results[2].startswith("# demo\n") and pointer in results[2], results[2]
    assert 'Additional guidance from postToolUse hooks:\n' + pointer in results[2]
    assert not any(r.startswith("Denied by preToolUse hook") for r in results)


def test_in_exclusive_mode_the_hook_lets_the_instructed_command_through(
        stamp_shared: Callable[..., Path], venv_dir: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    repo = stamp_shared(files=FILES, enforcement="exclusive", **default_tools())
    bootstrap_launcher(repo, venv_dir)
    run = run_copilot(repo, "List the TODOs.", [run_instructed, call("view", path=str(repo / "README.md")),
                                                 text("done")])
    notes = [m["content"] for m in run.requests[0].messages if "CodeAct (exclusive" in str(m.get("content"))]
    assert notes == [spec.SESSION["exclusive"].replace("{launcher}", ".codeact/bin/codeact")]
    assert output(first_result(run)) == ([line.strip() for line in TODO_LINES], 0)
    (view,) = run.requests[2].tool_results()
    assert view.content.startswith("Denied by preToolUse hook: CodeAct exclusive mode: the view tool is off")


def test_plugin_scope_gets_the_note_and_the_pointer(stamp_shared: Callable[..., Path],
                                                     run_copilot: Callable[..., CopilotRun]) -> None:
    repo = stamp_shared(files=FILES, scope="plugin", plugin_owner="Acme", enforcement="nudge")
    plugin = repo / "plugins" / "codeact"
    views = [call("view", path=str(repo / "README.md")) for _ in range(4)]
    run = run_copilot(repo, "Read the README four times.", [*views, text("done")], plugin_dir=plugin)
    launcher = f"{plugin}/bin/codeact"
    notes = [m["content"] for m in run.requests[0].messages if "CodeAct (nudge" in str(m.get("content"))]
    assert len(notes) == 1 and notes[0].startswith(spec.SESSION["nudge"].replace("{launcher}", launcher)), notes
    results = [r.tool_results()[0].content for r in run.requests[1:5]]
    assert f"{launcher} run - <<'PY'" in results[2] and results[3] == "# demo\n", results
