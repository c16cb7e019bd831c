"""``codeact refresh``: re-discover the MCP servers, write the lock and update the MCP section of the instructions and agent."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import EXIT_OK


def add_parser(sub: Any) -> None:
    """Add ``refresh`` to the subcommands ``sub``."""
    ref_p = sub.add_parser("refresh", help="re-discover MCP servers, write the lock and update the MCP section of "
                                           "the instructions and agent (run by `copier copy`/`update`)")
    ref_p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for a server that sets no "
                                                                   "\"timeout\" of its own (default 60, as the CLI)")
    ref_p.add_argument("--workspace", help="the repository (default: the git top-level)")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..core.boundary import find_workspace
    from ..lifecycle.refresh import refresh

    project = Path(args.workspace).resolve() if args.workspace else find_workspace()

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        changed = refresh(project, timeout=args.timeout, progress=say)
    except Exception as exc:  # noqa: BLE001 - a refresh must never break `copier update`
        from ..core.config import launcher_invocation

        say(f"codeact refresh: could not refresh the MCP tools ({exc}); the drift check will report the lock as "
            f"stale until {launcher_invocation('refresh')} succeeds")
        return EXIT_OK
    say("codeact refresh: " + (f"updated {', '.join(changed)}" if changed else "instructions already up to date"))
    return EXIT_OK
