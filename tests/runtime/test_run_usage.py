"""``codeact run`` given no program, two programs or an unreadable file: a plain usage error (exit 2) whose message
says how to give the program (there was a ``UsageErrorWithHelp`` that showed no help and was no ``UsageError``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from codeact.cli import build_parser, command_module
from codeact.errors import EXIT_USAGE, UsageError

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
TWICE = "give the program once: --code CODE, --file PATH, or - to read stdin"


@pytest.mark.parametrize(("argv", "message"), [
    (["--code", "1", "--file", "prog.py"], TWICE),
    (["--code", "1", "-"], TWICE),
    (["--file", "missing.py"], r"cannot read --file .*missing\.py: No such file or directory"),
])
def test_the_program_given_wrong_is_a_usage_error(tmp_path: Path, argv: list[str], message: str) -> None:
    args = build_parser("run").parse_args(["run", *[str(tmp_path / a) if a.endswith(".py") else a for a in argv]])
    args.environ, args.cwd, args.stdin_text = {}, None, None
    with pytest.raises(UsageError, match=message) as refused:
        command_module("run").main(args)
    assert refused.value.exit_code == EXIT_USAGE


def test_the_command_line_says_it_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(RUNTIME),
           "CODEACT_CONFIG_DIR": str(tmp_path / "config"), "CODEACT_BACKEND": "monty", "LANG": "C.UTF-8"}
    done = subprocess.run([sys.executable, "-m", "codeact", "run", "--code", "1", "-"], cwd=tmp_path, env=env,
                          input="2", capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (EXIT_USAGE, "", f"codeact: {TWICE}\n")
