"""``codeact tools``: list the tools the sandbox offers now."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``tools`` to the subcommands ``sub``."""
    tools_p = sub.add_parser("tools", help="list the tools the sandbox offers now")
    tools_p.add_argument("server", nargs="?", help="only this MCP server's tools (its real or Python name)")
    tools_p.add_argument("--json", action="store_true", help="print a manifest with JSON Schemas")
    tools_p.add_argument("--workspace", help=argparse.SUPPRESS)


def main(args: argparse.Namespace) -> int:
    from ..mcp.listing import print_tools  # MCP servers' unavailable tools and original names too
    from ..tools.assemble import current_tools

    return print_tools(args, current_tools(getattr(args, "workspace", None), args.environ, args.cwd))
