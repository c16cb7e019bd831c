"""Issue 5, end to end: the stamped preToolUse hook steers the REAL Copilot CLI, as the model sees it.

One offline CLI session per test, against the scripted mock model; every assertion is on what the model received
(the tool results in the next request), which is the only place a hook's deny reason reaches. The stamped repo is
shared by the module: stamped with `enforcement=exclusive`, other modes chosen per session with `CODEACT_MODE`.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.copilot.conftest import CopilotRun, bootstrap_launcher, default_tools
from tests.copilot.mock_model import ToolResult, call, text

pytestmark = pytest.mark.e2e

# How the CLI (1.0.102) shows a hook's denial to the model: `Denied by preToolUse hook: <reason>` for a deny
# decision; `Denied by preToolUse hook from "<hooks file>" (hook errored)` when the hook exits non-zero.
BLOCKED = "Denied by preToolUse hook"
DENIED = BLOCKED + ": "
LAUNCHER = ".codeact/bin/codeact"
PROGRAM = 'print(",".join(sorted(glob(pattern="src/*.py"))))'
LAUNCH = f"{LAUNCHER} run --code '{PROGRAM}'"
PROGRAM_OUTPUT = "src/app.py,src/util.py"
FILES = {
    "README.md": "# demo\nA small project.\n",
    "src/app.py": "import os\n\n# TODO: handle errors\ndef main():\n    return os.getcwd()\n",
    "src/util.py": "def helper():\n    return 42  # TODO: make configurable\n",
    "docs/guide.md": "# Guide\n",
}
# What `--agent codeact` (agent frontmatter `tools: ["bash"]`) offers the model on 1.0.102: the bash family, plus
# `skill` and `sql`, which the CLI always adds.
AGENT_TOOLS = {"bash", "read_bash", "stop_bash", "list_bash", "skill", "sql"}
FILE_TOOLS = {"view", "edit", "create", "grep", "glob"}
# What the CLI offers by default in offline mode (no web_fetch: COPILOT_OFFLINE disables web tools).
DEFAULT_TOOLS = {"bash", "read_bash", "stop_bash", "list_bash", "view", "create", "edit", "grep", "glob", "task",
                 "skill", "sql", "session_store_sql", "read_agent", "list_agents", "write_agent",
                 "fetch_copilot_cli_documentation"}


@pytest.fixture(scope="module")
def project(copilot_bin: str, stamp_shared: Callable[..., Path], venv_dir: Path) -> Path:  # noqa: ARG001 - for its skip
    repo = stamp_shared(files=FILES, enforcement="exclusive", **default_tools())
    bootstrap_launcher(repo, venv_dir)  # the first install (~1-2 min) happens here, not inside a CLI session
    return repo


def results(run: CopilotRun) -> list[list[ToolResult]]:
    """Per model request after the first: the results of the tool calls the previous step made."""
    return [r.tool_results() for r in run.requests[1:]]


def blocked(result: ToolResult) -> bool:
    """The call did not run: denied by the hook, or blocked because the hook failed."""
    return result.content.startswith(BLOCKED)


def reason(result: ToolResult) -> str | None:
    """The hook's deny reason as the model saw it; None when the call was not denied with a reason."""
    return result.content[len(DENIED):] if result.content.startswith(DENIED) else None


def launcher_ran(result: ToolResult) -> bool:
    return PROGRAM_OUTPUT in result.content and "exit code 0" in result.content


def read(tool: str, repo: Path) -> Any:
    return {"view": call("view", path=str(repo / "README.md")),
            "glob": call("glob", pattern="**/*.py"),
            "grep": call("grep", pattern="TODO")}[tool]


def launch() -> Any:
    return call("bash", command=LAUNCH, description="Run a CodeAct program")


