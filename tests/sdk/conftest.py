"""Fixtures for the SDK harness tests: node, the real ``@github/copilot-sdk``, stamped installs of every scope, and
one SDK session driven by ``drive.mjs`` against the scripted mock model.

``node``: skips when Node.js is missing. ``copilot_sdk``: the SDK package folder, from env ``CODEACT_COPILOT_SDK``,
else ``<repo>/.ci-cache/npm-sdk/node_modules/@github/copilot-sdk`` (``.ci/run`` installs it there); skips naming
both. ``installs``: one stamped install per scope (enforcement exclusive), the launcher's venv prepared.
``run_sdk(...)``: one SDK session; returns an ``SdkRun`` with the model's requests and the adapter's decisions.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GIT_ENV, REPO_ROOT, git, make_repo

# The offline fixtures of tests/copilot (see its README.md), shared with this folder.
from tests.copilot.conftest import (  # noqa: F401
    bootstrap_launcher,
    copilot_cache,
    find_copilot,
    isolated_env,
    mock_model,
)
from tests.copilot.mock_model import ChatRequest, MockModel, Step

SDK_VERSION = "1.0.14"
LOCAL_SDK = REPO_ROOT / ".ci-cache" / "npm-sdk" / "node_modules" / "@github" / "copilot-sdk"
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "drive.mjs"
CALL_ADAPTER = HERE / "call_adapter.mjs"
ADAPTER = "sdk/codeact-hooks.mjs"  # inside an install's codeact_dir
CODEACT_DIR = {"repo": ".codeact", "global": ".codeact", "plugin": "plugins/codeact"}
FILES = {"README.md": "# demo\nA small project.\n", "src/app.py": "# TODO: handle errors\nx = 1\n",
         "src/util.py": "def helper():\n    return 42\n"}
SESSION_TIMEOUT = 180


def find_sdk() -> tuple[Path | None, str]:
    """The @github/copilot-sdk package folder to test with, or why there is none."""
    explicit = os.environ.get("CODEACT_COPILOT_SDK")
    if explicit:
        path = Path(explicit)
        if (path / "package.json").is_file():
            return path, f"CODEACT_COPILOT_SDK={explicit}"
        return None, f"CODEACT_COPILOT_SDK={explicit} holds no package.json"
    if (LOCAL_SDK / "package.json").is_file():
        return LOCAL_SDK, str(LOCAL_SDK)
    return None, (f"@github/copilot-sdk was not found: set CODEACT_COPILOT_SDK to its package folder, or run "
                  f"`npm install --prefix .ci-cache/npm-sdk @github/copilot-sdk@{SDK_VERSION}` (as .ci/run does)")


@pytest.fixture(scope="session")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.skip("Node.js (`node`) is not on PATH: the SDK and the adapter are JavaScript")
    return path


@pytest.fixture(scope="session")
def copilot_sdk(node: str) -> Path:  # noqa: ARG001 - for its skip
    path, how = find_sdk()
    if path is None:
        pytest.skip(how)
    version = json.loads((path / "package.json").read_text())["version"]
    assert version == SDK_VERSION, f"{how}: @github/copilot-sdk {version}, the tests are pinned to {SDK_VERSION}"
    return path


@dataclass(frozen=True)
class Install:
    """A stamped install: ``project`` is the folder copier wrote, ``install`` its codeact_dir, ``work`` the
    repository a session works in (the project itself in repo scope), ``home`` the $COPILOT_HOME (global scope)."""

    scope: str
    project: Path
    install: Path
    work: Path
    home: Path | None = None

    @property
    def adapter(self) -> Path:
        """The adapter a harness imports: in global scope through the $COPILOT_HOME link, as a user would."""
        base = self.home / "codeact" if self.home else self.install
        return base / ADAPTER


@pytest.fixture(scope="session")
def installs(stamped_installs: dict[str, Install], venv_dir: Path) -> dict[str, Install]:
    """``stamped_installs`` with the launcher's venv prepared (one venv, keyed by requirements, serves every scope)."""
    bootstrap_launcher(stamped_installs["repo"].project, venv_dir)
    return stamped_installs


@pytest.fixture(scope="session")
def stamped_installs(template_src: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Install]:
    """One stamped install per scope (enforcement exclusive, default tools), committed."""
    from copier import run_copy

    from codeact.lifecycle import links

    base = tmp_path_factory.mktemp("sdk-installs")
    out: dict[str, Install] = {}
    for scope in CODEACT_DIR:
        project = make_repo(base / scope / ("project" if scope == "repo" else "install"),
                            FILES if scope == "repo" else {"README.md": "# codeact install\n"})
        data: dict[str, Any] = {"scope": scope, "enforcement": "exclusive"}
        if scope == "plugin":
            data.update(marketplace_name="acme-tools", plugin_owner="Acme")
        run_copy(str(template_src), project, data=data, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True,
                 skip_tasks=True, overwrite=True)
        git(project, "add", "-A")
        git(project, "commit", "-qm", "codeact")
        work = project if scope == "repo" else make_repo(base / scope / "work", FILES)
        home = None
        if scope == "global":
            home = base / scope / "copilot-home"
            changed, warnings = links.link(project, home)
            assert changed and not warnings, (changed, warnings)
        out[scope] = Install(scope, project, project / CODEACT_DIR[scope], work, home)
    return out


