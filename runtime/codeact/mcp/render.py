"""Compact, deterministic text about the exposed MCP tools, for instructions and agent files.

Pure functions of the lock (no I/O, no Jinja, no ``mcp`` import): the same lock gives the same lines.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.stubs import signature
from .bindings import as_tool
from .exposure import build_catalog

MAX_DESCRIPTION = 100


def short_description(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """The first line of ``text``, cut at a word boundary to ``limit`` characters (with an ellipsis)."""
    first = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    if len(first) <= limit:
        return first
    cut = first[:limit].rsplit(" ", 1)[0].rstrip(",;:.")
    return cut + "…"


def render_tool_lines(lock: Mapping[str, Any] | None, *, exclude: Iterable[str] = ()) -> list[str]:
    """One line per exposed tool: ``server.tool(arg: type, ...) -> type — description``, sorted by name.

    ``exclude`` removes servers by real name (the lock already leaves out the ``mcp_exclude`` servers).
    """
    lines = []
    for exposed in build_catalog(lock, exclude=exclude).tools:
        text = signature(as_tool(exposed, _no_call))
        description = short_description(exposed.description)
        lines.append(f"{text} — {description}" if description else text)
    return lines


def render_server_lines(lock: Mapping[str, Any] | None, *, exclude: Iterable[str] = ()) -> list[str]:
    """One line per server in the lock: ``name (python namespace): N tools`` or ``name: unavailable (reason)``."""
    catalog = build_catalog(lock, exclude=exclude)
    namespaces = {t.server: t.py_server for t in catalog.tools}
    skip = set(exclude)
    lines = []
    for name, entry in sorted((lock or {}).get("servers", {}).items()):
        if name in skip:
            continue
        if entry.get("status") != "ok":
            lines.append(f"{name}: unavailable ({entry.get('reason') or 'failed'})")
            continue
        count = len(entry.get("tools", []))
        ns = namespaces.get(name)
        lines.append(f"{name}" + (f" (as `{ns}`)" if ns and ns != name else "") + f": {count} tool(s)")
    return lines


def _size(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def budget_lines(lock: Mapping[str, Any] | None, budget: int, *, exclude: Iterable[str] = ()) -> list[str]:
    """The servers as whole Markdown lines within ``budget`` bytes (each line with its newline), sorted by name.

    Every server gets its tool count (``- `big`: 300 tools``); then, in order, each whose line with the tool names
    (``- `demo`: add, echo``) still fits gets that instead. When even the counts do not fit, the last line says how
    many servers were left out.
    A failed server gets ``- `name`: unavailable (reason)``. Pure: the same lock and budget give the same lines.
    """
    catalog = build_catalog(lock, exclude=exclude)
    skip = set(exclude)
    by_server: dict[str, list[str]] = {}
    spaces: dict[str, str] = {}
    for exposed in catalog.tools:
        by_server.setdefault(exposed.server, []).append(exposed.py_tool)
        spaces[exposed.server] = exposed.py_server
    short, full = [], []
    for name, entry in sorted(((lock or {}).get("servers") or {}).items()):
        if name in skip:
            continue
        space = spaces.get(name, name)
        label = f"`{space}`" + (f" (server `{name}`)" if space != name else "")
        if entry.get("status") != "ok":
            line = f"- `{name}`: unavailable ({short_description(entry.get('reason') or 'failed', 80)})"
            short.append(line)
            full.append(line)
            continue
        tools = by_server.get(name, [])
        short.append(f"- {label}: {len(tools)} tool{'' if len(tools) == 1 else 's'}")
        full.append(f"- {label}: {', '.join(tools)}" if tools else short[-1])
    chosen = list(short)
    if _size(chosen) > budget:  # not even the counts fit: leave servers out, and say how many
        while chosen:
            chosen.pop()
            more = f"- … and {len(short) - len(chosen)} more server(s)"
            if _size(chosen + [more]) <= budget:
                return chosen + [more]
        return []
    for i, line in enumerate(full[:len(chosen)]):  # tool names wherever they fit, in order
        trial = chosen[:i] + [line] + chosen[i + 1:]
        if _size(trial) <= budget:
            chosen = trial
    return chosen


def main(argv: list[str] | None = None) -> int:
    """``python -m codeact.mcp.render [--workspace DIR] [--servers]``: print the lines for a workspace's lock."""
    import argparse
    import sys
    from pathlib import Path

    from .lock import read_lock

    parser = argparse.ArgumentParser(prog="python -m codeact.mcp.render", description=main.__doc__)
    parser.add_argument("--workspace", default=".", help="folder holding .codeact/tools.lock.json")
    parser.add_argument("--servers", action="store_true", help="one line per server instead of per tool")
    parser.add_argument("--exclude", action="append", default=[], help="leave out this server (repeatable)")
    args = parser.parse_args(argv)
    lock = read_lock(Path(args.workspace))
    lines = (render_server_lines if args.servers else render_tool_lines)(lock, exclude=args.exclude)
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return 0


def _no_call(**_kwargs: Any) -> Any:  # pragma: no cover - rendering never calls a tool
    raise RuntimeError("rendering only")


__all__ = ["budget_lines", "main", "render_server_lines", "render_tool_lines", "short_description"]


if __name__ == "__main__":
    raise SystemExit(main())
