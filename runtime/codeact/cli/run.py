"""``codeact run``: run one program in the sandbox and print what it printed and its last value."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..core.config import BACKENDS
from ..errors import EXIT_OK, EXIT_PROGRAM_ERROR, EXIT_USAGE, CodeactError
from . import EPILOG


class UsageErrorWithHelp(CodeactError):
    """The program was not given exactly once, or its file cannot be read."""

    exit_code = EXIT_USAGE


def add_parser(sub: Any) -> None:
    """Add ``run`` to the subcommands ``sub``."""
    run_p = sub.add_parser("run", help="run a program in the sandbox", epilog=EPILOG,
                           description="Run a Python program in the sandbox. It prints what the program prints, "
                                       "then the value of its last expression (as JSON) if not None.")
    src = run_p.add_argument_group("program (exactly one)")
    src.add_argument("--code", help="the program text")
    src.add_argument("--file", help="a file holding the program")
    src.add_argument("stdin", nargs="?", choices=["-"], help="read the program from standard input")
    run_p.add_argument("--workspace", help="folder the tools may reach (default: the git top-level, else here)")
    run_p.add_argument("--backend", choices=BACKENDS,
                       help="sandbox backend (default: $CODEACT_BACKEND, else the stamped answer)")
    run_p.add_argument("--timeout", type=float, help="wall-time limit in seconds (default 30)")
    run_p.add_argument("--json", action="store_true", help="print one JSON object: ok, backend, stdout, result, "
                                                            "error, tool_calls, duration_ms, cut (null, or the "
                                                            "run, bytes and lines not shown)")
    run_p.add_argument("--session", metavar="NAME",
                       help="keep the program's plain-data globals (numbers, strings, lists, dicts...) for the next "
                            "run with the same NAME in this workspace; without it every run starts empty")


def main(args: argparse.Namespace) -> int:
    from ..core.limits import Limits
    from ..core.outputs import present
    from ..core.runner import run

    env = os.environ if args.environ is None else args.environ  # the warm server passes the request's
    code = _read_program(args)
    overrides = {"timeout": args.timeout} if args.timeout is not None else {}
    limits = Limits.from_env(env).merged(overrides)
    workspace = args.workspace or (str(_workspace_root(args)) if args.cwd is not None else None)
    result = run(code, workspace=workspace, backend=args.backend, limits=limits, environ=env, session=args.session)
    # at most the output cap, stdout and stderr together; a cut run is stored and its last line says how to read on
    out, err = present(result, cap=int(limits.output), workspace=lambda: _workspace_root(args), environ=env,
                    as_json=args.json)
    sys.stdout.write(out)
    sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return EXIT_OK if result.ok else EXIT_PROGRAM_ERROR


def _workspace_root(args: argparse.Namespace) -> Path:
    from ..core.policy import find_workspace

    return Path(args.workspace or find_workspace(args.cwd)).resolve()


def _read_program(args: argparse.Namespace) -> str:
    sources = [s for s in (args.code is not None, args.file is not None, args.stdin) if s]
    if len(sources) != 1:
        raise UsageErrorWithHelp("give the program once: --code CODE, --file PATH, or - to read stdin")
    if args.code is not None:
        return str(args.code)
    if args.file is not None:
        try:
            return Path(args.file).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageErrorWithHelp(f"cannot read --file {args.file}: {exc.strerror}") from None
    return str(args.stdin_text) if args.stdin_text is not None else sys.stdin.read()
