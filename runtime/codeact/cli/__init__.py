"""The ``codeact`` command line: a thin layer over the library, exit codes mapped in one place.

One module per subcommand (``codeact.cli.<module>``, listed in :data:`COMMANDS`), each with ``add_parser(sub)`` and
``main(args) -> int``; only the module of the subcommand being run is imported (start-up cost). ``--workspace`` and
``--file`` are validated once, here, for every subcommand (:func:`check_paths`).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import EXIT_USAGE, CodeactError

if TYPE_CHECKING:
    import argparse

EPILOG = "Docs: .github/instructions/codeact.instructions.md. Exit codes: 0 ok, 1 program error, 2 usage error, " \
         "3 backend unavailable."

# subcommand -> its module under codeact.cli, in the order `codeact --help` lists them
COMMANDS: dict[str, str] = {
    "run": "run",
    "tools": "tools",
    "describe": "describe",
    "search": "search",
    "doctor": "doctor",
    "discover": "discover",
    "refresh": "refresh",
    "drift": "drift",
    "link": "link",
    "uninstall": "uninstall",
    "server": "server",
}


def command_module(command: str) -> ModuleType:
    """The module of subcommand ``command`` (imported now)."""
    return importlib.import_module(f"{__name__}.{COMMANDS[command]}")


def check_paths(args: argparse.Namespace) -> None:
    """``--workspace`` (every subcommand that takes it) and ``--file``, validated once, before anything runs: a
    missing, protected, system or home folder is refused with exit 2 (the rules: codeact.core.boundary). The sandbox
    subcommands get the same check from ``Workspace.at``, which also covers the default workspace."""
    workspace, program = getattr(args, "workspace", None), getattr(args, "file", None)
    if workspace is None and program is None:
        return
    from ..core.boundary import SANDBOX_COMMANDS, check_program_file, check_workspace

    if args.command == "server" and args.action != "start" and workspace:
        return  # status and stop run nothing there: they must reach a server whatever its workspace
    if workspace is not None and args.command not in SANDBOX_COMMANDS:
        args.workspace = str(check_workspace(workspace, sandbox=False))
    elif workspace == "":
        check_workspace(workspace)  # the run would take "" for "not given"
    if program is not None:
        check_program_file(program)


@functools.lru_cache(maxsize=1)
def _parser_class() -> type[argparse.ArgumentParser]:
    """The parser of every subcommand: no abbreviated options anywhere (``--works`` for ``--workspace``), since the
    hook accepts exact option names only."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("allow_abbrev", False)
            super().__init__(*args, **kwargs)

    return _Parser


@functools.cache
def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; with ``command``, only that subcommand is built (a run builds only its own). Made once
    per process: the warm server parses every run's arguments with it (parsing does not change a parser)."""
    _Parser = _parser_class()
    parser = _Parser(
        prog="codeact", epilog=EPILOG,
        description="Run one sandboxed Python program that calls tools as plain functions, and print the answer.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    add = sub.add_parser

    def add_parser(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if kwargs.get("help") and not kwargs.get("description"):  # `codeact X --help` opens with a sentence
            text = str(kwargs["help"])
            kwargs["description"] = text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
        return add(name, **kwargs)

    sub.add_parser = add_parser  # type: ignore[method-assign]
    for name in COMMANDS:
        if command is None or name == command:
            command_module(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, environ: Mapping[str, str] | None = None, cwd: str | None = None,
         stdin: str | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit code.

    The warm server (codeact.server) passes each request's ``environ``, ``cwd`` and the program read from the
    client's ``stdin``: a subcommand reads them from ``args`` (``args.environ``, ``args.cwd``, ``args.stdin_text``),
    never from this process."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    args.environ, args.cwd, args.stdin_text = environ, cwd, stdin
    if cwd is not None:  # relative paths are the client's, not this process's
        for name in ("workspace", "file"):
            value = getattr(args, name, None)
            if value:
                setattr(args, name, os.path.join(cwd, value))
    try:
        check_paths(args)
        return int(command_module(args.command).main(args))
    except CodeactError as exc:
        print(f"codeact: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("codeact: interrupted", file=sys.stderr)
        return 130


__all__ = ["COMMANDS", "EPILOG", "build_parser", "check_paths", "command_module", "main"]
