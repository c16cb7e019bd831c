"""Fixtures for the scope tests: the real-CLI fixtures of tests/copilot, JSON Schemas, git and copier helpers."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema

from tests.conftest import GIT_ENV

# The offline Copilot CLI fixtures (see tests/copilot/README.md), shared with this folder.
from tests.copilot.conftest import copilot_bin, copilot_cache, copilot_cli, mock_model, run_copilot  # noqa: F401

SCHEMAS = Path(__file__).resolve().parent / "schemas"
SCRUB = ("COPILOT_", "CODEACT_", "XDG_")


def schema_errors(instance: Any, name: str) -> list[str]:
    """Every violation of ``schemas/<name>.schema.json`` (draft 2020-12), as readable lines."""
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in sorted(validator.iter_errors(instance), key=str)]


def clean_env(**extra: str) -> dict[str, str]:
    """The test process's environment without COPILOT_*/CODEACT_*/XDG_* and with git's identity, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUB)}
    env.update(GIT_ENV)
    env.update(extra)
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def status(project: Path) -> list[str]:
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project, capture_output=True,
                         text=True, check=True).stdout
    return sorted(out.splitlines())


def requirements_hash(requirements: Path) -> str:
    """The shared test venv's folder for these requirements: the one whose stamp matches (the launcher reads stamps,
    so an older launcher's name still counts), else the bootstrap module's SHA-256 key."""
    from codeact.bootstrap import STAMP, requirements_key
    from tests.conftest import VENV_CACHE

    wanted = requirements.read_bytes()
    for stamp in sorted(VENV_CACHE.glob(f"*/{STAMP}")):
        if stamp.read_bytes() == wanted:
            return stamp.parent.name
    return requirements_key(requirements)
