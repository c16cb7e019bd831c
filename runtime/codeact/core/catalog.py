"""The catalog of built-in tools: their names and the modules that define them (a leaf: imports nothing).

Each is bound and imported only when a run offers it (codeact.tools.assemble.builtin_tool)."""
from __future__ import annotations

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


__all__ = ["ALWAYS_TOOLS", "BUILTINS", "DEFAULT_TOOLS", "IN_PROCESS_TOOLS", "RISKY_TOOLS"]
