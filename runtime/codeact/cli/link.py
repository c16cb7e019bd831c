"""``codeact link``: link a global-scope install into ``$COPILOT_HOME``."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``link`` to the subcommands ``sub``."""
    link_p = sub.add_parser("link", help="global scope: link the instructions, agent, skills and hook into "
                                         "$COPILOT_HOME (run by `copier copy` and after every update)",
                            description="Link a global-scope install into $COPILOT_HOME (default ~/.copilot), where "
                                        "the Copilot CLI reads user instructions, agents, skills and hooks. "
                                        "Idempotent; never replaces a file it did not make.")
    link_p.add_argument("--workspace", help="the install folder (default: the one this launcher belongs to)")
    link_p.add_argument("--remove", action="store_true", help="remove the links instead (only codeact's own)")
    link_p.add_argument("--dry-run", action="store_true", help="with --remove: only print what would be removed")


def main(args: argparse.Namespace) -> int:
    from ..lifecycle import links

    return int(links.main(args))
