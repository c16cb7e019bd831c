"""``codeact discover``: list the configured MCP servers' tools into ``.codeact/tools.lock.json`` (``--check``:
compare them with the lock, starting no server)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.boundary import find_workspace
from ..core.config import Settings
from ..errors import EXIT_OK, EXIT_PROGRAM_ERROR
from ..mcp.cache import cache_path, cached_lock
from ..mcp.config import USER_FILE, LoadedConfig, ServerConfig, copilot_home, load_servers, read_exclusions
from ..mcp.discovery import DEFAULT_TIMEOUT, active_servers, discover
from ..mcp.lock import LOCK_FILE, differences, empty_lock, parse_lock, read_lock


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

    def err(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    timeout = float(getattr(args, "timeout", None) or DEFAULT_TIMEOUT)
    if _machine_local():
        return _discover_machine_lock(workspace, timeout, bool(getattr(args, "check", False)), as_json, err)
    if getattr(args, "check", False):
        return _check(workspace, as_json, err)

    # The user's own servers ($COPILOT_HOME/mcp-config.json) never go into the committed lock: this machine's lock
    # of them is listed again at the same time (as runs would after RETRY_AFTER / MAX_AGE).
    mine: dict[str, Any] = {}
    refresh = threading.Thread(target=_refresh_user_lock, args=(workspace, timeout, err, mine), daemon=True) \
        if (copilot_home(os.environ) / USER_FILE).is_file() else None
    if refresh is not None:
        refresh.start()
    report = discover(workspace, timeout=timeout, environ=os.environ, progress=err)
    if refresh is not None:
        refresh.join()
    for problem in report.config.problems:
        err(f"{problem.severity}: {problem}")
    failed = [o for o in report.outcomes.values() if o.status != "ok"]
    kept = [o for o in failed if o.kept is not None]
    tools = sum(len(o.tools) for o in report.outcomes.values())
    if as_json:
        print(json.dumps({**report.to_json(), **({"user_lock": mine} if mine else {})}, indent=2, sort_keys=True))
    else:
        print(f"wrote {LOCK_FILE}: {len(report.outcomes)} server(s), {tools} tool(s)"
              + (f", {len(failed)} failed ({', '.join(o.name for o in failed)})" if failed else "")
              + (f"; kept the lock's entry of {', '.join(o.name for o in kept)} (same configuration)" if kept else "")
              + f" in {report.seconds:.1f} s")
        if mine:
            print(f"wrote {mine['lock']}: {len(mine['servers'])} server(s) of yours ($COPILOT_HOME/{USER_FILE}, "
                  "this machine's lock, never committed)" if "lock" in mine else
                  f"your servers ($COPILOT_HOME/{USER_FILE}) were not listed: {mine.get('error')}")
    return EXIT_OK


def _refresh_user_lock(workspace: Path, timeout: float, err: Callable[[str], None], out: dict[str, Any]) -> None:
    """Repo scope: list the user's own servers again into this machine's lock of them (what runs read)."""
    try:
        committed = read_lock(workspace) if (workspace / LOCK_FILE).is_file() else None
        exclude = set(read_exclusions(workspace)) | set((committed or empty_lock())["servers"])
        lock, path = cached_lock(workspace, os.environ, exclude=exclude, timeout=timeout, force=True, progress=err,
                                 user_only=True)
    except Exception as exc:  # noqa: BLE001 - the committed lock is written whatever happens here
        out["error"] = str(exc)
        return
    out["lock"] = str(path)
    out["servers"] = {n: {"status": e.get("status"), "reason": e.get("last_failure") or e.get("reason"),
                          "tools": [t["name"] for t in e.get("tools", [])]} for n, e in lock["servers"].items()}


def _machine_local() -> bool:
    """A global or plugin install: its lock for a repository is this machine's (never one the repository ships)."""
    return Settings.load().scope != "repo"


def _discover_machine_lock(workspace: Path, timeout: float, check: bool, as_json: bool,
                           err: Callable[[str], None]) -> int:
    exclude = Settings.load().mcp_exclude
    loaded = load_servers(workspace, os.environ)
    if check:
        path = cache_path(workspace, os.environ)
        lock = parse_lock(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else None
        servers = {n: c for n, c in loaded.servers.items() if n not in exclude}
        return _report_check(lock, servers, loaded, str(path), as_json, err)
    for problem in loaded.problems:
        err(f"{problem.severity}: {problem}")
    lock, path = cached_lock(workspace, os.environ, exclude=exclude, timeout=timeout, force=True, progress=err)
    entries = lock["servers"]
    failed = sorted(n for n, e in entries.items() if e.get("status") != "ok")
    if as_json:
        print(json.dumps({"lock": str(path), "servers": {n: {"status": e.get("status"), "reason": e.get("reason"),
                                                              "tools": [t["name"] for t in e.get("tools", [])]}
                                                          for n, e in entries.items()}}, indent=2, sort_keys=True))
    else:
        print(f"wrote {path}: {len(entries)} server(s), {sum(len(e.get('tools', [])) for e in entries.values())} "
              f"tool(s)" + (f", {len(failed)} failed ({', '.join(failed)})" if failed else "")
              + " (this machine's lock for the repository: a global or plugin install keeps one per repository)")
    return EXIT_OK


def _check(workspace: Path, as_json: bool, err: Callable[[str], None]) -> int:
    loaded, servers, _excluded = active_servers(workspace, os.environ)
    return _report_check(read_lock(workspace), servers, loaded, str(LOCK_FILE), as_json, err)


def _report_check(lock: Mapping[str, Any] | None, servers: Mapping[str, ServerConfig], loaded: LoadedConfig,
                  shown: str, as_json: bool, err: Callable[[str], None]) -> int:
    """``--check``: how the configured ``servers`` differ from ``lock`` (starts nothing); exit 1 when they do."""
    # a file the CLI cannot read is said as such (not as servers that vanished): the CLI starts none of its servers
    diffs = [f"{p} (the Copilot CLI skips the whole file)" for p in loaded.errors if not p.key]
    diffs += differences(lock, servers)
    failed = sorted(n for n, e in (lock or empty_lock())["servers"].items() if e.get("status") != "ok")
    if as_json:
        print(json.dumps({"ok": not diffs, "lock": shown, "differences": diffs, "failed_in_lock": failed,
                          "problems": [str(p) for p in loaded.problems]}, indent=2, sort_keys=True))
    else:
        for problem in loaded.problems:
            err(f"{problem.severity}: {problem}")
        for line in diffs:
            print(f"differs: {line}")
        if failed:
            err(f"note: the lock records failed server(s): {', '.join(failed)}")
        print(f"{shown} is out of date; run `codeact discover`" if diffs
              else f"{shown} matches the configured MCP servers")
    return EXIT_PROGRAM_ERROR if diffs else EXIT_OK
