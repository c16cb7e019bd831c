"""``codeact uninstall``: remove every file the template owns."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import EXIT_OK


def add_parser(sub: Any) -> None:
    """Add ``uninstall`` to the subcommands ``sub``."""
    un_p = sub.add_parser("uninstall", help="remove every file the template owns; keep your own unless --all")
    un_p.add_argument("--all", action="store_true", help="also remove the seeded files (your local instructions)")
    un_p.add_argument("--dry-run", action="store_true", help="only print what would be removed")
    un_p.add_argument("--force", action="store_true",
                      help="also remove untracked files of yours inside the install's folders (named otherwise)")
    un_p.add_argument("--workspace", help="the repository (default: the git top-level)")


def main(args: argparse.Namespace) -> int:
    from ..lifecycle.uninstall import default_project, remove_install

    removal = remove_install(default_project(args.workspace), everything=args.all, dry_run=args.dry_run,
                             force=args.force)
    verb = "would remove" if args.dry_run else "removed"
    for link in removal.links:
        print(f"{verb} link {link}")
    found, done = removal.found, removal.done
    for item in sorted({*done.entries, *removal.kept_in}, key=lambda i: [*found.owned, *found.seeded].index(i)):
        print(f"{verb} {item}" + (" (but the files of yours in it, below)" if item in removal.kept_in else ""))
    for line in removal.warnings:
        print(f"codeact uninstall: warning: {line}", file=sys.stderr)
    if done.yours:
        why = (f"untracked, and what the template renders could not be recomputed: {done.unrendered}"
               if done.unrendered else "the template does not render them")
        print(f"kept files of yours inside the install ({why}; --force removes them too): " + ", ".join(done.yours))
    if removal.kept_seeded and not args.all:
        print("kept your own files (use --all to remove them too): " + ", ".join(removal.kept_seeded))
    if not done.entries and not removal.kept_in:
        print("nothing to remove: no codeact files found")
    elif removal.scope == "plugin":
        print("users who installed the plugin remove it with `copilot plugin uninstall codeact@<marketplace>`")
    return EXIT_OK
