"""`codeact uninstall`: remove exactly what this install stamped (and, with --all, what it seeded), in any scope.

What the install stamped is recorded in its manifest (``.codeact/manifest.json``, rendered by the template from the
answers, so `copier update` keeps it current). An install stamped before the manifest existed falls back to the
scope's layout, keeping every file git history holds from before the stamp commit (the commit that added the
answers file). A seeded file is removed only if the stamp wrote it: Copier skips a seeded file that already exists,
so one that git history holds from before the stamp is the user's own, whatever the manifest says.

A global-scope install also removes the links `codeact link` made in ``$COPILOT_HOME`` — only those: anything else
there is left alone, with a warning.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from ..errors import EXIT_OK
from .layout import ANSWERS_FILE, for_scope, project_of, read_manifest, scope_of
from ..core.policy import find_workspace


class Stamped(NamedTuple):
    """What an install stamped: owned and seeded paths ("/" ends a folder), and where that was learnt."""

    owned: tuple[str, ...]
    seeded: tuple[str, ...]
    source: str  # "manifest" | "layout and git history"


def stamped(project: Path, scope: str | None = None) -> Stamped:
    """What the install in ``project`` stamped (see the module's docstring), seeded files the user had dropped."""
    manifest = read_manifest(project)
    if manifest is not None:
        owned, seeded, source = manifest.owned, manifest.seeded, "manifest"
    else:
        layout = for_scope(scope or scope_of(project))
        owned, seeded, source = layout.owned, layout.seeded, "layout and git history"
    before = existed_before_stamp(project, (*seeded, *(owned if manifest is None else ())))
    return Stamped(tuple(p for p in owned if p not in before), tuple(p for p in seeded if p not in before), source)


def existed_before_stamp(project: Path, items: tuple[str, ...]) -> set[str]:
    """Those of ``items`` that git history in ``project`` holds from before the stamp commit (the first commit
    adding the answers file; all of history when the stamp is not committed yet). Empty without git."""
    if not items:
        return set()

    def git(*args: str) -> list[str] | None:
        try:
            done = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=project, capture_output=True,
                                  text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.split("\0" if "-z" in args else "\n") if done.returncode == 0 else None

    adds = git("log", "--format=%H", "--diff-filter=A", "--", ANSWERS_FILE)
    if adds is None:
        return set()  # not a repository (or no git): nothing to compare with
    commits = [c for c in adds if c]
    if commits:
        line = git("rev-list", "--parents", "-n", "1", commits[-1]) or [""]
        revisions = line[0].split()[1:]  # the stamp commit's parents
    else:
        revisions = ["HEAD"] if git("rev-parse", "--verify", "-q", "HEAD") else []
    if not revisions:
        return set()
    names = set(git("log", "--format=", "--name-only", "--relative", "-z", *revisions, "--",
                    *(item.rstrip("/") for item in items)) or ())
    names = {n.strip("\n") for n in names if n.strip("\n")}
    return {item for item in items
            if any(n == item.rstrip("/") or (item.endswith("/") and n.startswith(item)) for n in names)}


def removable(project: Path, *, everything: bool = False, scope: str | None = None,
              found: Stamped | None = None) -> list[str]:
    """The stamped owned (and with ``everything`` the seeded) paths that exist in ``project``."""
    found = found or stamped(project, scope)
    items = list(found.owned) + (list(found.seeded) if everything else [])
    paths = [project / item.rstrip("/") for item in items]
    return [item for item, path in zip(items, paths) if path.exists() or path.is_symlink()]


def uninstall(project: Path, *, everything: bool = False, dry_run: bool = False,
              scope: str | None = None, found: Stamped | None = None) -> list[str]:
    """Remove what :func:`removable` lists (folders the template made and that are now empty too)."""
    removed = removable(project, everything=everything, scope=scope, found=found)
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
    from ..core.config import Settings, codeact_home

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
    found = stamped(project, scope)  # before anything goes: the manifest is removed with .codeact/
    verb = "would remove" if args.dry_run else "removed"
    warnings: list[str] = []
    if layout.links:  # first the links, while their targets still exist
        from .links import copilot_home, unlink

        links, warnings = unlink(project, copilot_home(), dry_run=args.dry_run)
        for link in links:
            print(f"{verb} link {link}")
    removed = uninstall(project, everything=args.all, dry_run=args.dry_run, scope=scope, found=found)
    for item in removed:
        print(f"{verb} {item}")
    for line in warnings:
        print(f"codeact uninstall: warning: {line}", file=sys.stderr)
    kept = [s for s in found.seeded if (project / s).exists()]
    if kept and not args.all:
        print("kept your own files (use --all to remove them too): " + ", ".join(kept))
    if not removed:
        print("nothing to remove: no codeact files found")
    elif scope == "plugin":
        print("users who installed the plugin remove it with `copilot plugin uninstall codeact@<marketplace>`")
    return EXIT_OK
