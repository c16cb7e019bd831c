"""Issue 13, section 3, end to end: a long answer reaches the model through the REAL Copilot CLI, in exclusive mode.

The CLI (1.0.102) replaces a tool result of about 20 KiB or more by a temporary file and a 500-character preview,
and in exclusive mode the model cannot read that file back. So a run prints at most 16 KiB, cut in the middle (the
head, the cut line, the tail: issue 24 rule 3), and the model's next program reads the middle with
``previous_output``. Asserted on what the model received.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.copilot.conftest import CopilotRun, bootstrap_launcher, default_tools
from tests.copilot.mock_model import ChatRequest, ToolCall, call, text

pytestmark = pytest.mark.e2e

LAUNCHER = ".codeact/bin/codeact"
# 2,000 lines of 51 bytes: 102,000 bytes, five times the CLI's inline window. One line of Python, no single quote,
# so it is exactly the `--code '...'` form the exclusive hook allows.
BIG = 'print("\\n".join(f"line {i + 1:04d} " + "x" * 40 for i in range(2000)))'
CUT = re.compile(r'\[cut: (\d+) more bytes, (\d+) lines; read them with previous_output\(run="([A-Za-z0-9]{8,})", '
                 r'first_line=(\d+)\)\]')
SHELL_TRAILER = re.compile(r"\n?<shellId: \d+ completed with exit code (\d+)>\s*$")
FILES = {"README.md": "# demo\n", "src/app.py": "def main():\n    return 1\n"}


@pytest.fixture(scope="module")
def project(copilot_bin: str, stamp_shared: Callable[..., Path], venv_dir: Path) -> Path:  # noqa: ARG001 - for its skip
    repo = stamp_shared(files=FILES, enforcement="exclusive", **default_tools())
    bootstrap_launcher(repo, venv_dir)
    return repo


def launch(program: str) -> ToolCall:
    return call("bash", command=f"{LAUNCHER} run --code '{program}'", description="Run a CodeAct program")


def codeact_output(content: str) -> tuple[str, int]:
    """What the launcher printed, without the CLI's `<shellId: ...>` trailer, and its exit code."""
    match = SHELL_TRAILER.search(content)
    assert match, f"not a finished bash result: {content[-300:]!r}"
    return content[:match.start()], int(match.group(1))


def test_a_100_kb_print_reaches_the_model_cut_and_previous_output_reads_the_rest(
        project: Path, run_copilot: Callable[..., CopilotRun]) -> None:
    def read_back(request: ChatRequest) -> ToolCall:
        (first,) = request.tool_results()
        match = CUT.search(first.content)
        run = match.group(3) if match else "missing"
        return launch(f'print(previous_output(run="{run}", first_line=1500, last_line=1502), end="")')

    run = run_copilot(project, "Print the report.", [
        launch(BIG),
        read_back,
        call("view", path=str(project / "README.md")),  # exclusive mode is in force: the file tools are denied
        text("done"),
    ])
    (big,), (back,), (view,) = (r.tool_results() for r in run.requests[1:4])
    shown, code = codeact_output(big.content)
    assert code == 0, big.content[-500:]
    assert "Output too large" not in big.content, "the CLI spilled the output into a file the model cannot read"
    assert len(shown.encode()) <= 16 * 1024, len(shown.encode())
    lines = shown.rstrip("\n").split("\n")
    at = next((i for i, line in enumerate(lines) if CUT.fullmatch(line)), None)
    assert at is not None, f"no cut line in the output: {shown[-300:]!r}"
    match = CUT.fullmatch(lines[at])
    assert match
    cut_bytes, cut_lines, _run, first = (int(g) if g.isdigit() else g for g in match.groups())
    head, tail = lines[:at], lines[at + 1:]
    assert head == [f"line {i:04d} " + "x" * 40 for i in range(1, first)]
    assert tail and tail == [f"line {i:04d} " + "x" * 40 for i in range(2001 - len(tail), 2001)]  # the end arrives
    assert (cut_lines, cut_bytes) == (2000 - len(head) - len(tail), 102_000 - 51 * (len(head) + len(tail)))
    back_text, back_code = codeact_output(back.content)
    assert back_code == 0, back.content
    assert back_text.strip("\n").split("\n") == [f"line {i:04d} " + "x" * 40 for i in (1500, 1501, 1502)]
    assert view.content.startswith("Denied by preToolUse hook"), view.content[:300]