@dataclass
class SdkRun:
    """What one SDK session did: the driver's report and every request the model received."""

    report: dict[str, Any]
    requests: list[ChatRequest]
    errors: list[str] = field(default_factory=list)
    stderr: str = ""
    seconds: float = 0.0

    @property
    def decisions(self) -> list[tuple[str, str | None, str | None]]:
        """(tool, permissionDecision, reason) for every call the adapter was asked about."""
        return [(d["toolName"], (d["decision"] or {}).get("permissionDecision"),
                 (d["decision"] or {}).get("permissionDecisionReason")) for d in self.report["hookDecisions"]]

    def describe(self) -> str:
        return (f"SDK session: {self.seconds:.1f}s, {len(self.requests)} model requests, mock errors {self.errors}\n"
                f"error: {self.report.get('error')}\ndecisions: {self.decisions}\n"
                f"tools: {json.dumps(self.report.get('tools'))[:3000]}\nstderr: {self.stderr[-3000:]}")


@pytest.fixture
def run_sdk(copilot_sdk: Path, copilot_cache: Path, mock_model: MockModel, venv_dir: Path,
            tmp_path: Path) -> Callable[..., SdkRun]:
    """``run_sdk(cwd, script, adapter=None, adapter_options=None, session=None, env=None, runtime="cli",
    runtime_env=True)``: ``runtime_env=False`` leaves the client's environment as it is (no codeactRuntimeEnv).

    ``runtime``: "cli" drives the pinned Copilot CLI (CODEACT_COPILOT_BIN, as the CLI tests), "bundled" the
    runtime the SDK ships. ``session``: extra session options (JSON). No TTY: stdin is closed, output piped."""
    sessions = iter(range(1, 1000))

    def _run(cwd: Path, script: Iterable[Step], adapter: Path | None = None,
             adapter_options: Mapping[str, Any] | None = None, session: Mapping[str, Any] | None = None,
             env: Mapping[str, str] | None = None, runtime: str = "cli", runtime_env: bool = True,
             check: bool = True) -> SdkRun:
        mock_model.load(script)
        n = next(sessions)
        home = tmp_path / f"sdk-home-{n}"
        full_env = isolated_env(home, copilot_cache, {**mock_model.env(), "CODEACT_VENV": str(venv_dir),
                                                      **GIT_ENV, **(env or {})})
        cli = None
        if runtime == "cli":
            cli, how = find_copilot()
            if cli is None:
                pytest.skip(how)
        config = {"sdk": str(copilot_sdk), "cli": cli, "cwd": str(cwd), "prompt": "Do the task.",
                  "model": mock_model.model, "timeoutMs": SESSION_TIMEOUT * 1000,
                  "adapter": str(adapter) if adapter else None, "adapterOptions": dict(adapter_options or {}),
                  "runtimeEnv": runtime_env,
                  "session": {"provider": {"type": "openai", "baseUrl": mock_model.base_url}, **(session or {})}}
        config_file = tmp_path / f"sdk-config-{n}.json"
        config_file.write_text(json.dumps(config))
        start = time.monotonic()
        proc = subprocess.run(["node", str(DRIVER), str(config_file)], cwd=cwd, env=full_env, capture_output=True,
                              text=True, timeout=SESSION_TIMEOUT + 60, stdin=subprocess.DEVNULL)
        try:
            report = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            pytest.fail(f"drive.mjs exited {proc.returncode} without a report:\n{proc.stdout[-3000:]}\n"
                        f"{proc.stderr[-3000:]}")
        run = SdkRun(report, list(mock_model.requests), list(mock_model.errors), proc.stderr,
                     time.monotonic() - start)
        if check and (report.get("error") or run.errors):
            pytest.fail(run.describe())
        return run

    return _run


@pytest.fixture(scope="session")
def call_adapter(node: str) -> Callable[..., dict[str, Any]]:
    """``call_adapter(adapter, options, inputs, env=None)``: the adapter's decisions for ``inputs``, in node."""

    def _call(adapter: Path, options: Mapping[str, Any], inputs: list[Mapping[str, Any]],
              env: Mapping[str, str] | None = None, cwd: Path | None = None) -> dict[str, Any]:
        request = json.dumps({"adapter": str(adapter), "options": dict(options), "inputs": inputs})
        proc = subprocess.run([node, str(CALL_ADAPTER)], input=request, capture_output=True, text=True, timeout=60,
                              env={**os.environ, **(env or {})}, cwd=cwd)
        assert proc.returncode == 0, f"call_adapter.mjs exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        return json.loads(proc.stdout)

    return _call
