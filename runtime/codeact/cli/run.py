"""``codeact run``: run one program in the sandbox and print what it printed and its last value."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.config import BACKENDS
from ..errors import EXIT_OK, EXIT_PROGRAM_ERROR, UsageError
from . import EPILOG

if TYPE_CHECKING:
    import argparse


# what argparse needs beyond codeact.cmdline.OPTIONS["run"] (the names and which take a value), option by option
_ARGUMENTS: dict[str, dict[str, Any]] = {
    "--code": {"help": "the program text"},
    "--file": {"help": "a file holding the program"},
    "--workspace": {"help": "folder the tools may reach (default: the git top-level, else here)"},
    "--backend": {"choices": BACKENDS, "help": "sandbox backend (default: $CODEACT_BACKEND, else the stamped answer)"},
    "--timeout": {"type": float, "help": "wall-time limit in seconds (default 30)"},
    "--json": {"help": "print one JSON object: ok, backend, stdout, result, error, tool_calls, duration_ms, cut "
                       "(null, or the run, bytes and lines not shown)"},
    "--session": {"metavar": "NAME",
                  "help": "keep the program's plain-data globals (numbers, strings, lists, dicts...) for the next run "
                          "with the same NAME in this workspace; without it every run starts empty"},
}
_PROGRAM = ("--code", "--file")  # with the stdin positional: the program, given exactly once


def add_parser(sub: Any) -> None:
    """Add ``run`` to the subcommands ``sub``: its options are :data:`codeact.cmdline.OPTIONS` ``["run"]``, the
    table the thin client and the server read a command line by."""
    from ..cmdline import OPTIONS

    run_p = sub.add_parser("run", help="run a program in the sandbox", epilog=EPILOG,
                           description="Run a Python program in the sandbox. It prints what the program prints, "
                                       "then the value of its last expression (as JSON) if not None.")
    src = run_p.add_argument_group("program (exactly one)")
    for option in _PROGRAM:
        src.add_argument(option, **_ARGUMENTS[option])
    src.add_argument("stdin", nargs="?", choices=["-"], help="read the program from standard input")
    for option, takes_value in OPTIONS["run"].items():
        if option not in _PROGRAM:
            run_p.add_argument(option, **_ARGUMENTS[option], **({} if takes_value else {"action": "store_true"}))


def main(args: argparse.Namespace) -> int:
    from ..backends.head_start import start_sandbox_early
    from ..core.limits import Limits
    from ..core.outputs import present
    from ..core.watchdog import Watchdog
    from ..runner import run

    env = os.environ if args.environ is None else args.environ  # the warm server passes the request's
    code = _read_program(args)
    if args.environ is None:
        start_sandbox_early(args.backend, env)
    overrides = {"timeout": args.timeout} if args.timeout is not None else {}
    limits = Limits.from_env(env).merged(overrides)
    workspace = args.workspace or (str(_workspace_root(args)) if args.cwd is not None else None)
    # in this process, a tool that holds the interpreter (C code keeping the GIL) would stop every deadline here:
    # a timer outside the interpreter ends it (the warm server's client does the same for the server)
    guard = Watchdog(float(limits.timeout)) if args.environ is None else None
    try:
        result = run(code, workspace=workspace, backend=args.backend, limits=limits, environ=env,
                     session=args.session)
    finally:
        if guard is not None:
            guard.close()
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
    from ..core.boundary import find_workspace

    return Path(args.workspace or find_workspace(args.cwd)).resolve()


def _read_program(args: argparse.Namespace) -> str:
    sources = [s for s in (args.code is not None, args.file is not None, args.stdin) if s]
    if len(sources) != 1:
        raise UsageError("give the program once: --code CODE, --file PATH, or - to read stdin")
    from ..cmdline import read_program

    if args.code is not None:
        return str(args.code)
    if args.file is not None:  # no further than the size a run accepts: the run refuses what is past it
        try:
            with open(args.file, encoding="utf-8") as handle:
                return read_program(handle)
        except OSError as exc:
            raise UsageError(f"cannot read --file {args.file}: {exc.strerror}") from None
    return str(args.stdin_text) if args.stdin_text is not None else read_program(sys.stdin)
