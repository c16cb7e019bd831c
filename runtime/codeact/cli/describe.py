"""``codeact describe``: the full documentation and schema of one tool."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``describe`` to the subcommands ``sub``."""
    desc_p = sub.add_parser("describe", help="full documentation and schema of one tool")
    desc_p.add_argument("name", help="tool name, e.g. grep or server.tool")
    desc_p.add_argument("--workspace", help=argparse.SUPPRESS)


def main(args: argparse.Namespace) -> int:
    from ..mcp.listing import print_describe  # also the real `server.tool` and the CLI's `server-tool` names
    from ..tools.assemble import LIVE_CONTEXTS, current_tools

    tools = current_tools(getattr(args, "workspace", None), args.environ, args.cwd)
    lent = sorted(n for n, t in tools.items() if t.source == "live" and n.partition(".")[0] == args.name)
    if args.name not in tools and lent:  # a live provider: what it says about itself, and its tools
        context = next((c for c in (get(args.name) for get in LIVE_CONTEXTS) if c), None)
        print(f"{args.name}: a live provider (connected to the warm server), lending {len(lent)} tool(s):")
        for name in lent:
            print(f"  {name}(...)  {tools[name].description}")
        if context:
            print()
            print(context)
        return 0
    return print_describe(args, tools)
