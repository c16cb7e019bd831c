"""The thin client's start: what the launcher's `python -S` imports before a warm run is handed over.

Every module imported there is paid at every run (a warm trivial run is held to 2x `python -S -c pass`): the client
imports only built-in or nearly built-in modules, and none of the runtime's heavier ones.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
# What a warm run never needs: the stdlib's heavy modules (socket pulls selectors and enum; hashlib OpenSSL), the
# future-import module (~0.3 ms just to read), and the runtime beyond the client's leaves.
NEVER = ("__future__", "typing", "socket", "selectors", "enum", "hashlib", "pathlib", "re", "argparse", "json",
         "codeact.cli", "codeact.core", "codeact.errors", "codeact.server", "pydantic_monty")


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
    assert ours == ["codeact", "codeact.client", "codeact.cmdline", "codeact.privatedir", "codeact.rundir"]
