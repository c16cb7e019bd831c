"""Copier's after-update migration: give back every file of the user's that the update deleted or changed.

Usage (from the updated project): python keep_user_files.py
Runs the runtime of the template version just applied (``runtime/`` beside this folder): see
``codeact.lifecycle.update.keep_user_files``.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from codeact.lifecycle.update import keep_user_files  # noqa: E402 - after the path above


def main() -> int:
    for rel in keep_user_files(Path.cwd()):
        print(f"codeact: kept {rel}: the update had deleted or changed it, and it is yours (the template does "
              "not own it)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
