"""``codeact link``: link a global-scope install into ``$COPILOT_HOME``."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import EXIT_OK, EXIT_USAGE


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
    from ..layout import scope_of
    from ..lifecycle.links import check_home, copilot_home, install_folder, link, unlink

    project = install_folder(args.workspace)
    home = copilot_home()
    scope = scope_of(project)
    if scope != "global":
        print(f"codeact link: {project} is a {scope}-scope install; only the global scope links into "
              "$COPILOT_HOME", file=sys.stderr)
        return EXIT_USAGE
    refused = check_home(project, home)
    if refused:
        print(f"codeact link: {refused}", file=sys.stderr)
        return EXIT_USAGE
    if args.remove:
        done, warnings = unlink(project, home, dry_run=args.dry_run)
        done = [f"{'would remove' if args.dry_run else 'removed'} {p}" for p in done]
    else:
        done, warnings = link(project, home)
    for line in done:
        print(f"codeact link: {line}")
    for line in warnings:
        print(f"codeact link: warning: {line}", file=sys.stderr)
    if not done and not warnings:
        print(f"codeact link: every link in {home} is in place")
    return EXIT_OK
