"""A stamped repository and its launcher for the red-team tests that attack through it (rounds 4 to 6): the class
the tests drive, made by the ``make_launcher`` fixture (tests/runtime/conftest.py) with the tools each round needs."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


class Launcher:
    """A stamped repository (exclusive mode, the monty backend) and its launcher, warm or with CODEACT_SERVER=0.
    ``limit``: the ``--timeout`` every run is given unless it names one (``None``: the launcher's own)."""

    def __init__(self, root: Path, env: dict[str, str], limit: int | None = None) -> None:
        self.root, self.env, self.limit = root, env, limit

    def run(self, code: str, *, warm: bool = True, timeout: float = 120, args: tuple[str, ...] = (),
            limit: int | None = None, **popen: Any) -> Any:
        env = {**self.env, **({} if warm else {"CODEACT_SERVER": "0"})}
        limit = self.limit if limit is None else limit
        bound = ("--timeout", str(limit)) if limit is not None else ()
        return subprocess.run([str(self.root / ".codeact/bin/codeact"), "run", *bound, *args, "--code", code],
                              cwd=self.root, env=env, capture_output=True, text=True, timeout=timeout, **popen)

    def server_pid(self) -> int | None:
        done = subprocess.run([str(self.root / ".codeact/bin/codeact"), "server", "status", "--json"], cwd=self.root,
                              env=self.env, capture_output=True, text=True, timeout=60)
        shown = json.loads(done.stdout)
        return shown["pid"] if shown["running"] else None


def launchers(stamp: Callable[..., Path], venv_dir: Path, tmp_path: Path) -> Iterator[Callable[..., Launcher]]:
    """``make(tools, limit=None)``: a repository stamped with ``tools`` below ``tmp_path``, set up, its warm server
    (if any) stopped and its socket folder removed when the test ends."""
    made: list[tuple[Launcher, Path]] = []

    def make(tools: list[str], *, limit: int | None = None) -> Launcher:
        root = stamp(tmp_path / "project", tools=tools, enforcement="exclusive", backend="monty").resolve()
        run_dir = Path(tempfile.mkdtemp(prefix="cx", dir="/tmp"))  # a socket path must be short
        env = {k: v for k, v in os.environ.items() if k != "CODEACT_SERVER"}
        env.update(CODEACT_VENV=str(venv_dir), XDG_RUNTIME_DIR=str(run_dir), CODEACT_SERVER_IDLE="120",
                   CODEACT_CONFIG_DIR=str(tmp_path / "config"), COPILOT_HOME=str(tmp_path / "copilot"),
                   XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_STATE_HOME=str(tmp_path / "state"))
        launcher = Launcher(root, env, limit)
        made.append((launcher, run_dir))
        setup = subprocess.run([str(root / ".codeact/bin/codeact"), "setup"], cwd=root, env=env, capture_output=True,
                               text=True, timeout=600)
        assert setup.returncode == 0, setup.stderr
        return launcher

    yield make
    for launcher, run_dir in made:
        if (launcher.root / ".codeact/bin/codeact").exists():  # an uninstall test removes it
            subprocess.run([str(launcher.root / ".codeact/bin/codeact"), "server", "stop"], cwd=launcher.root,
                           env=launcher.env, capture_output=True, timeout=60)
        shutil.rmtree(run_dir, ignore_errors=True)


__all__ = ["Launcher", "launchers"]
