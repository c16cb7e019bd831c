"""`codeact uninstall`: remove exactly what this install stamped (and, with --all, what it seeded), in any scope.

What the install stamped is recorded in its manifest (``.codeact/manifest.json``, rendered by the template from the
answers, so `copier update` keeps it current). The manifest is a file of the repository, so a hostile one (or a
merged pull request) may list anything: each entry is checked against the scope's layout (what the recorded
template version renders, :mod:`codeact.layout`); one it does not hold is left alone with a warning, and
so is one that a link leads out of the install or into a ``.git`` folder. An install stamped before the manifest
existed falls back to the scope's layout, keeping every file git history holds from before the stamp commit (the
commit that added the answers file). A seeded file is removed only if the stamp wrote it: Copier skips a seeded file
that already exists, so one that git history holds from before the stamp is the user's own, whatever the manifest
says.

Inside a folder the template owns (``.codeact/``, ``.github/skills/codeact/`` ...) a file git tracks (history gives
it back) or ignores (the venv, caches) goes; an untracked one goes only if the recorded template version renders it
(recomputed with Copier, as `codeact drift` does, when there is such a file). The others are the user's: they are
kept and named, and ``--force`` removes them too. Folders left empty go.

A global-scope install also removes the links `codeact link` made in ``$COPILOT_HOME`` — only those: anything else
there is left alone, with a warning — and the folders there that the links leave empty.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..core.boundary import find_workspace
from ..core.winnames import windows_name
from ..errors import CodeactError
from ..layout import ANSWERS_FILE, LEGACY_ANSWERS_FILE, NOT_RENDERED, for_scope, project_of, read_manifest, scope_of


class Stamped(NamedTuple):
    """What an install stamped: owned and seeded paths ("/" ends a folder), where that was learnt, and the manifest's
    entries left alone with the reason."""

    owned: tuple[str, ...]
    seeded: tuple[str, ...]
    source: str  # "manifest" | "layout and git history"
    refused: tuple[tuple[str, str], ...] = ()


def stamped(project: Path, scope: str | None = None) -> Stamped:
    """What the install in ``project`` stamped (see the module's docstring), seeded files the user had dropped."""
    scope = scope or scope_of(project)
    layout = for_scope(scope)
    manifest = read_manifest(project)
    refused: list[tuple[str, str]] = []
    if manifest is not None:
        owned: list[str] = []
        seeded: list[str] = []
        source = "manifest"
        for entries, allowed, kept in ((manifest.owned, layout.owned, owned), (manifest.seeded, layout.seeded, seeded)):
            for entry in entries:
                if entry in allowed:
                    kept.append(entry)
                else:
                    refused.append((entry, f"which the template ({scope} scope) never renders there"))
    else:
        owned, seeded, source = list(layout.owned), list(layout.seeded), "layout and git history"
    before = existed_before_stamp(project, (*seeded, *(owned if manifest is None else ())))
    return Stamped(tuple(p for p in owned if p not in before), tuple(p for p in seeded if p not in before), source,
                   tuple(refused))


def existed_before_stamp(project: Path, items: tuple[str, ...]) -> set[str]:
    """Those of ``items`` that git history in ``project`` holds from before the stamp commit (the first commit
    adding the answers file, in either of its places; all of history when the stamp is not committed yet). Empty without git."""
    if not items:
        return set()
    adds = _git(project, "log", "--format=%H", "--diff-filter=A", "--", ANSWERS_FILE, LEGACY_ANSWERS_FILE)
    if adds is None:
        return set()  # not a repository (or no git): nothing to compare with
    commits = [c for c in adds if c]
    if commits:
        line = _git(project, "rev-list", "--parents", "-n", "1", commits[-1]) or [""]
        revisions = line[0].split()[1:]  # the stamp commit's parents
    else:
        revisions = ["HEAD"] if _git(project, "rev-parse", "--verify", "-q", "HEAD") else []
    if not revisions:
        return set()
    names = set(_git(project, "log", "--format=", "--name-only", "--relative", "-z", *revisions, "--",
                     *(item.rstrip("/") for item in items)) or ())
    names = {n.strip("\n") for n in names if n.strip("\n")}
    return {item for item in items
            if any(n == item.rstrip("/") or (item.endswith("/") and n.startswith(item)) for n in names)}


def _git(project: Path, *args: str) -> list[str] | None:
    try:
        done = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=project, capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.split("\0" if "-z" in args else "\n") if done.returncode == 0 else None


def outside_reason(project: Path, item: str) -> str | None:
    """Why ``item`` must not be removed although listed (a link leads out of the install, or into ``.git``)."""
    root = Path(os.path.realpath(project))
    target = project / item.rstrip("/")
    # a link itself is removed, never what it points to: only the folder holding it must be the install's
    where = Path(os.path.realpath(target.parent)) / target.name if target.is_symlink() else \
        Path(os.path.realpath(target))
    if not where.is_relative_to(root) or where == root:
        return f"lies outside the install (a link leads to {where})"
    if any(windows_name(part) == ".git" for part in where.relative_to(root).parts):
        return "lies in a .git folder"
    # a link on the way (`.github/skills -> ../docs/skills`) makes the entry a folder of the user's: the folders
    # holding an entry must be the install's own, where the entry's name puts them
    holder = Path(os.path.realpath(target.parent))
    if holder != root / Path(item.rstrip("/")).parent:
        return f"lies behind a link (its folder leads to {holder})"
    return None


class Plan(NamedTuple):
    """What uninstall removes: whole entries, single files inside owned folders that hold files of the user's, the
    user's files it keeps, and entries left alone (with why)."""

    entries: list[str]
    files: list[str]
    yours: list[str]
    refused: list[tuple[str, str]]
    unrendered: str = ""  # why what the template renders could not be recomputed ("" when it was, or not needed)


def plan(project: Path, *, everything: bool = False, force: bool = False, scope: str | None = None,
         found: Stamped | None = None) -> Plan:
    """What :func:`uninstall` removes (see the module's docstring)."""
    found = found or stamped(project, scope)
    refused = list(found.refused)
    entries: list[str] = []
    for item in list(found.owned) + (list(found.seeded) if everything else []):
        path = project / item.rstrip("/")
        if not (path.exists() or path.is_symlink()):
            continue
        why = outside_reason(project, item)
        if why:
            refused.append((item, why))
        else:
            entries.append(item)
    folders = [item for item in entries if item.endswith("/") and (project / item).is_dir()
               and not (project / item.rstrip("/")).is_symlink()]
    yours, unrendered = ([], "") if force else users_files(project, folders)
    files: list[str] = []
    for folder in {item for item in folders if any(rel.startswith(item) for rel in yours)}:
        entries.remove(folder)
        files += [rel for rel in _files_in(project, folder) if rel not in yours]
    return Plan(entries, sorted(files), sorted(yours), refused, unrendered)


def users_files(project: Path, folders: list[str]) -> tuple[list[str], str]:
    """The files in ``folders`` (owned folders) that are the user's: untracked, not ignored, and not rendered by
    the recorded template version (recomputed only when there is such a file; when it cannot be, every such file
    counts as the user's, and the second item says why)."""
    if not folders:
        return [], ""
    listed = _git(project, "ls-files", "-z", "--others", "--exclude-standard", "--", *folders)
    candidates = [rel for rel in (listed if listed is not None else
                                  [f for folder in folders for f in _files_in(project, folder)]) if rel]
    candidates = [rel for rel in candidates
                  if not any(rel == n or (n.endswith("/") and rel.startswith(n)) for n in NOT_RENDERED)]
    if not candidates:
        return [], ""
    rendered, why = _rendered(project)
    return [rel for rel in candidates if rel not in rendered], why


def _rendered(project: Path) -> tuple[set[str], str]:
    """The files the recorded template version renders with the recorded answers, and why that set is empty when
    it cannot be rendered (no Copier, or the template unreachable)."""
    from .drift import render_expected
    from .provenance import local_base, source_errors

    copier = shutil.which("copier")
    if not copier:
        return set(), "`copier` is not on PATH"
    try:
        unverified = source_errors(project, local_base(project), None, first_stamp=True)
        if unverified:  # never render, with --trust, a source the working tree changed (as drift)
            return set(), unverified[0]
        expected = render_expected(project, copier)
    except (CodeactError, OSError, subprocess.SubprocessError) as exc:
        return set(), str(exc)
    try:
        return {p.relative_to(expected).as_posix() for p in expected.rglob("*")
                if (p.is_file() or p.is_symlink()) and ".git" not in p.relative_to(expected).parts}, ""
    finally:
        shutil.rmtree(expected, ignore_errors=True)


def _files_in(project: Path, folder: str) -> list[str]:
    """Every file and link below ``folder`` (relative to ``project``), links not followed."""
    found = []
    for here, dirs, names in os.walk(project / folder):
        for name in names:
            found.append((Path(here) / name).relative_to(project).as_posix())
        for name in dirs:
            if (Path(here) / name).is_symlink():
                found.append((Path(here) / name).relative_to(project).as_posix())
    return found


def removable(project: Path, *, everything: bool = False, scope: str | None = None,
              found: Stamped | None = None) -> list[str]:
    """The stamped owned (and with ``everything`` the seeded) paths that exist in ``project`` and may go."""
    return plan(project, everything=everything, force=True, scope=scope, found=found).entries


def uninstall(project: Path, *, everything: bool = False, dry_run: bool = False, force: bool = False,
              scope: str | None = None, found: Stamped | None = None) -> Plan:
    """Remove what :func:`plan` lists, then the folders the template made that are now empty."""
    planned = plan(project, everything=everything, force=force, scope=scope, found=found)
    if dry_run:
        return planned
    for item in [*planned.entries, *planned.files]:
        path = project / item.rstrip("/")
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    layout = for_scope(scope or scope_of(project))
    for item in [*planned.entries, *planned.files, *layout.owned, *layout.seeded]:
        tidy(project / item.rstrip("/"), project)
    return planned


PRECOMMIT = ".pre-commit-config.yaml"
PRECOMMIT_HOOK_ID = "codeact-drift"


def _without_hook(data: object) -> object:
    """``data`` (a parsed pre-commit config) without CodeAct's hook, and without a repo it leaves with no hooks."""
    if not isinstance(data, dict) or not isinstance(data.get("repos"), list):
        return data
    repos = []
    for repo in data["repos"]:
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        if isinstance(hooks, list):
            kept = [h for h in hooks if not (isinstance(h, dict) and h.get("id") == PRECOMMIT_HOOK_ID)]
            if not kept and len(kept) != len(hooks):
                continue
            repo = {**repo, "hooks": kept}
        repos.append(repo)
    return {**data, "repos": repos}


def _drop_lines(text: str) -> str:
    """``text`` without the lines of the hook ``- id: codeact-drift`` (and its repo block when it was the only
    hook): comments and layout of everything else stay as they are."""
    lines = text.splitlines(keepends=True)

    def indent(line: str) -> int:
        return len(line) - len(line.lstrip(" "))

    for i, line in enumerate(lines):
        if line.strip() in (f"- id: {PRECOMMIT_HOOK_ID}", f'- id: "{PRECOMMIT_HOOK_ID}"'):
            start, depth = i, indent(line)
            end = i + 1
            while end < len(lines) and (not lines[end].strip() or indent(lines[end]) > depth):
                end += 1
            del lines[start:end]
            break
    return "".join(lines)


def drop_precommit_hook(path: Path, *, dry_run: bool = False) -> str:
    """Take CodeAct's drift hook out of the user's pre-commit config (the rest is theirs): kept after uninstall,
    it would run the removed launcher and block every commit. What was done, or ""."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return ""
    wanted = _without_hook(data)
    if wanted == data:
        return ""
    edited = _drop_lines(text)
    try:
        lean = yaml.safe_load(edited)
    except yaml.YAMLError:
        lean = None
    if _without_hook(lean) != wanted or lean != wanted:
        # the line edit did not give the same config (an unusual layout): write the config itself
        edited = yaml.safe_dump(wanted, sort_keys=False)
    if not dry_run:
        path.write_text(edited, encoding="utf-8")
    verb = "would remove" if dry_run else "removed"
    return f"{verb} the {PRECOMMIT_HOOK_ID} hook from {path.name} (it ran the removed launcher); the rest is yours"


def tidy(path: Path, top: Path) -> None:
    """Remove the folders from ``path`` up to ``top`` (kept) while they are empty; a removed file's path is fine."""
    folder = path
    while folder != top and folder.is_relative_to(top):
        if folder.is_symlink() or folder.is_file():
            return
        if folder.is_dir():
            try:
                if any(folder.iterdir()):
                    return
                folder.rmdir()
            except OSError:
                return
        folder = folder.parent


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


@dataclass(frozen=True)
class Removal:
    """What :func:`remove_install` removed from an install (with ``dry_run``: would remove)."""

    project: Path
    scope: str
    found: Stamped  # what the install stamped, read before anything went
    done: Plan
    links: list[str]  # the links removed from $COPILOT_HOME (global scope)
    warnings: list[str]
    kept_in: set[str]  # owned folders that stay for the files of the user's in them
    kept_seeded: list[str]  # seeded files left in place (without ``everything``)


def remove_install(project: Path, *, everything: bool = False, dry_run: bool = False,
                   force: bool = False) -> Removal:
    """`codeact uninstall`: the links `codeact link` made (global scope), then what :func:`uninstall` removes."""
    scope = scope_of(project)
    layout = for_scope(scope)
    found = stamped(project, scope)  # before anything goes: the manifest is removed with .codeact/
    warnings: list[str] = []
    links: list[str] = []
    # Everything the removal imports is loaded before anything goes: this runtime's own files go with .codeact/,
    # and a global install runs it through the $COPILOT_HOME link that unlink() removes first.
    import yaml  # noqa: F401 - for drop_precommit_hook

    from . import drift, orgpolicy, provenance  # noqa: F401 - for users_files (recomputes what the template renders)
    if not dry_run:
        from .clisettings import sync

        sync(project, exclusive=False)  # CodeAct's entries out of the user's CLI settings (the file stays theirs)
    if layout.links:  # first the links, while their targets still exist
        from .links import copilot_home, unlink

        home = copilot_home()
        links, warnings = unlink(project, home, dry_run=dry_run)
        for link in links if not dry_run else ():
            tidy(Path(link).parent, home)
    done = uninstall(project, everything=everything, dry_run=dry_run, force=force, scope=scope, found=found)
    kept_in = {item for item in found.owned if item.endswith("/") and any(f.startswith(item) for f in done.yours)}
    for item, why in done.refused:
        warnings.append(f"left alone: the manifest lists {item}, {why}" if not why.startswith(("lies", "a link"))
                        else f"left alone: {item} {why}")
    kept_seeded = [item for item in found.seeded if (project / item).exists()]
    if (project / PRECOMMIT).is_file():
        dropped = drop_precommit_hook(project / PRECOMMIT, dry_run=dry_run)
        if dropped:
            warnings.append(dropped)
    return Removal(project, scope, found, done, links, warnings, kept_in, kept_seeded)
