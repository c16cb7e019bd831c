"""What ``copier update`` cannot say or keep by itself: the user's files, seeded files the user deleted, and a report.

Both run inside Copier's process, through the template's Jinja extension, with the runtime of the template version
being rendered.

- Seeded files (the user's after the first stamp) are rendered only into the real destination, never into the two
  temporary copies Copier diffs during an update: so no update ever deletes one (Copier removes what the old copy
  has and the new one lacks, e.g. after ``-d precommit_hook=false``), and one the user deleted stays deleted (its
  deletion is committed in HEAD while HEAD's ``.codeact/manifest.json`` lists it as seeded, or, for an install
  stamped before the manifest, git history shows it was there).
- :func:`keep_user_files` runs after every update (an unversioned ``_migrations`` entry, through
  ``extensions/keep_user_files.py``): Copier deletes every file the old version rendered and the new one does not,
  edited or not, so an update from a version that still rendered seeded files into its copy (before the install
  manifest) deleted them; whatever the old version was, no file the template does not own survives deleted or changed.
- :func:`update_report` is Copier's ``_message_after_update``: what changed, and whether conflicts were left and how
  to find them (Copier exits 0 and says nothing about them).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from ..layout import ANSWERS_FILE, LEGACY_ANSWERS_FILE, MANIFEST_FILE, answers_file, for_scope, has_answers, scope_of

_MARKER = re.compile(rb"^(<{7} |>{7} )", re.M)


def _git(dst: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(dst), *args], capture_output=True, check=False)


def is_real_destination(dst_path: object) -> bool:
    """Whether ``dst_path`` is the project being updated (its answers file is tracked there), not a temporary copy."""
    dst = Path(str(dst_path))
    return any(_git(dst, "ls-files", "--error-unmatch", "--", name).returncode == 0
               for name in (ANSWERS_FILE, LEGACY_ANSWERS_FILE))


def _head_has(dst: Path, path: str) -> bool:
    return _git(dst, "cat-file", "-e", f"HEAD:./{path}").returncode == 0


def _head_manifest_list(dst: Path, key: str) -> list[str] | None:
    """The list ``key`` of the manifest HEAD holds (its strings), or None when HEAD has no readable one."""
    shown = _git(dst, "show", f"HEAD:./{MANIFEST_FILE}")
    if shown.returncode != 0:
        return None
    try:
        listed = json.loads(shown.stdout.decode("utf-8")).get(key)
    except (ValueError, AttributeError):
        return None
    return [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else None


def _seeded_before(dst: Path, path: str) -> bool:
    """Whether the install recorded in HEAD seeded ``path`` (its manifest), else whether git ever held it."""
    seeded = _head_manifest_list(dst, "seeded")
    if seeded is not None:
        return path in seeded
    history = _git(dst, "log", "-1", "--format=%H", "HEAD", "--", path)
    return history.returncode == 0 and bool(history.stdout.strip())


def seed_here(dst_path: object, operation: str, path: str) -> bool:
    """Whether this render writes the seeded file ``path`` (Copier still skips it when it exists)."""
    if operation != "update":
        return True
    dst = Path(str(dst_path))
    if not is_real_destination(dst):
        return False  # one of the update's temporary copies: a seeded file never takes part in the diff
    if (dst / path).exists() or _head_has(dst, path):
        return True
    return not _seeded_before(dst, path)


def missing_seeded(project: Path) -> list[tuple[str, str]]:
    """``(path, how to get it back)`` for each seeded file the install's manifest lists that is gone (an update
    through this template's 94480b3 deleted the local instructions; no later update re-creates a seeded file the
    user may have deleted on purpose)."""
    from ..layout import read_manifest

    stamped = read_manifest(project)
    found = []
    for rel in stamped.seeded if stamped else ():
        if (project / rel).exists():
            continue
        gone = _git(project, "log", "-1", "--format=%H", "--diff-filter=D", "--", rel).stdout.decode().strip()
        if gone:
            found.append((rel, f"git restore --source={gone[:12]}^ -- {rel}  (its last committed text)"))
        elif _git(project, "cat-file", "-e", f"HEAD:./{rel}").returncode == 0:
            found.append((rel, f"git restore --source=HEAD --worktree -- {rel}"))
    return found


def head_scope(dst: Path) -> str:
    """The scope the install recorded in HEAD (before this update), "" when HEAD records none."""
    for name in (ANSWERS_FILE, LEGACY_ANSWERS_FILE):
        shown = _git(dst, "show", f"HEAD:./{name}")
        if shown.returncode == 0:
            scope = _answers(shown.stdout.decode("utf-8", "replace")).get("scope", "repo")
            return scope if isinstance(scope, str) else "repo"
    return ""


def _head_owned(dst: Path) -> tuple[str, ...]:
    """What the install in HEAD owned: its manifest's entries, and its scope's layout (a scope switch renders
    another layout; the old scope's files are the template's, not the user's)."""
    owned: list[str] = list(_head_manifest_list(dst, "owned") or [])
    scope = head_scope(dst)
    if scope:
        try:
            owned += for_scope(scope).owned
        except ValueError:
            pass
    return tuple(owned)


def keep_user_files(dst: Path) -> list[str]:
    """Give back, from HEAD, every tracked file the update deleted or changed that the template does not own (a
    seeded file, a file of the user's); returns them. Copier refuses a dirty project, so HEAD holds what the user
    had before the update. Owned means owned by the new version or by what HEAD's install stamped: a scope switch
    removes every file of the old scope."""
    layout = for_scope(scope_of(dst))
    before = _head_owned(dst)
    listed = _git(dst, "status", "--porcelain=v1", "-z", "--untracked-files=no").stdout.decode("utf-8", "replace")
    touched = [entry[3:] for entry in listed.split("\0")
               if len(entry) > 3 and "U" not in entry[:2] and ("D" in entry[:2] or "M" in entry[:2])]
    kept = []
    for rel in touched:
        if layout.is_owned(rel) or _owned_by(rel, before) or not _head_has(dst, rel):
            continue
        if _git(dst, "restore", "--source=HEAD", "--staged", "--worktree", "--", rel).returncode == 0:
            kept.append(rel)
    return kept


def _owned_by(path: str, items: tuple[str, ...]) -> bool:
    return any(path == item or (item.endswith("/") and path.startswith(item)) for item in items)


def recorded_commit(src_path: object, described: str | None, asked: str | None) -> str | None:
    """The ``_commit`` to record. Copier records ``git describe --tags`` of the template, which names any one tag of
    the commit: with two tags on it (a fork's ``v1!0.4.0`` on upstream's ``v0.4.0``) it may record the other one,
    and later updates, migrations and ``codeact drift`` then read that version. Keep the tag asked for, else (the
    newest release) the highest PEP 440 tag there, as Copier chose it."""
    if not described:
        return described
    shown = _git(Path(str(src_path)), "tag", "--points-at", "HEAD")
    tags = shown.stdout.decode("utf-8", "replace").split() if shown.returncode == 0 else []
    if described not in tags:
        return described  # not exactly on a tag (e.g. v0.1.0-3-gabc1234): nothing to choose
    if asked in tags:
        return asked
    from packaging.version import InvalidVersion, Version

    versions = []
    for tag in tags:
        try:
            versions.append((Version(tag), tag))
        except InvalidVersion:
            continue
    return max(versions)[1] if versions else described


def _answers(text: str) -> dict[str, object]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def update_report(dst_path: object) -> str:
    """The message after ``copier update``: the version and answers that changed, the files, and any conflicts."""
    dst = Path(str(dst_path))
    if not has_answers(dst) and has_answers(dst.parent):
        dst = dst.parent  # Copier ran inside .codeact/ and the after-update migration updated the root instead
    old = {}
    for name in (ANSWERS_FILE, LEGACY_ANSWERS_FILE):
        shown = _git(dst, "show", f"HEAD:./{name}")
        if shown.returncode == 0:
            old = _answers(shown.stdout.decode("utf-8", "replace"))
            break
    try:
        new = _answers((dst / answers_file(dst)).read_text(encoding="utf-8"))
    except OSError:
        new = {}
    lines = []
    before, after = old.get("_commit"), new.get("_commit")
    lines.append(f"codeact: template version {before} -> {after}" if before != after
                 else f"codeact: template version {after} (unchanged)")
    changed = [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in sorted(set(old) | set(new))
               if not str(k).startswith("_") and old.get(k) != new.get(k)]
    if changed:
        lines.append("Answers changed: " + "; ".join(changed))
    status = _git(dst, "status", "--porcelain", "--untracked-files=all").stdout.decode("utf-8", "replace")
    files = [line[3:] for line in status.splitlines() if len(line) > 3]
    deleted = sorted(line[3:] for line in status.splitlines() if len(line) > 3 and "D" in line[:2])
    unmerged = sorted({line[3:] for line in status.splitlines() if line[:2] in {"UU", "AA", "DU", "UD", "AU", "UA"}})
    rejected = sorted(f for f in files if f.endswith(".rej"))
    marked = sorted(f for f in files if f not in unmerged and not f.endswith(".rej") and _has_markers(dst / f))
    lines.append(f"Files changed: {len(files)} (review them with `git status` and `git diff`)." if files
                 else "Files changed: none.")
    if deleted:
        lines.append(f"Deleted by the update ({len(deleted)}: template files the new version no longer renders):")
        lines += [f"    {f}" for f in deleted]
    conflicts = unmerged + marked + rejected
    if conflicts:
        lines.append(f"CONFLICTS LEFT in {len(conflicts)} file(s) (Copier exits 0 anyway): merge each by hand.")
        lines += [f"    {f}" + ("  (rejected hunks: merge them into the file, then delete this .rej)"
                                if f.endswith(".rej") else "  (conflict markers <<<<<<< / >>>>>>>)")
                  for f in conflicts]
        lines.append("Find them again: `git diff --name-only --diff-filter=U`, `git status --porcelain | grep '\\.rej$'`,"
                     " or `.codeact/bin/codeact drift`.")
    else:
        lines.append("No conflicts left. Commit the result; `.codeact/bin/codeact drift` confirms it matches.")
    return "\n".join(lines)


def _has_markers(path: Path) -> bool:
    try:
        if not path.is_file() or path.stat().st_size > 4 << 20:
            return False
        return bool(_MARKER.search(path.read_bytes()))
    except OSError:
        return False
