"""What a benchmark task is (``Task``), the baselines' names, and helpers the task modules share."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.copilot.mock_model import ToolCall

from .replay import Agent, Ctx, codeact_agent, tc

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_SERVER = REPO_ROOT / "tests" / "mcp" / "servers" / "demo_server.py"

# The baselines, each a scripted strategy of what a capable agent does with the CLI's own tools; every one issues at
# most ``Ctx.max_parallel`` (16) parallel calls a turn.
BASELINES = ("baseline-grep", "baseline-shell", "view-all")
BASELINE_DOC = {
    "baseline-grep": "search tools first: grep with counts, -l or content (-n), then reads only the hits",
    "baseline-shell": "bash one-liners and loops (grep -r, sed, jq, wc, python3 -c), each as one bash call",
    "view-all": "worst case kept for reference: globs, then views every candidate file in full",
}


class TaskCheckError(AssertionError):
    """The workspace after a session is not what the task's answer says it did."""


@dataclass(frozen=True)
class Task:
    """One benchmark task: its prompt, ground truth, baselines, CodeAct program and answer format.

    ``multi_step``: the stamped instructions advise CodeAct for it (their "3+ tool calls" rule); False where they
    say to use the normal tools (a single read or edit). ``check``: for a task that edits files, raises
    ``TaskCheckError`` unless the workspace holds exactly the edits the truth describes (then the runner restores
    it)."""

    name: str
    title: str
    prompt: str
    multi_step: bool
    truth: Callable[[Path], Any]
    render: Callable[[Any], str]
    baselines: dict[str, Callable[[Ctx], Agent]]
    program: str
    parse: Callable[[str], Any]
    needs: tuple[str, ...] = ()  # sandbox tools the program calls beyond the documented built-ins
    check: Callable[[Path, Any], None] | None = None
    live_check: Callable[[str, Any], bool] | None = field(default=None, compare=False)

    def baseline(self, strategy: str) -> Callable[[Ctx], Agent]:
        return self.baselines[strategy]

    def codeact(self) -> Callable[[Ctx], Agent]:
        return codeact_agent(self.program, self.parse, self.needs)


def sh(command: str, description: str) -> ToolCall:
    """One call of the CLI's ``bash`` tool."""
    return tc("bash", command=command, description=description)


def py_files(repo: Path, *roots: str) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for r in roots for p in (repo / r).rglob("*.py") if p.is_file())


def mcp_direct(calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Call the demo server straight through the MCP SDK (stdio), outside the CLI and outside CodeAct."""
    async def go() -> list[Any]:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=sys.executable, args=[str(DEMO_SERVER)])
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    out = []
                    for name, arguments in calls:
                        res = await session.call_tool(name, arguments)
                        data = res.structured_content
                        if isinstance(data, dict) and set(data) == {"result"}:
                            data = data["result"]
                        out.append(data)
                    return out
    return asyncio.run(go())


def git_out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def changed_files(repo: Path) -> list[str]:
    """Paths that differ from HEAD (modified, added or deleted; untracked included)."""
    out = git_out(repo, "status", "--porcelain", "--untracked-files=all")
    return sorted(line[3:] for line in out.splitlines() if line.strip())


def restore(repo: Path) -> None:
    """Put the workspace back to HEAD after a session that edited it (the scratch repository only)."""
    git_out(repo, "checkout", "-q", "--", ".")
    git_out(repo, "clean", "-fdq")
    if left := changed_files(repo):
        raise RuntimeError(f"could not restore the workspace; still changed: {left}")


def expect_edits(repo: Path, expected: dict[str, str]) -> None:
    """Raise ``TaskCheckError`` unless exactly the files of ``expected`` changed, each to its expected text."""
    changed = changed_files(repo)
    if changed != sorted(expected):
        raise TaskCheckError(f"files changed: {changed}; expected exactly {sorted(expected)}")
    for rel, want in expected.items():
        got = (repo / rel).read_text(encoding="utf-8")
        if got != want:
            raise TaskCheckError(f"{rel} is not as expected after the edit:\n{got[:600]}")
