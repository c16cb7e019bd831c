"""The generated MCP section of the instructions and agent files, and `codeact refresh` that rewrites it.

The section is a pure function of the tool lock and the exclusions, used both by the template (at render time, via
the Jinja extension) and by `codeact refresh` (after discovery, as Copier's post-update migration and copy task
run it) — so both write byte-identical text, and the drift check can compare them.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import EXIT_OK

BEGIN = "<!-- codeact:mcp-tools:begin (generated from .codeact/tools.lock.json by `codeact refresh`) -->"
END = "<!-- codeact:mcp-tools:end -->"
# Files (relative to the project) that carry the section, per scope.
DOC_FILES = (".github/instructions/codeact.instructions.md", ".github/agents/codeact.agent.md")
_SECTION = re.compile(re.escape(BEGIN.split(" (")[0]) + r".*?" + re.escape(END), re.S)


def mcp_section(lock: Mapping[str, Any] | None, launcher: str, exclude: Iterable[str] = ()) -> str:
    """The section text between and including the markers (no trailing newline)."""
    from .mcp.render import render_server_lines, render_tool_lines

    tools = render_tool_lines(lock, exclude=exclude)
    servers = render_server_lines(lock, exclude=exclude)
    lines = [BEGIN, "## MCP tools", ""]
    if not servers:
        lines.append("None configured (`.mcp.json`, `.github/mcp.json`); after adding a server run "
                     "`copier update -a .codeact/.copier-answers.yml --trust --defaults`.")
    else:
        lines.append("Each server is a namespace in the sandbox: `server.tool(arg=...)`, or `mcp_call(server=..., "
                     f"tool=..., arguments={{...}})`; `{launcher} describe server.tool` prints the schema. Chain "
                     "calls in one program instead of one per turn.")
        lines.append("")
        lines += [f"- {line}" for line in servers]
        if tools:
            lines.append("")
            for line in tools:
                signature, _, description = line.partition(" — ")
                lines.append(f"- `{signature}`" + (f" — {description}" if description else ""))
    lines.append(END)
    return "\n".join(lines)


def rewrite(path: Path, section: str) -> bool:
    """Replace the section in ``path``; returns whether the file changed. A file without markers is left alone."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    updated = _SECTION.sub(lambda _m: section, text, count=1)
    if updated == text:
        return False
    tmp = path.with_name(f".{path.name}.codeact-tmp")
    tmp.write_text(updated, encoding="utf-8")
    tmp.replace(path)
    return True


def refresh(project: Path, *, timeout: float, launcher: str = ".codeact/bin/codeact",
            progress=None) -> list[str]:
    """Re-discover the MCP servers, write the lock and rewrite the generated sections. Returns changed files."""
    from .mcp.config import read_exclusions
    from .mcp.discovery import discover
    from .mcp.lock import read_lock

    discover(project, timeout=timeout, progress=progress)
    # Render from the lock as written (sorted keys), exactly as the template's extension reads it.
    section = mcp_section(read_lock(project), launcher, read_exclusions(project))
    return [rel for rel in DOC_FILES if rewrite(project / rel, section)]


def main(args: argparse.Namespace) -> int:
    from .policy import find_workspace

    project = Path(args.workspace).resolve() if args.workspace else find_workspace()

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        changed = refresh(project, timeout=args.timeout, progress=say)
    except Exception as exc:  # noqa: BLE001 - a refresh must never break `copier update`
        say(f"codeact refresh: could not refresh the MCP tools ({exc}); the drift check will report the lock as "
            "stale until `codeact refresh` succeeds")
        return EXIT_OK
    say("codeact refresh: " + (f"updated {', '.join(changed)}" if changed else "instructions already up to date"))
    return EXIT_OK
