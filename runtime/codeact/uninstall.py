"""`codeact uninstall`: remove every file the template owns (and, with --all, the seeded ones too), in any scope.

Which files are owned depends on the scope recorded in the answers file (layout.py). A global-scope install also
removes the links `codeact link` made in ``$COPILOT_HOME`` — only those: anything else there is left alone, with a
warning.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from .errors import EXIT_OK
from .layout import for_scope, project_of, scope_of
from .policy import find_workspace


def removable(project: Path, *, everything: bool = False, scope: str | None = None) -> list[str]:
    """The owned (and with ``everything`` the seeded) paths that exist in ``project``."""
    layout = for_scope(scope or scope_of(project))
    items = list(layout.owned) + (list(layout.seeded) if everything else [])
    return [item for item in items if (project / item.rstrip("/")).exists() or (project / item).is_symlink()]


def uninstall(project: Path, *, everything: bool = False, dry_run: bool = False,
              scope: str | None = None) -> list[str]:
    removed = removable(project, everything=everything, scope=scope)
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


def default_project(workspace: str | None) -> Path:
    """``--workspace``, else the global or plugin install this runtime belongs to, else the git top-level here."""
    if workspace:
        return find_workspace(workspace)
    from .config import Settings, codeact_home

    home = codeact_home()
    scope = Settings.load(home).scope
    if scope in ("global", "plugin"):
        try:
            return project_of(home, scope)
        except IndexError:
            pass
    return find_workspace()


def main(args: argparse.Namespace) -> int:
    project = default_project(args.workspace)
    scope = scope_of(project)
    layout = for_scope(scope)
    verb = "would remove" if args.dry_run else "removed"
    warnings: list[str] = []
    if layout.links:  # first the links, while their targets still exist
        from .links import copilot_home, unlink

        links, warnings = unlink(project, copilot_home(), dry_run=args.dry_run)
        for link in links:
            print(f"{verb} link {link}")
    removed = uninstall(project, everything=args.all, dry_run=args.dry_run, scope=scope)
    for item in removed:
        print(f"{verb} {item}")
    for line in warnings:
        print(f"codeact uninstall: warning: {line}", file=sys.stderr)
    kept = [s for s in layout.seeded if (project / s).exists()]
    if kept and not args.all:
        print("kept your own files (use --all to remove them too): " + ", ".join(kept))
    if not removed:
        print("nothing to remove: no codeact files found")
    elif scope == "plugin":
        print("users who installed the plugin remove it with `copilot plugin uninstall codeact@<marketplace>`")
    return EXIT_OK
