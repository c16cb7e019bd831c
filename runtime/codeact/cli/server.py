"""``codeact server status|start|stop``: the warm server of this workspace (see codeact.server)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from ..errors import EXIT_OK, EXIT_PROGRAM_ERROR

_KEYS = ("running", "pid", "socket", "workspace", "config_hash", "started_at", "idle_timeout_s", "mcp_sessions",
         "providers", "active_runs", "responding", "stuck")
STUCK = "the server does not answer: a run holds its interpreter (a tool stuck in C code)"


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


class _Target:
    """The server this command is about: its socket, and the configuration hash a run would need."""

    def __init__(self, args: argparse.Namespace) -> None:
        from .. import client

        self.environ = dict(os.environ)
        self.workspace = client.workspace_of(args.workspace, os.getcwd())
        self.folder = client.server_folder(self.environ)
        self.socket = client.socket_path(self.folder, self.workspace)

    def ask(self, op: str) -> dict[str, Any] | None:
        from .. import client

        try:
            client.private_folder(self.folder, create=False)
        except client.Unreachable:
            return None
        return client.request(self.socket, {"op": op})

    def silent_pid(self) -> int:
        """The pid of a server that holds this socket but did not answer (0: none runs): the pid its lock file
        names, when that process still runs the server of this socket."""
        from ..mcp.session_pool import process_running

        try:
            with open(self.socket[:-len(".sock")] + ".lock", encoding="ascii") as handle:
                pid = int(handle.read().strip() or 0)
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                serves = os.fsencode(self.socket) in handle.read().split(b"\0")
        except (OSError, ValueError):
            return 0
        return pid if serves and process_running(pid) else 0

    def current_hash(self) -> str:
        from ..server.confighash import config_hash

        return config_hash(Path(self.workspace), self.environ)


def status(target: _Target) -> dict[str, Any]:
    """The ``server status --json`` object: ``running`` only when the server serves the current configuration;
    ``responding`` false and ``stuck`` saying why when a server holds the socket but does not answer."""
    reply = target.ask("status") or {}
    shown = {key: reply.get(key) for key in _KEYS}
    shown.update(running=bool(reply) and reply.get("config_hash") == target.current_hash(), socket=target.socket,
                 workspace=reply.get("workspace") or target.workspace, mcp_sessions=reply.get("mcp_sessions") or [],
                 responding=bool(reply), stuck=reply.get("stuck") or [])
    if not reply:
        from ..server.daemon import idle_timeout

        shown["idle_timeout_s"] = idle_timeout(target.environ)
        silent = target.silent_pid()
        if silent:
            shown.update(pid=silent, stuck=[STUCK])
    return shown


def main(args: argparse.Namespace) -> int:
    target = _Target(args)
    actions: dict[str, Callable[[_Target], int]] = {"status": _status, "start": _start, "stop": _stop}
    code = actions[args.action](target)
    if args.json:
        print(json.dumps(status(target), sort_keys=False))
    return code


def _status(target: _Target) -> int:
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
          f"{len(shown['mcp_sessions'])} MCP session(s))", file=sys.stderr)
    return EXIT_OK


def _start(target: _Target) -> int:
    from .. import client

    shown = status(target)
    if shown["running"]:
        print(f"codeact: server {shown['pid']} already serves {target.workspace}", file=sys.stderr)
        return EXIT_OK
    if shown["pid"]:  # one with another configuration: it goes, a fresh one comes
        _stop(target, quiet=True)
    print(f"codeact: starting the server for {target.workspace} ...", file=sys.stderr, flush=True)
    try:
        client.private_folder(target.folder)
        client.start_server(target.socket, target.workspace, target.environ)
    except client.Unreachable as exc:
        print(f"codeact: the server did not start: {exc}", file=sys.stderr)
        return EXIT_PROGRAM_ERROR
    shown = status(target)
    print(f"codeact: server {shown['pid']} listening on {target.socket}", file=sys.stderr)
    return EXIT_OK if shown["running"] else EXIT_PROGRAM_ERROR


def _stop(target: _Target, quiet: bool = False) -> int:
    from ..mcp.session_pool import process_running

    reply = target.ask("stop")
    if reply is None and target.silent_pid():  # stuck: it cannot hear a stop
        import signal

        pid = target.silent_pid()
        try:
            os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        reply = {"pid": pid}
    if reply is None:
        if not quiet:
            print(f"codeact: no server runs for {target.workspace}", file=sys.stderr)
        return EXIT_OK
    pid = int(reply.get("pid") or 0)
    until = time.monotonic() + 10
    while pid and time.monotonic() < until and process_running(pid):
        time.sleep(0.02)
    if not quiet:
        print(f"codeact: server {pid} stopped", file=sys.stderr)
    return EXIT_OK


__all__ = ["add_parser", "main", "status"]
