"""``codeact uninstall``: remove every file the template owns."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``uninstall`` to the subcommands ``sub``."""
    un_p = sub.add_parser("uninstall", help="remove every file the template owns; keep your own unless --all")
    un_p.add_argument("--all", action="store_true", help="also remove the seeded files (your local instructions)")
    un_p.add_argument("--dry-run", action="store_true", help="only print what would be removed")
    un_p.add_argument("--force", action="store_true",
                      help="also remove untracked files of yours inside the install's folders (named otherwise)")
    un_p.add_argument("--workspace", help="the repository (default: the git top-level)")


def main(args: argparse.Namespace) -> int:
    from ..lifecycle import uninstall

    return int(uninstall.main(args))
