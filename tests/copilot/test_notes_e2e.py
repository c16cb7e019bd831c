"""Issue 24 rule 1, end to end: a tool's cut note reaches the model in the tool result of the REAL Copilot CLI.

A grep asked for fewer results than there are answers with the first ones and says, in a ``note:`` line after the
output, how many matched in all and how to get the rest. The model reads the bash tool's result, stdout and stderr
together: asserted on what the mock model received.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.copilot.conftest import CopilotRun, bootstrap_launcher, default_tools
from tests.copilot.mock_model import call, text

pytestmark = pytest.mark.e2e

LAUNCHER = ".codeact/bin/codeact"
FILES = {"README.md": "# demo\n", "src/todo.py": "".join(f"# TODO item {i}\n" for i in range(40))}
NOTE = re.compile(r"^note: grep\(\): returned 5 of 40 matching lines\b.*max_results", re.MULTILINE)


@pytest.fixture(scope="module")
def project(copilot_bin: str, stamp_shared: Callable[..., Path], venv_dir: Path) -> Path:  # noqa: ARG001 - for its skip
    repo = stamp_shared(files=FILES, enforcement="exclusive", **default_tools())
    bootstrap_launcher(repo, venv_dir)
    return repo


def test_a_grep_cut_note_reaches_the_model_with_the_real_total(
        project: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    program = 'print(len(grep(pattern="TODO", max_results=5)))'
    run = run_copilot(project, "How many TODOs are there?", [
        call("bash", command=f"{LAUNCHER} run --code '{program}'", description="Run a CodeAct program"),
        text("done"),
    ])
    (result,) = run.requests[1].tool_results()
    lines = result.content.splitlines()
    assert "5" in lines, result.content[:600]  # the answer, and beside it (stderr) the note that it is not whole
    assert NOTE.search(result.content), result.content[:600]
