"""Shared fixtures of the runtime tests: the fixture workspace, the backends and a helper that runs a program."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from codeact import backends
from codeact.core.boundary import Workspace
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.errors import BackendUnavailable
from codeact.runner import RunResult, run
from tests.runtime.launchers import Launcher, launchers

# Add "hyperlight" here when its backend lands; it is skipped where it cannot run.
BACKENDS = ["monty", "hyperlight"]

# The fixture workspace of issue 3. The expected answers in test_conformance.py are written by hand from these.
FILES: dict[str, str] = {
    "README.md": (
        "# Demo\n"
        "\n"
        "A small project the conformance tests search.\n"
        "\n"
        "- TODO: write the real docs\n"
    ),
    "src/app.py": (
        "import os\n"
        "import sys\n"
        "\n"
        "\n"
        "def main():\n"
        "    # TODO: parse arguments\n"
        "    return os.getcwd()\n"
        "\n"
        "\n"
        "def helper(x):\n"
        '    """Double x."""\n'
        "    return x * 2\n"
    ),
    "src/utils.py": (
        '"""Small helpers; note: we do not import os here."""\n'
        "\n"
        "\n"
        "def slugify(text):\n"
        "    # TODO handle unicode\n"
        '    return text.lower().replace(" ", "-")\n'
        "\n"
        "\n"
        "def chunks(items, size):\n"
        '    """Split items into lists of size."""\n'
        "    return [items[i:i + size] for i in range(0, len(items), size)]\n"
    ),
    "src/pkg/__init__.py": "from .core import run\n",
    "src/pkg/core.py": (
        "import json\n"
        "import os.path\n"
        "from os import environ\n"
        "\n"
        "\n"
        "def run(config):\n"
        "    # TODO: validate config\n"
        "    data = json.loads(config)\n"
        "    return data, os.path.exists(data['path']), environ.get('HOME')  # todo: lower case does not count\n"
    ),
    "tests/test_app.py": (
        "import os\n"
        "\n"
        "from src.app import helper\n"
        "\n"
        "\n"
        "def test_helper():\n"
        "    assert helper(2) == 4\n"
        "\n"
        "\n"
        "def test_cwd():\n"
        "    assert os.getcwd()\n"
        "\n"
        "\n"
        "def test_more():\n"
        "    pass\n"
    ),
    "config/app.json": '{"name": "demo", "debug": false, "ports": [8000, 8001]}\n',
    "config/db.json": '{\n  "host": "localhost",\n  "port": 5432\n}\n',
    "config/broken.json": '{\n  "name": "demo",\n  "ports": [1, 2,],\n}\n',
    # decoys that no answer may include: ignored, binary, inside .git
    ".gitignore": "build/\n*.log\n",
    "build/generated.py": "import os\n# TODO: generated, ignored\n",
    "debug.log": "TODO: a log line, ignored\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/config": "[core]\n\t# TODO inside .git\n",
}
BINARY = {"assets/logo.bin": b"\x89PNG\r\n\x1a\n\x00\x00TODO import os\n"}


def build_workspace(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for rel, data in BINARY.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.fixture
def fixture_workspace(tmp_path: Path) -> Path:
    """A fresh copy of the fixture workspace (src/, config/, tests/, README.md, decoys), resolved."""
    return build_workspace((tmp_path / "ws").resolve())


@pytest.fixture
def user_config(tmp_path: Path) -> Path:
    """An empty user config folder (CODEACT_CONFIG_DIR) so the tests never read the real one."""
    path = tmp_path / "userconfig"
    path.mkdir()
    return path


def base_environ(config_dir: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(config_dir.parent),
           "LANG": "C.UTF-8", "CODEACT_CONFIG_DIR": str(config_dir)}
    env.update(extra)
    return env


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    name = request.param
    try:
        backends.load(name)
    except (BackendUnavailable, ImportError) as exc:
        pytest.skip(f"backend {name} cannot run here: {exc}")
    if name == "hyperlight":
        from codeact.backends.hyperlight import unavailable_reason
        reason = unavailable_reason()
        if reason:
            pytest.skip(reason)
    return name


@pytest.fixture
def run_program(fixture_workspace: Path, user_config: Path, backend_name: str) -> Callable[..., RunResult]:
    """``run_program(code, **kw)``: codeact.runner.run over the fixture workspace with a clean environment.

    ``env={...}`` adds environment variables; any other keyword goes to ``run`` (``limits``, ``tools``, ...).
    """
    def _run(code: str, *, env: dict[str, str] | None = None, **kw: Any) -> RunResult:
        kw.setdefault("workspace", fixture_workspace)
        kw.setdefault("backend", backend_name)
        kw.setdefault("settings", Settings())
        return run(code, environ=base_environ(user_config, **(env or {})), **kw)
    return _run


def _make_ctx(root: Path, **kw: Any) -> ToolContext:
    allow_secrets = kw.pop("allow_secrets", False)
    kw.setdefault("limits", Limits())
    return ToolContext(workspace=Workspace.at(root, allow_secrets=allow_secrets), **kw)


@pytest.fixture
def make_ctx() -> Callable[..., ToolContext]:
    """``make_ctx(root, limits=..., allow_hosts=..., environ=..., allow_secrets=...)``: a ToolContext for calling a
    tool function directly."""
    return _make_ctx


@pytest.fixture
def ctx(fixture_workspace: Path) -> ToolContext:
    """A ToolContext over the fixture workspace with default limits."""
    return _make_ctx(fixture_workspace)


@pytest.fixture
def make_launcher(stamp: Callable[..., Path], venv_dir: Path, tmp_path: Path) -> Iterator[Callable[..., Launcher]]:
    """``make_launcher(tools, limit=None)``: a stamped repository with ``tools`` and its launcher
    (tests/runtime/launchers.py), its warm server stopped when the test ends."""
    yield from launchers(stamp, venv_dir, tmp_path)
