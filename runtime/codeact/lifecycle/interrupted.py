"""An update cut short (SIGINT, SIGKILL, a full disk, a read-only file) leaves owned files half-rewritten, and the
next `copier update` refuses the dirty tree. A migration marks the update as running before Copier writes
anything into the project (``begin``) and the after-update migration clears the mark as its last step (``end``):
a mark that is still there means the update did not finish. The launcher refuses to run the runtime then (its
files may be half-written), and drift and doctor print the recovery.
"""
from __future__ import annotations

# Imports inside functions are lazy: each is needed only on the path that imports it.
import shlex
import time
from pathlib import Path

from ..layout import SCOPES, UPDATE_COMMAND, for_scope, scope_of

MARK = ".update-in-progress"  # in codeact_dir; ignored by the stamped .gitignore (the launcher checks this name)


def mark_path(project: Path, scope: str | None = None) -> Path:
    return project / for_scope(scope or scope_of(project)).codeact_dir / MARK


def begin(project: Path, scope: str) -> None:
    """Write the mark: what happened, and the recovery (the launcher prints the file as it is, never running the
    runtime that may be half-written)."""
    path = mark_path(project, scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"a `copier update` started {time.strftime('%Y-%m-%d %H:%M:%S %z')} did not finish: "
                    "template-owned files may be half-written.\n"
                    f"Recover (every change since it started is the update's: Copier refuses a dirty tree):\n"
                    f"    {recovery(project, scope)}\n", encoding="utf-8")


def end(project: Path, scope: str) -> None:
    """Clear the mark, wherever a scope puts it (a scope switch marked the old scope's folder)."""
    for name in {scope, *SCOPES}:
        mark_path(project, name).unlink(missing_ok=True)


def unwritable(project: Path, scope: str) -> list[str]:
    """Owned files and folders the update cannot write (a read-only skill folder): Copier would skip them and
    drop the changes it had to merge there, and still say "No conflicts left"."""
    import os

    found = []
    for item in for_scope(scope).owned:
        top = project / item.rstrip("/")
        if not top.exists() or top.is_symlink():
            continue
        paths = [top, *top.rglob("*")] if top.is_dir() else [top]
        for path in paths:
            if path.is_symlink() or ".venv" in path.parts or "cache" in path.relative_to(project).parts[:2]:
                continue
            if not os.access(path, os.W_OK):
                found.append(path.relative_to(project).as_posix() + ("/" if path.is_dir() else ""))
    return sorted(found)


def recovery(project: Path, scope: str | None = None) -> str:
    """The commands that put the install back as HEAD holds it and update again (Copier refuses a dirty tree at
    its start, so every change since is the update's)."""
    layout = for_scope(scope or scope_of(project))
    folders = sorted({item.split("/", 1)[0] for item in layout.owned if "/" in item.rstrip("/")})
    mark = mark_path(project, layout.scope).relative_to(project).as_posix()
    return (f"cd {shlex.quote(str(project))} && git restore --source=HEAD --staged --worktree -- . && "
            f"git clean -fd -- {' '.join(folders)} && rm -f {mark} && {UPDATE_COMMAND}")


def interrupted(project: Path) -> str:
    """Why the install is half-updated, with the recovery; "" when no update was cut short."""
    try:
        mark_path(project).read_text(encoding="utf-8")
    except OSError:
        return ""
    return f"an update did not finish: template-owned files may be half-written; recover: {recovery(project)}"
