"""`codeact link`: put a global-scope install where the Copilot CLI reads user files, by symbolic links.

The install lives in a git folder the user keeps (``copier update`` needs git; ``$COPILOT_HOME`` holds tokens and
sessions and must never become a repository). This links, into ``$COPILOT_HOME`` (default ``~/.copilot``)::

    instructions/codeact.instructions.md, instructions/codeact.local.instructions.md, agents/codeact.agent.md,
    skills/codeact, skills/codeact-update, hooks/codeact.json  ->  the same paths in the install folder
    codeact                                                     ->  the install folder's .codeact (runtime, launcher)

Idempotent, and it never touches a path it did not make: a link is OURS when it points at the install folder's
file (or is a dangling link whose target ends in the same relative path: the folder moved). Anything else at a link
path — a file, a folder, someone else's link — is left alone with a warning. Removal removes only our links.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..layout import for_scope, project_of, read_manifest


def copilot_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$COPILOT_HOME``, else ``~/.copilot`` (not resolved: the CLI uses it as given)."""
    return paths.copilot_home(environ)


@dataclass(frozen=True)
class Link:
    path: Path    # in $COPILOT_HOME
    target: Path  # in the install folder (absolute)
    rel: str      # the target's path relative to the install folder

    @property
    def name(self) -> str:
        return self.path.name

    def state(self) -> str:
        """``ours`` | ``stale`` (our link, target gone) | ``missing`` | ``foreign``."""
        if not self.path.is_symlink():
            return "foreign" if self.path.exists() else "missing"
        try:
            pointed = os.readlink(self.path)
        except OSError:
            return "foreign"
        if Path(pointed) == self.target or os.path.realpath(self.path) == os.path.realpath(self.target):
            return "ours"
        if not self.path.exists() and pointed.replace("\\", "/").rstrip("/").endswith("/" + self.rel):
            return "stale"
        return "foreign"


def planned(project: Path, home: Path) -> list[Link]:
    """The links of the install in ``project``: those its manifest records, else the global scope's."""
    project = project.resolve()
    stamped = read_manifest(project)
    pairs = stamped.links if stamped and stamped.links else for_scope("global").links
    return [Link(home / at, project / rel, rel) for at, rel in pairs]


def check_home(project: Path, home: Path) -> str | None:
    """Why linking ``project`` into ``home`` is refused (None when it is fine)."""
    p, h = project.resolve(), home.expanduser().resolve()
    if p == h or h in p.parents:
        return f"the install folder {p} is inside $COPILOT_HOME ({h}); it must live in a git folder outside it"
    if p in h.parents:
        return f"the install folder {p} contains $COPILOT_HOME ({h}); move the install to a folder outside it"
    return None


def link(project: Path, home: Path) -> tuple[list[str], list[str]]:
    """Make every missing link. Returns (what changed, warnings)."""
    changed: list[str] = []
    warnings: list[str] = []
    for item in planned(project, home):
        shown = f"{home}/{item.path.relative_to(home).as_posix()}"
        if not item.target.exists() and not item.target.is_symlink():
            continue  # e.g. a file this version no longer renders
        state = item.state()
        if state == "ours":
            continue
        if state == "foreign":
            warnings.append(f"left alone: {shown} exists and is not a codeact link (move it away and run "
                            "`codeact link` again to link it)")
            continue
        try:
            item.path.parent.mkdir(parents=True, exist_ok=True)
            if state == "stale":
                item.path.unlink()
            os.symlink(item.target, item.path, target_is_directory=item.target.is_dir())
        except OSError as exc:
            warnings.append(f"could not link {shown}: {exc.strerror or exc}")
            continue
        changed.append(f"{'relinked' if state == 'stale' else 'linked'} {shown} -> {item.target}")
    return changed, warnings


def unlink(project: Path, home: Path, *, dry_run: bool = False) -> tuple[list[str], list[str]]:
    """Remove our links (only ours). Returns (removed link paths, warnings)."""
    removed: list[str] = []
    warnings: list[str] = []
    for item in planned(project, home):
        shown = f"{home}/{item.path.relative_to(home).as_posix()}"
        state = item.state()
        if state in ("ours", "stale"):
            if not dry_run:
                try:
                    item.path.unlink()
                except OSError as exc:
                    warnings.append(f"could not remove {shown}: {exc.strerror or exc}")
                    continue
            removed.append(shown)
        elif state == "foreign":
            warnings.append(f"left alone: {shown} is not a codeact link")
    return removed, warnings


def install_folder(workspace: str | None) -> Path:
    """The global-scope install this runtime belongs to (``--workspace`` overrides)."""
    if workspace:
        return Path(workspace).expanduser().resolve()
    from ..core.config import codeact_home

    home = codeact_home()
    return project_of(home, "global") if home.name == ".codeact" else Path.cwd().resolve()
