"""Issue 20, end to end: a harness on the REAL @github/copilot-sdk (1.0.14) gets CodeAct's enforcement in every
scope through the stamped adapter, with no TTY, against the scripted mock model.

Each session is `drive.mjs` (node, stdin closed, output piped): a CopilotClient on the pinned Copilot CLI (or the
runtime the SDK bundles), a session with `codeactSession(...)`'s options and `approveAll`; assertions are on what
the model received (the tool results of the next request) and on what the adapter answered.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import frontmatter
import pytest

from codeact.enforcement import spec
from tests.copilot.mock_model import ToolResult, call, text
from tests.hook.helpers import DEFAULT_TOOLS, fill
from tests.sdk.conftest import CODEACT_DIR, Install, SdkRun

pytestmark = pytest.mark.e2e

DENIED = "Denied by preToolUse hook: "  # what the SDK shows the model for a deny decision, as the CLI does
PROGRAM = "print(1)"


def launcher(install: Install) -> str:
    """The scope's launcher as the hook's reasons show it (spec.LAUNCHERS' first form)."""
    return spec.LAUNCHERS[install.scope]["sh"][0].replace("{dir}", {"repo": ".codeact"}.get(install.scope,
                                                                                             str(install.install)))


def session_args(install: Install) -> dict[str, Any]:
    """``run_sdk`` arguments for a session of ``install``'s scope, working in ``install.work``."""
    session: dict[str, Any] = {}
    env: dict[str, str] = {}
    if install.scope == "plugin":
        session["pluginDirectories"] = [str(install.install)]  # the plugin's skill and agent reach the model
    if install.home:
        env["COPILOT_HOME"] = str(install.home)  # where `codeact link` put the links: the runtime's home too
    return {"cwd": install.work, "session": session, "env": env, "adapter": install.adapter,
            "adapter_options": {"scope": install.scope, "root": str(install.work)}}


def results(run: SdkRun) -> list[ToolResult]:
    """The result of each tool call, in order (the scripts make one call per turn)."""
    return [r for request in run.requests[1:] for r in request.tool_results()]


def tool_off(install: Install, tool: str) -> str:
    return fill(spec.TOOL_OFF, tools=DEFAULT_TOOLS, launcher=launcher(install), tool=tool, scope=install.scope)


def nudge(install: Install) -> str:
    return fill(spec.NUDGE, tools=DEFAULT_TOOLS, launcher=launcher(install), scope=install.scope)


def bundled_runtime(sdk: Path) -> bool:
    """Whether the SDK's own runtime package for this platform was installed next to it."""
    return any(sdk.parent.glob("copilot-sdk-*/package.json"))


@pytest.mark.parametrize("runtime", ["cli", "bundled"])
@pytest.mark.parametrize("scope", list(CODEACT_DIR))
def test_exclusive_denies_view_and_runs_the_launcher(scope: str, runtime: str, installs: dict[str, Install],
                                                     run_sdk: Callable[..., SdkRun], copilot_sdk: Path) -> None:
    if runtime == "bundled" and not bundled_runtime(copilot_sdk):
        pytest.skip(f"no @github/copilot-sdk-<platform> runtime package next to {copilot_sdk}")
    install = installs[scope]
    launch = f"{launcher(install)} run --code '{PROGRAM}'"
    run = run_sdk(script=[
        call("view", path="README.md"),
        call("bash", command=launch, description="Run a CodeAct program"),
        call("bash", command="cat README.md", description="Read the README"),
        text("done"),
    ], runtime=runtime, **session_args(install))
    assert run.report["tty"] == {"stdin": False, "stdout": False, "stderr": False}
    view, bash, cat = results(run)
    assert view.content == DENIED + tool_off(install, "view"), run.describe()
    assert bash.content.startswith("1\n") and "exit code 0" in bash.content, run.describe()
    assert cat.content.startswith(DENIED + "CodeAct exclusive mode: a shell call may only run the CodeAct launcher "
                                  f"({launcher(install)})."), cat.content
    # Through the adapter: it answered each call, and its answers are what the model saw.
    assert [(tool, decision) for tool, decision, _ in run.decisions] == [("view", "deny"), ("bash", None),
                                                                        ("bash", "deny")]
    assert run.decisions[0][2] == tool_off(install, "view")
    assert run.report["message"] == "done"


@pytest.mark.parametrize("runtime", ["cli", "bundled"])
@pytest.mark.parametrize("scope", list(CODEACT_DIR))
def test_nudge_denies_the_fourth_read(scope: str, runtime: str, installs: dict[str, Install],
                                      run_sdk: Callable[..., SdkRun], copilot_sdk: Path) -> None:
    if runtime == "bundled" and not bundled_runtime(copilot_sdk):
        pytest.skip(f"no @github/copilot-sdk-<platform> runtime package next to {copilot_sdk}")
    install = installs[scope]
    args = session_args(install)
    args["env"]["CODEACT_MODE"] = "nudge"
    run = run_sdk(script=[
        call("view", path="README.md"),
        call("glob", pattern="**/*.py"),
        call("grep", pattern="TODO"),
        call("view", path="src/app.py"),
        call("view", path="src/util.py"),  # the denial reset the run: single reads are allowed again
        text("done"),
    ], runtime=runtime, **args)
    first, second, third, fourth, fifth = results(run)
    for result in (first, second, third, fifth):
        assert not result.content.startswith(DENIED), run.describe()
    assert "A small project." in first.content and "return 42" in fifth.content
    assert fourth.content == DENIED + nudge(install), run.describe()
    assert [d for _, d, _ in run.decisions] == [None, None, None, "deny", None]


INSTRUCTIONS = {"repo": ".github/instructions/codeact.instructions.md", "global": "instructions/codeact.instructions.md"}


@pytest.mark.parametrize("runtime", ["cli", "bundled"])
@pytest.mark.parametrize("scope", list(CODEACT_DIR))
def test_the_model_gets_codeacts_instructions_and_skill(scope: str, runtime: str, installs: dict[str, Install],
                                                        run_sdk: Callable[..., SdkRun], copilot_sdk: Path) -> None:
    # As in the CLI: the instructions inlined (repo and global scope; a plugin carries none), the skill listed
    # (only with enableConfigDiscovery, which codeactSession sets).
    if runtime == "bundled" and not bundled_runtime(copilot_sdk):
        pytest.skip(f"no @github/copilot-sdk-<platform> runtime package next to {copilot_sdk}")
    install = installs[scope]
    run = run_sdk(script=[text("done")], runtime=runtime, **session_args(install))
    first = run.requests[0]
    if scope in INSTRUCTIONS:
        body = frontmatter.loads((install.project / INSTRUCTIONS[scope]).read_text()).content.strip()
        assert body and body in first.system, "the instructions did not reach the model"
    skills = install.install / "skills" if scope == "plugin" else install.project / (
        ".github/skills" if scope == "repo" else "skills")
    description = str(frontmatter.load(skills / "codeact/SKILL.md").metadata["description"])
    # CLI 1.0.102 lists skills in the system prompt, the bundled 1.0.85 in the skill tool's description.
    listing = first.system + "\n".join(str(t.get("function", {}).get("description", "")) for t in first.tools)
    assert description[:80] in listing, "the codeact skill was not offered"


# --- what the SDK does by itself: why the adapter, codeactSession and codeactRuntimeEnv exist -----------------------
@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_the_bundled_runtime_runs_no_home_or_plugin_hook(scope: str, installs: dict[str, Install],
                                                         run_sdk: Callable[..., SdkRun], copilot_sdk: Path) -> None:
    # The fault of the issue: with the runtime the SDK ships, exclusive mode does not exist in these scopes.
    if not bundled_runtime(copilot_sdk):
        pytest.skip(f"no @github/copilot-sdk-<platform> runtime package next to {copilot_sdk}")
    install = installs[scope]
    args = session_args(install)
    del args["adapter"], args["adapter_options"]
    args["session"]["enableFileHooks"] = True
    run = run_sdk(script=[call("view", path="README.md"), call("bash", command="echo unguarded", description="x"),
                          text("done")], runtime="bundled", **args)
    view, bash = results(run)
    assert "A small project." in view.content and not view.content.startswith(DENIED), view.content
    assert bash.content.startswith("unguarded"), bash.content


@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_a_cli_runtime_runs_them_even_with_file_hooks_off(scope: str, installs: dict[str, Install],
                                                          run_sdk: Callable[..., SdkRun]) -> None:
    install = installs[scope]
    args = session_args(install)
    del args["adapter"], args["adapter_options"]
    args["session"]["enableFileHooks"] = False
    run = run_sdk(script=[call("view", path="README.md"), text("done")], **args)
    (view,) = results(run)
    assert view.content == DENIED + tool_off(install, "view")


@pytest.mark.parametrize("scope,runtime_env,file_hooks", [
    ("repo", False, True),  # both left out: codeactRuntimeEnv and codeactSession's enableFileHooks: false
    ("global", False, False),  # codeactRuntimeEnv left out: enableFileHooks: false does not stop these
    ("plugin", False, False),
])
def test_two_runs_of_the_hook_count_each_read_twice(scope: str, runtime_env: bool, file_hooks: bool,
                                                    installs: dict[str, Install],
                                                    run_sdk: Callable[..., SdkRun]) -> None:
    install = installs[scope]
    args = session_args(install)
    args["env"]["CODEACT_MODE"] = "nudge"
    args["session"]["enableFileHooks"] = file_hooks
    run = run_sdk(script=[call("view", path="README.md"), call("view", path="src/app.py"), text("done")],
                  runtime_env=runtime_env, **args)
    first, second = results(run)
    assert not first.content.startswith(DENIED)
    assert second.content == DENIED + nudge(install), "the 2nd read is already the 4th the hook counted"
