"""Stamps made before the answers file moved from ``.codeact/.copier-answers.yml`` to the root
(``.copier-answers.codeact.yml``): their next update moves it, whichever path and folder that update names.

- From the root with ``-a .codeact/.copier-answers.yml`` (the old documented command, the old update workflow):
  Copier renders the new version and writes the answers where ``-a`` says; :func:`move_legacy_answers` then moves
  them to the root.
- From ``.codeact/`` (Renovate's copier manager, since 38.33.1, runs Copier in the answers file's folder): Copier
  renders the whole template INTO ``.codeact/``, keeps nothing of it but new files (``.codeact/.codeact/...``) and
  changes only ``_commit``. :func:`update_from_root` undoes that and runs the same update from the root.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..layout import ANSWERS_FILE, LEGACY_ANSWERS_FILE, UPDATE_COMMAND

_LEGACY_NAME = Path(LEGACY_ANSWERS_FILE).name
_CODEACT_DIR = Path(LEGACY_ANSWERS_FILE).parent.name


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def in_folder_root(here: Path, answers: str) -> Path | None:
    """The install root when Copier updated ``here`` = ``<root>/.codeact`` with its legacy answers file, else None."""
    if here.name != _CODEACT_DIR or (here / answers).resolve() != (here / _LEGACY_NAME).resolve():
        return None
    root = here.parent
    if not (root / LEGACY_ANSWERS_FILE).is_file() or (root / ANSWERS_FILE).exists():
        return None
    if not ((here / "manifest.json").is_file() or (here / "bin" / "codeact").is_file()):
        return None
    return root


def _undo_in_folder_render(here: Path) -> None:
    """Put ``here`` back as HEAD has it: Copier refuses to update a folder with changes, so every change in it is
    the in-folder update's (files rendered into the wrong place, the answers' new ``_commit``)."""
    listed = _git(here, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".").stdout
    top = Path(_git(here, "rev-parse", "--show-toplevel").stdout.decode().strip() or here)
    made: list[Path] = []
    for entry in listed.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) < 4:
            continue
        code, rel = entry[:2], entry[3:]
        if code == "??":
            made.append(top / rel)
        else:
            _git(top, "restore", "--source=HEAD", "--staged", "--worktree", "--", rel)
    for path in made:
        path.unlink(missing_ok=True)
        for parent in path.parents:
            if parent == here or not parent.is_relative_to(here):
                break
            try:
                parent.rmdir()
            except OSError:
                break
    nested = here / _CODEACT_DIR  # the install rendered into itself: what its own .gitignore hid is left there
    if nested.is_dir() and not nested.is_symlink() and not _git(here, "ls-tree", "HEAD", "--", _CODEACT_DIR).stdout:
        shutil.rmtree(nested)


_COPIER_MAIN = "import sys\ndel sys.path[0]\nimport runpy\nrunpy.run_module('copier', run_name='__main__', alter_sys=True)\n"


def update_from_root(here: Path, root: Path, version_to: str) -> int:
    """Undo an update Copier ran inside ``here`` (``root/.codeact``) and run it from ``root``, where it renders
    every file and moves the answers to the root. Returns that update's exit status."""
    _undo_in_folder_render(here)
    print(f"codeact: this update ran inside {_CODEACT_DIR}/, where Copier cannot reach the stamp's other files; "
          f"running it from {root} instead (the answers file moves to {ANSWERS_FILE})", file=sys.stderr, flush=True)
    # not `-m copier`: it puts the repository first on sys.path, and a copier.py there would run instead
    command = [sys.executable, "-c", _COPIER_MAIN, "update", "-a", LEGACY_ANSWERS_FILE, "--trust", "--defaults",
               "--skip-answered"]
    if version_to:
        command += ["--vcs-ref", version_to]
    env = {k: v for k, v in os.environ.items() if k not in ("STAGE", "VERSION_FROM", "VERSION_TO",
                                                             "VERSION_CURRENT", "VERSION_PEP440_FROM",
                                                             "VERSION_PEP440_TO", "VERSION_PEP440_CURRENT")}
    return subprocess.run(command, cwd=root, env=env, check=False).returncode


# What the legacy file holds once moved. Renovate keeps an update only when the answers file it named is MODIFIED
# (artifacts.ts: `status.modified.includes(packageFileName)`; a deleted one makes it drop Copier's whole result),
# so the move leaves this in its place; it is no answers file (no `_src_path`: Renovate's extract skips it), and
# the next update removes it.
MOVED_STUB = (f"# The answers of this CodeAct install moved to {ANSWERS_FILE} at its root; nothing reads this file.\n"
              f"# The next update removes it. Update with: {UPDATE_COMMAND}\n")


def move_legacy_answers(dst: Path) -> str:
    """Move ``dst``'s legacy answers file to :data:`ANSWERS_FILE` (leaving :data:`MOVED_STUB`), or remove the stub
    a previous move left; what was done, or "" when nothing was."""
    legacy = dst / LEGACY_ANSWERS_FILE
    if not legacy.is_file():
        return ""
    new = dst / ANSWERS_FILE
    if new.exists():
        legacy.unlink()  # the stub of an earlier move, or an old record nothing reads any more
        return f"removed {LEGACY_ANSWERS_FILE}: the answers are in {ANSWERS_FILE}"
    os.replace(legacy, new)
    legacy.write_text(MOVED_STUB, encoding="utf-8")
    return (f"moved the answers from {LEGACY_ANSWERS_FILE} to {ANSWERS_FILE} (commit both; the next update removes "
            f"the old file); from now on update with `{UPDATE_COMMAND}`")
