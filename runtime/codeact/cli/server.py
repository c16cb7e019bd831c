"""``codeact server status|start|stop``: the warm server of this workspace (see codeact.server)."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from ..client import Unreachable
from ..errors import EXIT_OK, EXIT_PROGRAM_ERROR
from ..server.control import STUCK, Target, start, status, stop


def add_parser(sub: Any) -> None:
    server_p = sub.add_parser(
        "server", help="the warm server of this workspace: status, start, stop",
        description="The warm server keeps the sandbox, the tools and the MCP sessions up between runs; the launcher "
                    "starts it on demand and it exits after $CODEACT_SERVER_IDLE seconds (default 600) without a "
                    "run. CODEACT_SERVER=0 runs everything in the calling process instead.")
    server_p.add_argument("action", choices=("status", "start", "stop"),
                          help="status: exit 0 when a server for this workspace and configuration runs, 1 when none "
                               "does (never starts one); start: start one (exit 0); stop: stop it (exit 0 either way)")
    server_p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    server_p.add_argument("--workspace", help="the workspace (default: the git top-level, else here)")
    server_p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    target = Target(args.workspace)
    actions: dict[str, Callable[[Target], int]] = {"status": _status, "start": _start, "stop": _stop}
    code = actions[args.action](target)
    if args.json:
        print(json.dumps(status(target), sort_keys=False))
    return code


def _status(target: Target) -> int:
    shown = status(target)
    if not shown["responding"] and shown["pid"]:
        print(f"codeact: server {shown['pid']} for {target.workspace} is stuck: {STUCK}; the next run runs without "
              "it, `codeact server stop` kills it", file=sys.stderr)
        return EXIT_PROGRAM_ERROR
    if not shown["running"]:
        why = "a server runs with another configuration" if shown["pid"] else "no server runs"
        print(f"codeact: {why} for {target.workspace}", file=sys.stderr)
        return EXIT_PROGRAM_ERROR
    print(f"codeact: server {shown['pid']} serves {target.workspace} (since {shown['started_at']}, "
          f"{len(shown['mcp_sessions'])} MCP session(s), {shown.get('active_runs') or 0} run(s) in flight)",
          file=sys.stderr)
    for run in shown.get("stuck") or []:  # past its wall limit: about to be abandoned, the server then retires
        print(f"codeact: {run}", file=sys.stderr)
    return EXIT_OK


def _start(target: Target) -> int:
    shown = status(target)
    if shown["running"]:
        print(f"codeact: server {shown['pid']} already serves {target.workspace}", file=sys.stderr)
        return EXIT_OK
    if shown["pid"]:  # one with another configuration: it goes, a fresh one comes
        stop(target)
    print(f"codeact: starting the server for {target.workspace} ...", file=sys.stderr, flush=True)
    try:
        start(target)
    except Unreachable as exc:
        print(f"codeact: the server did not start: {exc}", file=sys.stderr)
        return EXIT_PROGRAM_ERROR
    shown = status(target)
    print(f"codeact: server {shown['pid']} listening on {target.socket}", file=sys.stderr)
    return EXIT_OK if shown["running"] else EXIT_PROGRAM_ERROR


def _stop(target: Target) -> int:
    pid = stop(target)
    if pid is None:
        print(f"codeact: no server runs for {target.workspace}", file=sys.stderr)
    else:
        print(f"codeact: server {pid} stopped", file=sys.stderr)
    return EXIT_OK


__all__ = ["add_parser", "main"]
