"""Issue 43 items 2 and 7 with the REAL Copilot CLI (1.0.102) and the scripted model: `--agent codeact` runs the
launcher, names each client's terminal tool, and does not send the instructions' text twice."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from codeact.enforcement import spec
from tests.copilot.conftest import CopilotRun, bootstrap_launcher, default_tools
from tests.copilot.mock_model import call, text

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def project(copilot_bin: str, stamp_shared: Callable[..., Path], venv_dir: Path) -> Path:  # noqa: ARG001 - its skip
    repo = stamp_shared(files={"README.md": "# demo\n", "src/a.py": "x = 1\n"}, enforcement="exclusive",
                        **default_tools())
    bootstrap_launcher(repo, venv_dir)
    return repo


def test_agent_codeact_runs_the_launcher_with_each_clients_terminal_tool_named(
        project: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    front = yaml.safe_load((project / ".github/agents/codeact.agent.md").read_text().split("---")[1])
    for client, tool in spec.AGENT_TERMINAL_TOOL.items():
        assert tool in front["tools"], (client, front["tools"])
    run = run_copilot(project, "Count.", [call("bash", command=".codeact/bin/codeact run --code 'print(6 * 7)'",
                                                description="run"), text("done")], agent="codeact")
    assert {"bash", "read_bash", "stop_bash", "list_bash"} <= set(run.requests[0].tool_names)
    assert not {"view", "edit", "create", "grep", "glob"} & set(run.requests[0].tool_names)
    (result,) = run.requests[1].tool_results()
    assert result.content.startswith("42\n"), result.content


def test_agent_codeact_sends_the_instructions_text_once(project: Path,
                                                        run_copilot: Callable[..., CopilotRun]) -> None:
    run = run_copilot(project, "Hi.", [text("hello")], agent="codeact")
    first = run.requests[0]
    system = "\n".join(str(m.get("content")) for m in first.messages if m.get("role") in ("system", "user"))
    assert "CodeAct agent" in system and "# CodeAct" in system, system[:2000]  # both the agent and instructions
    instructions = (project / ".github/instructions/codeact.instructions.md").read_text()
    repeated = [line for line in instructions.splitlines()
                if len(line) > 40 and not line.startswith(("<!--", "---")) and system.count(line) > 1]
    assert not repeated, repeated
    signatures = re.findall(r"^- `(\w+\(.*)`$", instructions, re.M)
    assert signatures and all(system.count(sig) == 1 for sig in signatures), signatures
    print(f"first request: {first.size:,} bytes")
