"""What ``codeact tools``, ``codeact describe`` and ``codeact search`` say about MCP tools beyond the tools themselves.

- :func:`find_tool` — a tool by the name the program calls it, by its real ``server.tool`` name, or by the Copilot
  CLI's ``server-tool`` (the longest server name wins when a server name holds ``-``).
- :func:`unavailable_lines` — the servers that failed and the tools left out, each with the reason.
- :func:`current_lock` — the lock the tools came from (repo scope: the committed one plus this machine's lock of the
  user's own servers; global and plugin scope: this machine's lock for the repository).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.tool import Tool


def real_name(tool: Tool) -> str:
    """``server.tool`` as the server and the configuration name them (the Python name for non-MCP tools)."""
    return tool.original_name or tool.name


def find_tool(tools: Mapping[str, Tool], name: str) -> Tool | None:
    """``name`` as called in the sandbox (``my_srv.get_item``), as the server names it (``my-srv.get-item``), or
    as the Copilot CLI names it (``my-srv-get-item``); ``None`` when no tool matches."""
    if name in tools:
        return tools[name]
    mcp = [t for t in tools.values() if t.source == "mcp" and "." in t.name]
    for tool in mcp:
        if real_name(tool) == name:
            return tool
    if "." in name:  # mixed: the Python server name with the real tool name, or the reverse
        server, _, tool_name = name.partition(".")
        for tool in mcp:
            py_server, _, py_tool = tool.name.partition(".")
            real_server, _, real_tool = real_name(tool).partition(".")
            if server in (py_server, real_server) and tool_name in (py_tool, real_tool):
                return tool
        return None
    by_server: dict[str, list[Tool]] = {}
    for tool in mcp:
        by_server.setdefault(real_name(tool).partition(".")[0], []).append(tool)
    for server in sorted(by_server, key=len, reverse=True):  # the longest server-name prefix wins
        if name.startswith(server + "-"):
            rest = name[len(server) + 1:]
            for tool in by_server[server]:
                if rest in (real_name(tool).partition(".")[2], tool.name.partition(".")[2]):
                    return tool
    return None


def unavailable_lines(lock: Mapping[str, Any] | None, *, server: str | None = None,
                      exclude: Iterable[str] = ()) -> list[str]:
    """One line per failed server and per tool left out (an invalid schema, tasks required), with the reason."""
    skip = set(exclude)
    lines = []
    for name, entry in sorted(((lock or {}).get("servers") or {}).items()):
        if name in skip or (server is not None and server != name):
            continue
        if entry.get("status") != "ok":
            lines.append(f"{name}: unavailable ({entry.get('reason') or 'failed'}); fix it, then `codeact discover`")
        for dropped in entry.get("dropped") or []:
            lines.append(f"{name}.{dropped.get('name')}: not offered ({dropped.get('reason')})")
    return lines


def current_lock(workspace: Path, environ: Mapping[str, str], settings: Any) -> dict[str, Any] | None:
    """The lock the current tools were built from (read again; discovery, if any, already ran)."""
    from .cache import cached_lock, has_config, repo_lock

    if settings.scope == "repo":
        return repo_lock(workspace, environ, exclude=settings.mcp_exclude)
    if not has_config(workspace, environ):
        return None
    try:
        return cached_lock(workspace, environ, exclude=settings.mcp_exclude, progress=lambda _line: None)[0]
    except Exception:  # noqa: BLE001 - only for the notes of `codeact tools`
        return None


def _origin(tool: Tool) -> str:
    if tool.source == "builtin":
        return ""
    if tool.source == "mcp" and tool.original_name and tool.original_name != tool.name:
        return f"  [mcp: {tool.original_name}]"  # the name had to be sanitised
    return f"  [{tool.source}]"


def _lock_for(args: argparse.Namespace) -> dict[str, Any] | None:
    from ..core.boundary import find_workspace
    from ..core.config import Settings

    root = Path(getattr(args, "workspace", None) or find_workspace()).resolve()
    try:
        return current_lock(root, os.environ, Settings.load())
    except Exception:  # noqa: BLE001 - the notes are extra; the tool list itself is already printed
        return None


def print_tools(args: argparse.Namespace, tools: Mapping[str, Tool]) -> int:
    """``codeact tools [SERVER] [--json]``: every tool offered now (or one server's), then what is not offered."""
    from ..core.stubs import signature
    from ..errors import UsageError

    server = getattr(args, "server", None)
    chosen = list(tools.values())
    if server:
        chosen = [t for t in chosen if t.source == "mcp" and server in (t.name.partition(".")[0],
                                                                         real_name(t).partition(".")[0])]
    lock = _lock_for(args)
    servers = set((lock or {}).get("servers") or {})
    if server and not chosen and server not in servers:
        known = sorted({real_name(t).partition(".")[0] for t in tools.values() if t.source == "mcp" and
                        "." in t.name} | servers)
        raise UsageError(f"no MCP server {server!r}; servers: {', '.join(known) or 'none configured'}")
    real = next((real_name(t).partition(".")[0] for t in chosen if t.source == "mcp"), server)
    missing = unavailable_lines(lock, server=real) if server else unavailable_lines(lock)
    if args.json:
        print(json.dumps([t.manifest() | ({"original_name": t.original_name} if t.source == "mcp" else {})
                          for t in chosen], indent=2, ensure_ascii=False))
        return 0
    for tool in chosen:
        print(f"{signature(tool)}{_origin(tool)}\n    {tool.description}")
    if missing:
        print("\nNot offered:")
        print("\n".join(f"  {line}" for line in missing))
    return 0


def print_describe(args: argparse.Namespace, tools: Mapping[str, Tool]) -> int:
    """``codeact describe NAME``: one tool's signature, documentation and JSON Schema."""
    from ..core.stubs import signature
    from ..errors import UsageError

    tool = find_tool(tools, args.name)
    if tool is None:
        raise UsageError(f"no tool named {args.name!r}; `codeact tools` lists them and `codeact search WORDS` finds "
                         f"them by name and description")
    print(signature(tool))
    print()
    print(tool.doc or tool.description)
    print()
    print("Parameters (JSON Schema):")
    print(json.dumps(tool.parameters, indent=2, ensure_ascii=False))
    return 0


def print_search(args: argparse.Namespace, tools: Mapping[str, Tool]) -> int:
    """``codeact search QUERY [--json]``: tools matching the words, best first; exit 1 when none does."""
    from ..core.stubs import signature
    from .tool_search import full_description, search

    hits = search(tools.values(), " ".join(args.query), limit=max(getattr(args, "limit", 20) or 0, 0) or None)
    if args.json:
        print(json.dumps([{"name": h.tool.name, "original_name": h.tool.original_name, "signature": signature(h.tool),
                           "description": full_description(h.tool), "source": h.tool.source, "matched": h.matched,
                           "score": h.score} for h in hits], indent=2, ensure_ascii=False))
    elif not hits:
        print(f"no tool matches {' '.join(args.query)!r}; `codeact tools` lists them all")
    else:
        for hit in hits:
            print(f"{signature(hit.tool)}{_origin(hit.tool)}\n    {hit.tool.description}")
    return 0 if hits else 1


__all__ = ["current_lock", "find_tool", "print_describe", "print_search", "print_tools", "real_name",
           "unavailable_lines"]
