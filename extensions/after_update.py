"""Copier's after-update migration: runs in the real project after EVERY update, with the runtime of the template
version just applied (``runtime/`` beside this folder).

Usage (from the folder Copier updated): python after_update.py ANSWERS_FILE VERSION_TO SCOPE LAUNCHER [SKIP_TASKS]

1. An update run INSIDE ``.codeact/`` of a stamp that still records its answers there (Renovate's copier manager runs
   Copier in the answers file's folder: ``cd .codeact && copier update --answers-file .copier-answers.yml ...``)
   renders the template into ``.codeact/`` itself, where none of it belongs, and changes only ``_commit``. Undo that and
   run the same update from the install's root instead (see ``codeact.lifecycle.legacy``).
2. Give back every file of the user's that the update deleted or changed (``codeact.lifecycle.update``); a file
   the old scope owned is not the user's, and a switch away from global scope removes its $COPILOT_HOME links.
3. Move a legacy ``.codeact/.copier-answers.yml`` to the root (``.copier-answers.codeact.yml``).
4. Clear the mark of a running update (``codeact.lifecycle.interrupted``; once every file is written).
5. Refresh what depends on outside state (repo: the MCP tool lock; global: the links in $COPILOT_HOME). Never fails
   the update: a failure says what to run later. Not with ``copier update --skip-tasks`` (SKIP_TASKS ``True``): the
   refresh starts the MCP servers, which a user who skips tasks has not asked for; it says what to run instead.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from codeact.lifecycle.interrupted import end  # noqa: E402
from codeact.lifecycle.legacy import in_folder_root, move_legacy_answers, update_from_root  # noqa: E402
from codeact.lifecycle.update import head_scope, keep_user_files  # noqa: E402 - after the path above


def main(argv: list[str]) -> int:
    if len(argv) not in (4, 5):
        print("usage: after_update.py ANSWERS_FILE VERSION_TO SCOPE LAUNCHER [SKIP_TASKS]", file=sys.stderr)
        return 2
    answers, version_to, scope, launcher = argv[:4]
    skip_tasks = argv[4:] == ["True"]
    here = Path.cwd()
    root = in_folder_root(here, answers)
    if root is not None:
        end(here.parent, scope)
        return int(update_from_root(here, root, version_to))
    for rel in keep_user_files(here):
        print(f"codeact: kept {rel}: the update had deleted or changed it, and it is yours (the template does "
              "not own it)", file=sys.stderr)
    if head_scope(here) == "global" and scope != "global":
        from codeact.lifecycle.links import copilot_home, unlink

        removed, warnings = unlink(here, copilot_home())
        for line in [*(f"removed link {p} (the install left global scope)" for p in removed), *warnings]:
            print(f"codeact: {line}", file=sys.stderr)
    moved = move_legacy_answers(here)
    if moved:
        print(f"codeact: {moved}", file=sys.stderr)
    end(here, scope)  # before the launcher, which refuses to run while the mark is there
    action = {"repo": "refresh", "global": "link"}.get(scope)
    if action and skip_tasks:
        what = "the MCP tool lock was not refreshed" if action == "refresh" else "$COPILOT_HOME was not linked"
        print(f"codeact: --skip-tasks: {what}; run {launcher} {action}", file=sys.stderr)
    elif action:
        done = subprocess.run([str(here / launcher), action], cwd=here, check=False)
        if done.returncode != 0:
            what = "MCP refresh" if action == "refresh" else "linking"
            print(f"codeact: {what} failed; run {launcher} {action} later", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
