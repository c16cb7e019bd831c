"""The tool catalog: built-in tools by name, loaded lazily so a run imports only what it offers."""
from __future__ import annotations

import importlib

from .base import Tool, ToolContext, tool_from_function

# name -> module under codeact.tools that defines a function of that name taking (ctx, **kwargs)
BUILTINS: dict[str, str] = {
    "view": "files",
    "create": "files",
    "edit": "files",
    "glob": "search",
    "grep": "search",
    "outline": "outline",
    "bash": "shell",
    "sql": "sql",
    "web_fetch": "web",
    "github_api": "web",
    "previous_output": "history",
}
DEFAULT_TOOLS: tuple[str, ...] = ("view", "create", "edit", "glob", "grep", "outline", "bash", "sql")
# Offered whatever the stamped answers say (a cut output names previous_output); CODEACT_DISABLE still removes them.
ALWAYS_TOOLS: tuple[str, ...] = ("previous_output",)
# Tools that start no process or thread (the others run ripgrep, a shell, `gh`): see codeact.backends.cpu.
IN_PROCESS_TOOLS = frozenset({"view", "create", "edit", "sql", "web_fetch", "previous_output"})
# Tools that act with the user's permissions on the host or reach the network: opt-in.
RISKY_TOOLS: dict[str, str] = {
    "bash": "runs shell commands on the host with your permissions",
    "web_fetch": "reaches the network",
    "github_api": "reaches the network with your GitHub token",
}


def builtin_tool(name: str, ctx: ToolContext) -> Tool:
    """The built-in tool ``name`` bound to ``ctx``."""
    module = importlib.import_module(f"{__name__}.{BUILTINS[name]}")
    tool = tool_from_function(getattr(module, name), source="builtin", bind=ctx, skip_first=True)
    return tool._replace(in_process=True) if name in IN_PROCESS_TOOLS else tool


__all__ = ["ALWAYS_TOOLS", "BUILTINS", "DEFAULT_TOOLS", "RISKY_TOOLS", "Tool", "ToolContext", "builtin_tool",
           "tool_from_function"]
