"""The thin client's start: what the launcher's `python -S` imports before a warm run is handed over.

Every module imported there is paid at every run (a warm trivial run's budget is 50 ms): the client imports the
standard library's small modules, and none of the runtime's heavier ones.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
# What a warm run never needs: the stdlib's heavy modules (socket pulls selectors and enum; hashlib OpenSSL), typing,
# and the runtime beyond the client's leaves.
NEVER = ("__future__", "typing", "socket", "selectors", "enum",
         "hashlib", "pathlib", "re", "argparse", "json", "codeact.cli", "codeact.core", "codeact.errors",
         "codeact.server", "pydantic_monty")


def client_modules() -> set[str]:
    """The modules loaded once the thin client is imported and has read a run's command line, as the launcher
    starts it (``python -S``, the runtime on ``PYTHONPATH``)."""
    probe = ("import sys; del sys.path[0]; before = set(sys.modules); from codeact import client; "
             "client.use_server(['run', '--code', '1'], {}); print(sorted(set(sys.modules) - before))")
    done = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(RUNTIME), "PATH": "/usr/bin:/bin"})
    return set(ast.literal_eval(done.stdout))


def test_the_thin_client_imports_only_its_leaves() -> None:
    loaded = client_modules()
    assert "codeact.client" in loaded
    heavy = sorted(name for name in loaded if name in NEVER or any(name.startswith(n + ".") for n in NEVER))
    assert heavy == [], f"the thin client's start imports {heavy}: every warm run pays for them"
    ours = sorted(name for name in loaded if name.startswith("codeact"))
    assert ours == ["codeact", "codeact.client", "codeact.cmdline", "codeact.frames", "codeact.privatedir",
                    "codeact.rundir", "codeact.sigint"]


def _workers_marked(marker: str) -> list[int]:
    """The monty workers alive whose environment carries ``marker`` (they inherit it from the run that spawned
    them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() == "monty" and marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_a_cold_run_starts_its_worker_early_and_leaves_none_behind(stamp: Any, venv_dir: Path,
                                                                   tmp_path: Path) -> None:
    """In process (CODEACT_SERVER=0) the worker is started before the run checks its workspace and builds its
    tools, so it boots meanwhile; whether the run then uses it or is refused first, no worker outlives it."""
    root = stamp(tmp_path / "project")
    marker = f"CODEACT_TEST_MARK={uuid.uuid4().hex}"
    name, value = marker.split("=")
    env = {**os.environ, "CODEACT_SERVER": "0", "CODEACT_VENV": str(venv_dir), name: value}
    launcher = str(root / ".codeact" / "bin" / "codeact")
    done = subprocess.run([launcher, "run", "--code", "print(6 * 7)"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr
    refused = subprocess.run([launcher, "run", "--workspace", "/", "--code", "1"], cwd=root, env=env,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "refused" in refused.stderr
    deadline = time.monotonic() + 5
    while _workers_marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _workers_marked(marker) == [], "a run's monty worker outlived it"
