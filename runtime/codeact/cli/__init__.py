"""The ``codeact`` command line: a thin layer over the library, exit codes mapped in one place."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import EXIT_OK, EXIT_PROGRAM_ERROR, EXIT_USAGE, CodeactError

EPILOG = "Docs: .github/instructions/codeact.instructions.md. Exit codes: 0 ok, 1 program error, 2 usage error, " \
         "3 backend unavailable."


def _cmd_run(args: argparse.Namespace) -> int:
    from ..core.limits import Limits
    from ..core.outputs import present
    from ..core.runner import run

    code = _read_program(args)
    overrides = {"timeout": args.timeout} if args.timeout is not None else {}
    limits = Limits.from_env().merged(overrides)
    result = run(code, workspace=args.workspace, backend=args.backend, limits=limits)
    # at most the output cap, stdout and stderr together; a cut run is stored and its last line says how to read on
    out, err = present(result, cap=int(limits.output), workspace=lambda: _workspace_root(args), as_json=args.json)
    sys.stdout.write(out)
    sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return EXIT_OK if result.ok else EXIT_PROGRAM_ERROR


def _workspace_root(args: argparse.Namespace) -> Path:
    from ..core.policy import find_workspace

    return Path(args.workspace or find_workspace()).resolve()


def _read_program(args: argparse.Namespace) -> str:
    sources = [s for s in (args.code is not None, args.file is not None, args.stdin) if s]
    if len(sources) != 1:
        raise UsageErrorWithHelp("give the program once: --code CODE, --file PATH, or - to read stdin")
    if args.code is not None:
        return args.code
    if args.file is not None:
        try:
            return Path(args.file).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageErrorWithHelp(f"cannot read --file {args.file}: {exc.strerror}") from None
    return sys.stdin.read()


def _current_tools(args: argparse.Namespace) -> dict[str, Any]:
    from ..core.config import Settings
    from ..core.limits import Limits
    from ..core.policy import Workspace, find_workspace
    from ..tools.base import ToolContext
    from ..tools.assemble import assemble

    from ..core.config import load_user_config

    space = Workspace.at(getattr(args, "workspace", None) or find_workspace())
    user_config = load_user_config()
    ctx = ToolContext(workspace=space, limits=Limits.from_env(), environ=dict(os.environ),
                      allow_hosts=tuple(user_config.get("allow_hosts", ())))
    return assemble(ctx, Settings.load(), user_config=user_config,
                    warn=lambda msg: print(f"warning: {msg}", file=sys.stderr))


def _cmd_tools(args: argparse.Namespace) -> int:
    from ..mcp.listing import print_tools  # MCP servers' unavailable tools and original names too

    return print_tools(args, _current_tools(args))


def _cmd_describe(args: argparse.Namespace) -> int:
    from ..mcp.listing import print_describe  # also the real `server.tool` and the CLI's `server-tool` names

    return print_describe(args, _current_tools(args))


def _cmd_search(args: argparse.Namespace) -> int:
    from ..mcp.listing import print_search  # read-only, like `tools`

    return print_search(args, _current_tools(args))


def _delegate(module: str) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        import importlib
        return int(importlib.import_module(f"codeact.{module}").main(args))
    return handler


class UsageErrorWithHelp(CodeactError):
    exit_code = EXIT_USAGE


def _add_run(sub: Any) -> None:
    run_p = sub.add_parser("run", help="run a program in the sandbox", epilog=EPILOG,
                           description="Run a Python program in the sandbox. It prints what the program prints, "
                                       "then the value of its last expression (as JSON) if not None.")
    src = run_p.add_argument_group("program (exactly one)")
    src.add_argument("--code", help="the program text")
    src.add_argument("--file", help="a file holding the program")
    src.add_argument("stdin", nargs="?", choices=["-"], help="read the program from standard input")
    run_p.add_argument("--workspace", help="folder the tools may reach (default: the git top-level, else here)")
    from ..core.config import BACKENDS

    run_p.add_argument("--backend", choices=BACKENDS,
                       help="sandbox backend (default: $CODEACT_BACKEND, else the stamped answer)")
    run_p.add_argument("--timeout", type=float, help="wall-time limit in seconds (default 30)")
    run_p.add_argument("--json", action="store_true", help="print one JSON object: ok, backend, stdout, result, "
                                                            "error, tool_calls, duration_ms, cut (null, or the "
                                                            "run, bytes and lines not shown)")
    run_p.set_defaults(handler=_cmd_run)


def _add_tools(sub: Any) -> None:
    tools_p = sub.add_parser("tools", help="list the tools the sandbox offers now")
    tools_p.add_argument("server", nargs="?", help="only this MCP server's tools (its real or Python name)")
    tools_p.add_argument("--json", action="store_true", help="print a manifest with JSON Schemas")
    tools_p.add_argument("--workspace", help=argparse.SUPPRESS)
    tools_p.set_defaults(handler=_cmd_tools)


def _add_describe(sub: Any) -> None:
    desc_p = sub.add_parser("describe", help="full documentation and schema of one tool")
    desc_p.add_argument("name", help="tool name, e.g. grep or server.tool")
    desc_p.add_argument("--workspace", help=argparse.SUPPRESS)
    desc_p.set_defaults(handler=_cmd_describe)


def _add_search(sub: Any) -> None:
    search_p = sub.add_parser("search", help="find tools by name and description, best first (read-only)")
    search_p.add_argument("query", nargs="+", help="words to look for, e.g. invoice pdf")
    search_p.add_argument("--limit", type=int, default=20, help="at most this many tools (default 20; 0: all)")
    search_p.add_argument("--json", action="store_true", help="print the matches as JSON, best first")
    search_p.add_argument("--workspace", help=argparse.SUPPRESS)
    search_p.set_defaults(handler=_cmd_search)


def _add_doctor(sub: Any) -> None:
    doctor_p = sub.add_parser("doctor", help="which backend runs and why; checks with fixes")
    doctor_p.add_argument("--refresh", action="store_true", help="re-probe the backends instead of using the cache")
    doctor_p.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor_p.set_defaults(handler=_delegate("cli.doctor"))


def _add_discover(sub: Any) -> None:
    disc_p = sub.add_parser("discover", help="list the configured MCP servers' tools into .codeact/tools.lock.json")
    disc_p.add_argument("--check", action="store_true", help="exit 1 if the configured servers no longer match "
                                                             "the lock (starts no server)")
    disc_p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for a server that sets no "
                                                                    "\"timeout\" of its own (default 60, as the CLI)")
    disc_p.add_argument("--workspace", help="repository whose MCP configuration to read")
    disc_p.add_argument("--json", action="store_true", help="print the result as JSON")
    disc_p.set_defaults(handler=_delegate("mcp.discovery"))


def _add_refresh(sub: Any) -> None:
    ref_p = sub.add_parser("refresh", help="re-discover MCP servers, write the lock and update the MCP section of "
                                           "the instructions and agent (run by `copier copy`/`update`)")
    ref_p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for a server that sets no "
                                                                   "\"timeout\" of its own (default 60, as the CLI)")
    ref_p.add_argument("--workspace", help="the repository (default: the git top-level)")
    ref_p.set_defaults(handler=_delegate("lifecycle.refresh"))


def _add_drift(sub: Any) -> None:
    drift_p = sub.add_parser("drift", help="exit 1 if this repo no longer matches the template, its answers and the "
                                           "MCP configuration (for CI and pre-commit)",
                             description="Compare the repository with what the recorded template version, the "
                                         "recorded answers and the current MCP configuration produce. Never "
                                         "modifies the working tree. Needs `copier` on PATH.")
    mode = drift_p.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", help="compare MCP configs with the lock without starting "
                                                             "any server (the default)")
    mode.add_argument("--live", action="store_true", help="re-discover the MCP servers (starts them) and compare")
    drift_p.add_argument("--check-newer", action="store_true", help="also fail when a newer template version exists")
    drift_p.add_argument("--policy-from", metavar="SRC", help="check the answers against the codeact-policy.yml of "
                                                              "the organisation's template SRC (its default "
                                                              "branch); fails when the answers' _src_path is not SRC")
    drift_p.add_argument("--workspace", help="the repository to check (default: the git top-level)")
    drift_p.add_argument("--json", action="store_true", help="print the result as JSON")
    drift_p.set_defaults(handler=_delegate("lifecycle.drift"))


def _add_link(sub: Any) -> None:
    link_p = sub.add_parser("link", help="global scope: link the instructions, agent, skills and hook into "
                                         "$COPILOT_HOME (run by `copier copy` and after every update)",
                            description="Link a global-scope install into $COPILOT_HOME (default ~/.copilot), where "
                                        "the Copilot CLI reads user instructions, agents, skills and hooks. "
                                        "Idempotent; never replaces a file it did not make.")
    link_p.add_argument("--workspace", help="the install folder (default: the one this launcher belongs to)")
    link_p.add_argument("--remove", action="store_true", help="remove the links instead (only codeact's own)")
    link_p.add_argument("--dry-run", action="store_true", help="with --remove: only print what would be removed")
    link_p.set_defaults(handler=_delegate("lifecycle.links"))


def _add_uninstall(sub: Any) -> None:
    un_p = sub.add_parser("uninstall", help="remove every file the template owns; keep your own unless --all")
    un_p.add_argument("--all", action="store_true", help="also remove the seeded files (your local instructions)")
    un_p.add_argument("--dry-run", action="store_true", help="only print what would be removed")
    un_p.add_argument("--workspace", help="the repository (default: the git top-level)")
    un_p.set_defaults(handler=_delegate("lifecycle.uninstall"))


_COMMANDS: dict[str, Callable[[Any], None]] = {
    "run": _add_run,
    "tools": _add_tools,
    "describe": _add_describe,
    "search": _add_search,
    "doctor": _add_doctor,
    "discover": _add_discover,
    "refresh": _add_refresh,
    "drift": _add_drift,
    "link": _add_link,
    "uninstall": _add_uninstall,
}


def _check_paths(args: argparse.Namespace) -> None:
    """``--workspace`` (every subcommand that takes it) and ``--file``, validated once, before anything runs: a
    missing, protected, system or home folder is refused with exit 2 (the rules: codeact.core.policy). The sandbox
    subcommands get the same check from ``Workspace.at``, which also covers the default workspace."""
    workspace, program = getattr(args, "workspace", None), getattr(args, "file", None)
    if workspace is None and program is None:
        return
    from ..core.policy import SANDBOX_COMMANDS, check_program_file, check_workspace

    if workspace is not None and args.command not in SANDBOX_COMMANDS:
        args.workspace = str(check_workspace(workspace, sandbox=False))
    elif workspace == "":
        check_workspace(workspace)  # the run would take "" for "not given"
    if program is not None:
        check_program_file(program)


class _Parser(argparse.ArgumentParser):
    """No abbreviated options anywhere (``--works`` for ``--workspace``): the hook accepts exact option names only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; with ``command``, only that subcommand is built (each costs ~1 ms at start-up)."""
    parser = _Parser(
        prog="codeact", epilog=EPILOG,
        description="Run one sandboxed Python program that calls tools as plain functions, and print the answer.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, add in _COMMANDS.items():
        if command is None or name == command:
            add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in _COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        _check_paths(args)
        return args.handler(args)
    except CodeactError as exc:
        print(f"codeact: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("codeact: interrupted", file=sys.stderr)
        return 130


__all__ = ["main", "build_parser"]
