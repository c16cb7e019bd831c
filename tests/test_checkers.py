"""The lint and type-check commands CONTRIBUTING.md gives contributors are the ones CI runs (.ci/run), and each takes its
settings from pyproject.toml, where the anchors' rules are selected."""
from __future__ import annotations

import re
from pathlib import Path

import tomllib

from codeact.bootstrap import MIN_PYTHON

REPO = Path(__file__).resolve().parents[1]


def _readme_checks() -> list[str]:
    readme = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(ruff check .*?)```", readme, re.S)
    assert block, "CONTRIBUTING.md gives the checks in a ```sh block that starts with `ruff check`"
    return block[1].strip().splitlines()


def test_the_readme_checks_are_the_ones_ci_runs() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    checks = _readme_checks()
    assert len(checks) == 4 and all(line in ci for line in checks), checks
    assert all("ruff" in line or "--config-file" in line for line in checks), "mypy without the config checks less"


def test_the_checkers_target_the_runtimes_floor() -> None:
    """ruff's pyupgrade and mypy judge the runtime at the oldest Python its venv may have (bootstrap.MIN_PYTHON)."""
    major, minor = MIN_PYTHON
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["ruff"]["target-version"] == f"py{major}{minor}"
    assert config["tool"]["mypy"]["python_version"] == f"{major}.{minor}"
    assert config["tool"]["mypy"]["strict"] is True
    assert {"E", "F", "W", "I", "UP", "C90", "ARG"} <= set(config["tool"]["ruff"]["lint"]["select"])
