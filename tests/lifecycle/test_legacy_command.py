"""The update a legacy stamp runs again from its root imports Copier, never a module of the repository."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from codeact.lifecycle import legacy


def test_the_update_from_the_root_runs_copier_not_a_copier_py_of_the_repository(tmp_path: Path) -> None:
    """``python -m copier`` from the repository root put the root first on sys.path: a committed ``copier.py`` (or
    ``copier/``) ran instead of Copier, on the host, in the update workflow (red team round 9, issue 40)."""
    for name in ("copier.py", "runpy.py"):  # runpy is not frozen before Python 3.11
        (tmp_path / name).write_text("raise SystemExit('the repository ran')\n")
    done = subprocess.run([sys.executable, "-c", legacy._COPIER_MAIN, "--version"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "the repository ran" not in done.stderr, done.stderr
    assert done.stdout.split()[-1][:1].isdigit(), done.stdout  # Copier's version