def test_exclusive_denies_all_but_the_launcher(project: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    run = run_copilot(project, "List the Python files under src.", [
        read("view", project),
        launch(),
        call("bash", command="cat README.md", description="Read the README"),
        text("done"),
    ])  # no CODEACT_MODE: the stamped answer (exclusive) applies
    (view,), (bash,), (cat,) = results(run)
    assert reason(view) is not None, f"exclusive mode did not deny `view` with a reason: {view.content!r}"
    assert LAUNCHER in reason(view), f"the deny reason does not show the launcher command: {view.content!r}"
    assert launcher_ran(bash), f"the launcher call did not run the program: {bash.content!r}"
    assert reason(cat) is not None, f"exclusive mode let a non-launcher bash command through: {cat.content!r}"


def test_nudge_denies_the_fourth_consecutive_read(project: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    """The fallback: the 3rd read failed, so no postToolUse pointer came with it (issue 13: where the pointer came,
    the 4th read runs; tests/copilot/test_subfolder_e2e.py::test_nudge_teaches_without_a_failed_call)."""
    run = run_copilot(project, "Find the TODOs.", [
        read("view", project), read("glob", project), call("view", path=str(project / "missing.md")),
        read("view", project),  # the 4th read in a row
        read("glob", project),  # the deny reset the count
        text("done"),
    ], extra_env={"CODEACT_MODE": "nudge"})
    outcomes = [(blocked(r), reason(r) is not None) for (r,) in results(run)]
    assert outcomes == [(False, False)] * 3 + [(True, True), (False, False)], [r.content[:200] for (r,) in results(run)]
    assert "Additional guidance from postToolUse" not in results(run)[2][0].content
    (fourth,) = results(run)[3]
    assert f"{LAUNCHER} run" in str(reason(fourth)), f"the nudge does not show the CodeAct command: {fourth.content!r}"


def test_off_denies_nothing(project: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    run = run_copilot(project, "Find the TODOs.", [
        [read("view", project), read("glob", project), read("grep", project)],  # parallel calls in one turn
        read("view", project), read("glob", project), read("grep", project), read("view", project),
        launch(),
        text("done"),
    ], extra_env={"CODEACT_MODE": "off"})
    turns = results(run)
    assert [len(t) for t in turns] == [3, 1, 1, 1, 1, 1]
    assert [r.name for r in turns[0]] == ["view", "glob", "grep"]
    assert not [r.content for t in turns for r in t if blocked(r)]
    assert turns[0][0].content == FILES["README.md"]
    assert launcher_ran(turns[-1][0]), turns[-1][0].content


def test_instructions_in_system_prompt_and_default_tools(project: Path,
                                                         run_copilot: Callable[..., CopilotRun]) -> None:
    run = run_copilot(project, "What does README.md say?", [text("A small project.")])
    (request,) = run.requests
    # 1.0.102 inlines `.instructions.md` files with applyTo "**" verbatim, frontmatter included, after </tools>
    # (copilot-instructions.md and AGENTS.md get <custom_instruction> wrappers instead).
    for name in ("codeact.instructions.md", "codeact.local.instructions.md"):
        body = (project / ".github" / "instructions" / name).read_text().split("---\n", 2)[2].strip()
        assert body in request.system, f"{name} is not in the system prompt"
    assert set(request.tool_names) == DEFAULT_TOOLS
    assert "codeact" in request.system  # the skill is advertised in <available_skills>


def test_agent_codeact_offers_only_the_bash_family(project: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    run = run_copilot(project, "List the Python files under src.", [launch(), text("done")], agent="codeact")
    for request in run.requests:
        offered = set(request.tool_names)
        assert not offered & FILE_TOOLS, f"--agent codeact offers file tools: {sorted(offered & FILE_TOOLS)}"
        assert offered == AGENT_TOOLS, f"--agent codeact offers {sorted(offered)}"
    assert "<agent_instructions>" in run.requests[0].system
    assert "You are the CodeAct agent" in run.requests[0].system
    ((bash,),) = results(run)
    assert launcher_ran(bash), bash.content
