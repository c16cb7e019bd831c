"""``codeact search``: find tools by name and description, best first (read-only)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``search`` to the subcommands ``sub``."""
    search_p = sub.add_parser("search", help="find tools by name and description, best first (read-only)")
    search_p.add_argument("query", nargs="+", help="words to look for, e.g. invoice pdf")
    search_p.add_argument("--limit", type=int, default=20, help="at most this many tools (default 20; 0: all)")
    search_p.add_argument("--json", action="store_true", help="print the matches as JSON, best first")
    search_p.add_argument("--workspace", help=argparse.SUPPRESS)


def main(args: argparse.Namespace) -> int:
    from ..mcp.listing import print_search  # read-only, like `tools`
    from ..tools.assemble import current_tools

    return print_search(args, current_tools(getattr(args, "workspace", None), args.environ, args.cwd))
