"""`codeact uninstall`: remove every file the template owns (and, with --all, the seeded ones too)."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from .errors import EXIT_OK
from .layout import OWNED_REPO, SEEDED_REPO
from .policy import find_workspace


def removable(project: Path, *, everything: bool = False) -> list[str]:
    """The owned (and with ``everything`` the seeded) paths that exist in ``project``."""
    items = list(OWNED_REPO) + (list(SEEDED_REPO) if everything else [])
    return [item for item in items if (project / item.rstrip("/")).exists() or (project / item).is_symlink()]


def uninstall(project: Path, *, everything: bool = False, dry_run: bool = False) -> list[str]:
    removed = removable(project, everything=everything)
    if dry_run:
        return removed
    for item in removed:
        path = project / item.rstrip("/")
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        parent = path.parent  # tidy folders the template created and that are now empty
        while parent != project and parent.exists() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    return removed


def main(args: argparse.Namespace) -> int:
    project = find_workspace(args.workspace)
    removed = uninstall(project, everything=args.all, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    for item in removed:
        print(f"{verb} {item}")
    kept = [s for s in SEEDED_REPO if (project / s).exists()]
    if kept and not args.all:
        print("kept your own files (use --all to remove them too): " + ", ".join(kept))
    if not removed:
        print("nothing to remove: no codeact files found")
    return EXIT_OK
