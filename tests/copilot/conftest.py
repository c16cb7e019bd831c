"""Fixtures that drive the REAL Copilot CLI offline, against the scripted mock model on 127.0.0.1.

``copilot_bin``: the CLI, from env ``CODEACT_COPILOT_BIN``, else ``<repo>/.ci-cache/npm/node_modules/.bin/copilot``
(``.ci/run`` installs it there), else ``copilot`` on PATH; the tests that need it skip, naming all three, when none
exists. ``mock_model``: a started ``MockModel``. ``run_copilot(repo, prompt, script, ...)``: one ``copilot -p``
session in ``repo``, its HOME and state in a temp folder, the model answering from ``script``.
``copilot_cli(repo, *args)``: a CLI subcommand (``instruction list --json``...) with the same isolated environment.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, make_repo
from tests.copilot.mock_model import ChatRequest, MockModel, Step

COPILOT_VERSION = "1.0.102"
LOCAL_COPILOT = REPO_ROOT / ".ci-cache" / "npm" / "node_modules" / ".bin" / "copilot"
# The CLI's first start unpacks itself into the cache (~2 s); a session with a few tool calls takes ~3-5 s.
SESSION_TIMEOUT = 180
# Until the runtime's shell and sql tools land, stamp only the tools that exist (the template offers all of them).
SAFE_TOOLS = ["view", "create", "edit", "glob", "grep"]
# Inherited variables that would change what the CLI or the hook does; the fixtures set their own.
_SCRUB_PREFIXES = ("COPILOT_", "CODEACT_", "XDG_")
_SCRUB = {"GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "CI", "NODE_OPTIONS", "BASH_ENV", "ENV"}


def find_copilot() -> tuple[str | None, str]:
    """The Copilot CLI to test with, and how it was found (or why none was)."""
    explicit = os.environ.get("CODEACT_COPILOT_BIN")
    if explicit:
        path = shutil.which(explicit)
        if path:
            return path, f"CODEACT_COPILOT_BIN={explicit}"
        return None, f"CODEACT_COPILOT_BIN={explicit} is not an executable"
    if LOCAL_COPILOT.exists() and os.access(LOCAL_COPILOT, os.X_OK):
        return str(LOCAL_COPILOT), str(LOCAL_COPILOT)
    on_path = shutil.which("copilot")
    if on_path:
        return on_path, "copilot on PATH"
    return None, (f"the Copilot CLI was not found: set CODEACT_COPILOT_BIN, or run "
                  f"`npm install --prefix .ci-cache/npm @github/copilot@{COPILOT_VERSION}` (as .ci/run does), "
                  f"or put `copilot` on PATH")


def default_tools() -> dict[str, Any]:
    """Answers for ``stamp``: the default tools once the runtime has them all, else the ones that exist."""
    tools = REPO_ROOT / "runtime" / "codeact" / "tools"
    if (tools / "shell.py").exists() and (tools / "sql.py").exists():
        return {}
    return {"tools": SAFE_TOOLS}


@dataclass
class CopilotRun:
    """What one ``copilot -p`` session did, and every request the model received."""

    returncode: int
    stdout: str
    stderr: str
    requests: list[ChatRequest]
    errors: list[str] = field(default_factory=list)  # the mock's: script exhausted, a step raised...
    seconds: float = 0.0

    def describe(self) -> str:
        return (f"copilot exited {self.returncode} after {self.seconds:.1f}s, {len(self.requests)} model requests\n"
                f"mock errors: {self.errors}\n--- stdout ---\n{self.stdout[-4000:]}\n"
                f"--- stderr ---\n{self.stderr[-4000:]}")


def isolated_env(home: Path, cache: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment minus anything that points at a real account, with HOME and state under ``home``.

    ``cache`` is COPILOT_CACHE_HOME, where the CLI unpacks its ~235 MB package on first start: share it between
    sessions (never between concurrent first starts) so each session does not unpack it again."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES) and k not in _SCRUB}
    runtime_dir = home / "run"
    for d in (home, cache, home / "config", home / "state"):
        d.mkdir(parents=True, exist_ok=True)
    runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    no_proxy = ",".join(filter(None, [os.environ.get("NO_PROXY", ""), "127.0.0.1", "localhost"]))
    env.update({
        "HOME": str(home), "COPILOT_HOME": str(home / ".copilot"), "COPILOT_CACHE_HOME": str(cache),
        "XDG_CACHE_HOME": str(home / "xdg-cache"), "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"), "XDG_RUNTIME_DIR": str(runtime_dir),
        "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false", "NO_COLOR": "1",
        "NO_PROXY": no_proxy, "no_proxy": no_proxy,
    })
    env.update(extra or {})
    return env


@pytest.fixture(scope="session")
def copilot_bin() -> str:
    path, how = find_copilot()
    if path is None:
        pytest.skip(how)
    return path


@pytest.fixture(scope="session")
def copilot_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """COPILOT_CACHE_HOME for every session of this test process (one per xdist worker)."""
    return tmp_path_factory.mktemp("copilot-cache")


@pytest.fixture
def mock_model() -> Iterable[MockModel]:
    with MockModel() as model:
        yield model


@pytest.fixture
def copilot_cli(copilot_bin: str, copilot_cache: Path,
                tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``copilot_cli(repo, *args)``: run a CLI subcommand in ``repo`` with an isolated HOME, offline."""

    def _cli(repo: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        env = isolated_env(tmp_path / "copilot-cli-home", copilot_cache)
        return subprocess.run([copilot_bin, *args], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    return _cli


@pytest.fixture
def run_copilot(copilot_bin: str, copilot_cache: Path, mock_model: MockModel, venv_dir: Path,
                tmp_path: Path) -> Callable[..., CopilotRun]:
    """``run_copilot(repo, prompt, script, agent=None, extra_env=None, plugin_dir=None, allow_tools=None)``: one
    offline session (``cwd=`` a folder of ``repo`` to start it there; ``trust=False`` leaves the folder untrusted).

    The model answers from ``script`` (see mock_model.py). ``CODEACT_VENV`` points at the shared venv folder, so a
    stamped launcher reuses the test venv. With ``check=True`` (the default) a non-zero exit or a mock error (script
    exhausted, a step that raised) fails the test with the session's output.
    """
    sessions = iter(range(1, 1000))

    def _run(repo: Path, prompt: str, script: Iterable[Step], agent: str | None = None,
             extra_env: Mapping[str, str] | None = None, plugin_dir: Path | None = None, *,
             timeout: float = SESSION_TIMEOUT, check: bool = True,
             allow_tools: Iterable[str] | None = None, cwd: Path | None = None, trust: bool = True) -> CopilotRun:
        mock_model.load(script)
        env = isolated_env(tmp_path / f"copilot-home-{next(sessions)}", copilot_cache,
                           {**mock_model.env(), "CODEACT_VENV": str(venv_dir), **(extra_env or {})})
        # allow_tools: `--allow-tool` values instead of --allow-all-tools (what a `-p` run approves without it)
        approve = ["--allow-all-tools"] if allow_tools is None else \
            [arg for tool in allow_tools for arg in ("--allow-tool", tool)]
        # trust=False: the folder is not trusted, so the CLI skips its hooks (an untrusted clone)
        argv = [copilot_bin, "-p", prompt, *approve, *(["--trust-folder"] if trust else []), "--no-auto-update"]
        if agent:
            argv += ["--agent", agent]
        if plugin_dir:
            argv += ["--plugin-dir", str(plugin_dir)]
        start = time.monotonic()
        try:
            proc = subprocess.run(argv, cwd=cwd or repo, env=env, capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"copilot did not finish within {timeout}s; model requests so far: "
                        f"{len(mock_model.requests)}; mock errors: {mock_model.errors}\n"
                        f"stdout: {exc.stdout!r}\nstderr: {exc.stderr!r}")
        run = CopilotRun(proc.returncode, proc.stdout, proc.stderr, list(mock_model.requests),
                         list(mock_model.errors), time.monotonic() - start)
        if check and (run.returncode != 0 or run.errors):
            pytest.fail(run.describe())
        return run

    return _run


@pytest.fixture(scope="module")
def stamp_shared(template_src: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """Like ``stamp``, but module-scoped, so the tests of one module can share a stamped repo."""
    from copier import run_copy

    def _stamp(files: dict[str, str] | None = None, **answers: Any) -> Path:
        dest = make_repo(tmp_path_factory.mktemp("stamped") / "project", files)
        run_copy(str(template_src), dest, data=answers, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True,
                 skip_tasks=True, overwrite=True)
        return dest

    return _stamp


def bootstrap_launcher(repo: Path, venv_dir: Path, timeout: float = 900) -> None:
    """Prepare the stamped launcher's venv (in the shared folder) outside any CLI session: the first install takes
    a minute or two, longer than the CLI's bash tool waits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEACT_")}
    env["CODEACT_VENV"] = str(venv_dir)
    proc = subprocess.run([str(repo / ".codeact" / "bin" / "codeact"), "setup"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"launcher setup failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
