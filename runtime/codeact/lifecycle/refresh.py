"""The generated MCP section of the instructions and agent files, and `codeact refresh` that rewrites it.

The section is a pure function of the tool lock and the exclusions, used both by the template (at render time, via
the Jinja extension) and by `codeact refresh` (after discovery, as Copier's post-update migration and copy task
run it) — so both write byte-identical text, and the drift check can compare them.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..layout import UPDATE_COMMAND

BEGIN = "<!-- codeact:mcp-tools:begin (generated from .codeact/tools.lock.json by `codeact refresh`) -->"
END = "<!-- codeact:mcp-tools:end -->"
# Files (relative to the project) that carry the section, per scope.
DOC_FILES = (".github/instructions/codeact.instructions.md", ".github/agents/codeact.agent.md")
DEFAULT_MCP_CONTEXT_BYTES = 2048  # the MCP section's share of the always-on instructions and agent
_SECTION = re.compile(re.escape(BEGIN.split(" (")[0]) + r".*?" + re.escape(END), re.S)


def mcp_section(lock: Mapping[str, Any] | None, launcher: str, exclude: Iterable[str] = (),
                budget: int | None = None) -> str:
    """The section text between and including the markers (no trailing newline), at most ``budget`` bytes
    (default :data:`DEFAULT_MCP_CONTEXT_BYTES`) however many tools the servers offer.

    It is always-on context, paid on every request: the servers with their tool names while they fit, then
    server names with tool counts (whole lines), always ending with the commands that list and search the tools.
    The type-check stubs are built from the lock at run time, complete whatever the budget.
    """
    from ..mcp.render import budget_lines

    limit = DEFAULT_MCP_CONTEXT_BYTES if budget is None else budget
    head = [BEGIN, "## MCP tools", ""]
    servers = [n for n in ((lock or {}).get("servers") or {}) if n not in set(exclude)]
    if not servers:
        body = ["None configured (`.mcp.json`, else `.github/mcp.json`); after adding a server run "
                f"`{UPDATE_COMMAND}`."]
        return "\n".join(head + body + [END])
    intro = ["Each server is a namespace in the sandbox: `server.tool(arg=...)`, or `mcp_call(server=..., "
             "tool=..., arguments={...})`; chain calls in one program instead of one per turn. Results are plain "
             "data (images and resources as dicts; `mcp_resource(server=..., uri=...)` reads a link).", ""]
    foot = ["", f"`{launcher} tools [SERVER]` lists the tools with signatures, `{launcher} search WORDS` finds them "
                f"by name and description, `{launcher} describe server.tool` prints one's schema.", END]
    room = limit - len("\n".join(head + intro + foot).encode("utf-8")) - 1
    return "\n".join(head + intro + budget_lines(lock, max(room, 0), exclude=exclude) + foot)


def context_budget(project: Path) -> int:
    """``mcp_context_bytes`` in ``<project>/.codeact/settings.json``, else :data:`DEFAULT_MCP_CONTEXT_BYTES`."""
    import json

    try:
        value = json.loads((project / ".codeact" / "settings.json").read_text(encoding="utf-8")).get(
            "mcp_context_bytes")
    except (OSError, ValueError, AttributeError):
        return DEFAULT_MCP_CONTEXT_BYTES
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else \
        DEFAULT_MCP_CONTEXT_BYTES


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


def refresh(project: Path, *, timeout: float, launcher: str | None = None,
            progress: Callable[[str], None] | None = None) -> list[str]:
    """Re-discover the MCP servers, write the lock and rewrite the generated sections (and, in exclusive mode, the
    CLI settings that disable the repository's servers: clisettings.py). Returns changed files.

    ``launcher`` defaults to the one the repo-scope templates print (the generated sections must match them)."""
    from ..layout import CLI_SETTINGS, LAYOUTS
    from ..mcp.config import read_exclusions
    from ..mcp.discovery import discover
    from ..mcp.lock import read_lock

    discover(project, timeout=timeout, progress=progress)
    # Render from the lock as written (sorted keys), exactly as the template's extension reads it.
    section = mcp_section(read_lock(project), launcher or LAYOUTS["repo"].launcher_command,
                          read_exclusions(project), context_budget(project))
    changed = [rel for rel in DOC_FILES if rewrite(project / rel, section)]
    from . import clisettings
    return changed + ([CLI_SETTINGS] if clisettings.sync(project) else [])
