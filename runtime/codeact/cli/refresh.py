"""``codeact refresh``: re-discover the MCP servers, write the lock and update the MCP section of the instructions and agent."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``refresh`` to the subcommands ``sub``."""
    ref_p = sub.add_parser("refresh", help="re-discover MCP servers, write the lock and update the MCP section of "
                                           "the instructions and agent (run by `copier copy`/`update`)")
    ref_p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for a server that sets no "
                                                                   "\"timeout\" of its own (default 60, as the CLI)")
    ref_p.add_argument("--workspace", help="the repository (default: the git top-level)")


def main(args: argparse.Namespace) -> int:
    from ..lifecycle import refresh

    return int(refresh.main(args))
