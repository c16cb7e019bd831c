"""``codeact describe``: the full documentation and schema of one tool."""
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
    from ..tools.assemble import current_tools

    return print_describe(args, current_tools(getattr(args, "workspace", None)))
