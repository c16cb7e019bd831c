"""Fixtures for the preToolUse hook tests: stamped projects shared by the whole session (one per answer set)."""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_repo


@pytest.fixture(scope="session")
def stamped(template_src: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``stamped(**answers)``: a project stamped with the real copier, once per answer set for the whole session.
    Tests must not change these projects (except through the fixtures below)."""
    from copier import run_copy

    cache: dict[str, Path] = {}

    def _stamped(**answers: Any) -> Path:
        key = json.dumps(answers, sort_keys=True)
        if key not in cache:
            dest = make_repo(tmp_path_factory.mktemp("hook") / "project")
            run_copy(str(template_src), dest, data=answers, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True,
                     skip_tasks=True, overwrite=True)
            # Fixtures for the path checks of exclusive mode: a folder, a link leading out, a link staying in.
            (dest / "src").mkdir(exist_ok=True)
            (dest / "src" / "prog.py").write_text("print(1)\n")
            (dest / "outside").symlink_to("/")
            (dest / "inside").symlink_to("src")
            (dest / "gitlink").symlink_to(".git")
            cache[key] = dest
        return cache[key]

    return _stamped


@pytest.fixture(scope="session")
def pwsh() -> str:
    exe = shutil.which("pwsh")
    if not exe:
        pytest.skip("pwsh is not installed: Debian's repositories have no powershell package, and the PowerShell "
                    "dotnet tool needs a .NET SDK this machine kind lacks")
    return exe


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A fresh folder for the hook's state ($XDG_RUNTIME_DIR and $TMPDIR of the hook)."""
    path = tmp_path / "run"
    path.mkdir()
    return path
