"""``python -m codeact.providers.helper NAME FILE``: a file's public functions lent as NAME.function."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from providers_helpers import TOKEN

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"


def test_the_command_lends_a_files_public_functions(hub, url, tmp_path, run_program):
    (tmp_path / "fns.py").write_text('def double(n: int) -> int:\n    "Twice n."\n    return 2 * n\n\n\n'
                                     'def _private() -> None:\n    pass\n')
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    env = {**os.environ, "PYTHONPATH": str(RUNTIME)}
    proc = subprocess.Popen([sys.executable, "-m", "codeact.providers.helper", "calc", str(tmp_path / "fns.py"),
                             "--url", url, "--token-file", str(token_file), "--context", "A calculator."], env=env)
    try:
        for _ in range(500):
            if hub.connected:
                break
            time.sleep(0.02)
        assert sorted(hub.tools()) == ["calc.double"] and hub.context("calc") == "A calculator."
        result = run_program("calc.double(n=21)", hub.tools())
        assert result.ok and result.result == 42
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_refused_command_exits_1_with_the_reason(url, tmp_path):
    (tmp_path / "fns.py").write_text("def f() -> None:\n    pass\n")
    (tmp_path / "token").write_text("wrong-token\n")
    env = {**os.environ, "PYTHONPATH": str(RUNTIME)}
    done = subprocess.run([sys.executable, "-m", "codeact.providers.helper", "calc", str(tmp_path / "fns.py"),
                           "--url", url, "--token-file", str(tmp_path / "token")], env=env, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 1 and "AUTH_FAILED" in done.stderr
