"""Fixtures of the hyperlight tests: a workspace, the fake-sandbox backend, and a private probe cache."""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeact.backends import boot_hyperlight, probe
from codeact.backends.hyperlight import HyperlightBackend
from codeact.core.config import Settings
from codeact.core.limits import Limits
from codeact.runner import RunResult, run

HERE = Path(__file__).resolve().parent

try:  # the runtime suite's fixture workspace, when it is there
    from tests.runtime.conftest import build_workspace
except ImportError:  # pragma: no cover - a trimmed checkout: a small workspace of our own
    def build_workspace(root: Path) -> Path:
        files = {
            "README.md": "# Demo\n\n- TODO: write the real docs\n",
            "src/app.py": "import os\nimport sys\n\n\ndef main():\n    # TODO: parse arguments\n    return os.getcwd()\n",
            "src/utils.py": "def slugify(text):\n    # TODO handle unicode\n    return text.lower()\n",
            "tests/test_app.py": "import os\n\n\ndef test_cwd():\n    assert os.getcwd()\n",
            "config/app.json": '{"name": "demo", "ports": [8000, 8001]}\n',
            "config/broken.json": '{\n  "ports": [1, 2,],\n}\n',
        }
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        return root


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own probe cache (XDG_CACHE_HOME), so none reads or writes the user's."""
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache / "codeact"


def fake_backend() -> HyperlightBackend:
    """The real backend (child process, pipe, proxies, guest driver), with a plain-Python stand-in for the VM."""
    return HyperlightBackend(factory="fake_sandbox:FakeSandbox", path=[str(HERE)])


def clean_environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    config = tmp_path / "userconfig"
    config.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "CODEACT_CONFIG_DIR": str(config), "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
           "CODEACT_DISABLE": "bash,sql"}
    env.update(extra)
    return env


@pytest.fixture
def run_on(tmp_path: Path) -> Callable[..., RunResult]:
    """``run_on(backend, code, **kw)``: the runner over a fresh workspace per backend (programs may write);
    ``backend`` is "monty", "fake" or "real"."""
    def _run(backend: str, code: str, *, timeout: float = 10.0, **kw: Any) -> RunResult:
        if "workspace" not in kw:
            kw["workspace"] = build_workspace((tmp_path / f"ws-{backend}").resolve())
        kw.setdefault("settings", Settings(tools=("view", "create", "edit", "glob", "grep")))
        kw.setdefault("limits", Limits(timeout=timeout))
        if backend == "fake":
            kw["backend_impl"] = fake_backend()
        else:
            kw["backend"] = "hyperlight" if backend == "real" else backend
        return run(code, environ=clean_environ(tmp_path), **kw)
    return _run


@functools.lru_cache(maxsize=1)
def real_hyperlight_reason() -> str | None:
    """Why real hyperlight cannot run here, or ``None`` where it can: the verdict, with the real probe's error
    when a cheap check already ruled it out (probed once per test session)."""
    verdict = probe.verdict(boot=boot_hyperlight)
    if verdict.ok:
        return None
    if verdict.source == "precheck" and probe.package_verdict() is None:
        seen = probe.probe_verdict(boot=boot_hyperlight)
        return f"{verdict.reason}; {seen.reason}" if not seen.ok else verdict.reason
    return verdict.reason
