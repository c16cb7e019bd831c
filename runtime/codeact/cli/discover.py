"""``codeact discover``: list the configured MCP servers' tools into ``.codeact/tools.lock.json`` (``--check``:
compare them with the lock, starting no server). The work is :mod:`codeact.lifecycle.discover`'s; this prints it."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..core.boundary import find_workspace
from ..core.config import Settings, launcher_invocation
from ..errors import EXIT_OK, EXIT_PROGRAM_ERROR
from ..lifecycle.discover import LockCheck, check_machine_lock, check_repo_lock, discover_machine_lock, discover_repo
from ..mcp.config import USER_FILE, load_servers
from ..mcp.discovery import DEFAULT_TIMEOUT
from ..mcp.lock import LOCK_FILE


def add_parser(sub: Any) -> None:
    """Add ``discover`` to the subcommands ``sub``."""
    disc_p = sub.add_parser("discover", help="list the configured MCP servers' tools into .codeact/tools.lock.json")
    disc_p.add_argument("--check", action="store_true", help="exit 1 if the configured servers no longer match "
                                                             "the lock (starts no server)")
    disc_p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each server to start "
                                                                    "(default 60, as the CLI; a server's "
                                                                    "\"timeout\" bounds its calls)")
    disc_p.add_argument("--workspace", help="repository whose MCP configuration to read")
    disc_p.add_argument("--json", action="store_true", help="print the result as JSON")


def main(args: argparse.Namespace) -> int:
    """Discover (or with ``--check``, compare); the flags: ``--check``, ``--timeout``, ``--workspace``, ``--json``."""
    workspace = Path(args.workspace).resolve() if getattr(args, "workspace", None) else find_workspace()
    as_json = bool(getattr(args, "json", False))
    timeout = float(getattr(args, "timeout", None) or DEFAULT_TIMEOUT)
    check = bool(getattr(args, "check", False))
    settings = Settings.load()
    if settings.scope != "repo":
        # a global or plugin install: its lock for a repository is this machine's (never one the repository ships)
        return _machine_lock(workspace, timeout, check, settings.mcp_exclude, as_json)
    if check:
        return _report_check(check_repo_lock(workspace, os.environ), as_json)
    done = discover_repo(workspace, timeout=timeout, environ=os.environ, progress=_err)
    report, mine = done.report, done.user_lock
    for problem in report.config.problems:
        _err(f"{problem.severity}: {problem}")
    failed = [o for o in report.outcomes.values() if o.status != "ok"]
    kept = [o for o in failed if o.kept is not None]
    tools = sum(len(o.tools) for o in report.outcomes.values())
    if as_json:
        print(json.dumps({**report.to_json(), **({"user_lock": mine.to_json()} if mine else {})}, indent=2,
                         sort_keys=True))
    else:
        print(f"wrote {LOCK_FILE}: {len(report.outcomes)} server(s), {tools} tool(s)"
              + (f", {len(failed)} failed ({', '.join(o.name for o in failed)})" if failed else "")
              + (f"; kept the lock's entry of {', '.join(o.name for o in kept)} (same configuration)" if kept else "")
              + f" in {report.seconds:.1f} s")
        if mine:
            print(f"wrote {mine.path}: {len(mine.servers)} server(s) of yours ($COPILOT_HOME/{USER_FILE}, "
                  "this machine's lock, never committed)" if mine.path is not None else
                  f"your servers ($COPILOT_HOME/{USER_FILE}) were not listed: {mine.error}")
    return EXIT_OK


def _err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _machine_lock(workspace: Path, timeout: float, check: bool, exclude: tuple[str, ...], as_json: bool) -> int:
    loaded = load_servers(workspace, os.environ)
    if check:
        return _report_check(check_machine_lock(workspace, loaded, environ=os.environ, exclude=exclude), as_json)
    for problem in loaded.problems:
        _err(f"{problem.severity}: {problem}")
    done = discover_machine_lock(workspace, loaded, timeout=timeout, environ=os.environ, exclude=exclude,
                                 progress=_err)
    if as_json:
        print(json.dumps(done.to_json(), indent=2, sort_keys=True))
    else:
        failed = done.failed
        print(f"wrote {done.path}: {len(done.entries)} server(s), {done.tool_count} tool(s)"
              + (f", {len(failed)} failed ({', '.join(failed)})" if failed else "")
              + " (this machine's lock for the repository: a global or plugin install keeps one per repository)")
    return EXIT_OK


def _report_check(result: LockCheck, as_json: bool) -> int:
    """``--check``: print how the configured servers differ from the lock; exit 1 when they do."""
    if as_json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
    else:
        for problem in result.problems:
            _err(f"{problem.severity}: {problem}")
        for line in result.differences:
            print(f"differs: {line}")
        if result.failed_in_lock:
            _err(f"note: the lock records failed server(s): {', '.join(result.failed_in_lock)}")
        print(f"{result.shown} is out of date; run {launcher_invocation('discover')}" if not result.ok
              else f"{result.shown} matches the configured MCP servers")
    return EXIT_OK if result.ok else EXIT_PROGRAM_ERROR
